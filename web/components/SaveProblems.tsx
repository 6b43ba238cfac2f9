import type { ApiFieldErrors } from "./FieldError";

/**
 * Why an editor's save was refused: "The form was not saved: 2 settings need a change (marked
 * above)." with each field's problem (in `say`'s words, else the API's), or the API's own
 * words when no field is named.
 */
export function SaveProblems(props: { errors: ApiFieldErrors; error: string; what: string; one: string; many: string; say?: (problem: { field: string; message: string }) => string }) {
  const n = props.errors.length;
  return n ? (
    <div class="error" role="alert">
      <p>
        The {props.what} was not saved: {n === 1 ? `one ${props.one} needs` : `${n} ${props.many} need`} a change (marked above).
      </p>
      <ul>
        {props.errors.map((x) => (
          <li key={x.field + x.message}>{props.say ? props.say(x) : x.message}</li>
        ))}
      </ul>
    </div>
  ) : props.error ? (
    <p class="error" role="alert">{props.error}</p>
  ) : null;
}
