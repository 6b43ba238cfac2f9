import { errorsFor } from "../form-protection";

export type ApiFieldErrors = ReadonlyArray<{ field: string; message: string }>;

/** The API's messages for one input, shown under it (and named by its aria-describedby). */
export function FieldError(props: { errors: ApiFieldErrors; name: string; id: string }) {
  const msgs = errorsFor(props.errors, props.name);
  return msgs.length ? (
    <small id={props.id} class="field-error">
      {msgs.join(" ")}
    </small>
  ) : null;
}

/** aria props for an input whose errors `FieldError` shows. */
export function errAttrs(errors: ApiFieldErrors, name: string, id: string, help?: string) {
  const bad = errorsFor(errors, name).length > 0;
  const describedBy = [help, bad ? id : undefined].filter(Boolean).join(" ");
  return { "aria-invalid": bad ? ("true" as const) : undefined, "aria-describedby": describedBy || undefined };
}
