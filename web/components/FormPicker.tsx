import { useSignal, type Signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, errorText } from "../api";

/** A form as a picker offers it. */
export type FormChoice = { id: string; name: string };

/**
 * The account's forms for a picker (GET /v1/forms, its first 100), read when the page opens:
 * [] until they come. A page that cannot work without them passes `onError` (the API's words);
 * the others show the picker with only its "any form" choice. `onLoad` runs with the forms once
 * they come (the automation editor picks the first for a new automation).
 */
export function useFormChoices(options: { onLoad?: (forms: FormChoice[]) => void; onError?: (message: string) => void } = {}): Signal<FormChoice[]> {
  const forms = useSignal<FormChoice[]>([]);
  useEffect(() => {
    api
      .get("/v1/forms", { query: { limit: 100 } })
      .then((r) => {
        forms.value = r.data.forms.map((f) => ({ id: f.id, name: f.name }));
        options.onLoad?.(forms.value);
      })
      .catch((e) => options.onError?.(errorText(e)));
  }, []);
  return forms;
}

/**
 * A labelled drop-down of the account's forms. `any`: the text of the first choice, "" (every
 * form), as filters have it; `none`: the text shown when there are no forms yet; `aria`: the
 * field's error attributes (errAttrs).
 */
export function FormSelect(props: {
  id: string;
  label: string;
  value: string;
  forms: FormChoice[];
  onChange: (formId: string) => void;
  any?: string;
  none?: string;
  aria?: { "aria-invalid"?: "true"; "aria-describedby"?: string };
}) {
  const { id, label, value, forms, onChange, any, none, aria } = props;
  return (
    <>
      <label for={id}>{label}</label>
      <select {...aria} id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {any !== undefined ? <option value="">{any}</option> : null}
        {none !== undefined && !forms.length ? <option value="">{none}</option> : null}
        {forms.map((f) => (
          <option key={f.id} value={f.id}>
            {f.name}
          </option>
        ))}
      </select>
    </>
  );
}
