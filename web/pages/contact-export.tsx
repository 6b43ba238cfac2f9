import { useEffect } from "preact/hooks";
import { useSignal } from "@preact/signals";
import { api, can, isPerson } from "../api";
import { search } from "../router";
import { BASE_COLUMNS } from "../../src/domain/contact-export";

/** The list's filters an export keeps (GET /v1/contacts/export takes the same). */
export const EXPORT_FILTER_KEYS = ["search", "status", "tags", "formId"] as const;

const FORMATS: Array<[string, string]> = [
  ["xlsx", "Excel (.xlsx)"],
  ["csv", "CSV (.csv)"],
  ["json", "JSON (for other programs)"],
];
/** Column names in the owner's words; `customFields` is one column per custom field. */
const FIELD_LABELS: Record<string, string> = {
  id: "Contact id",
  firstName: "First name",
  lastName: "Last name",
  phoneNumber: "Phone number",
  email: "E-mail",
  status: "Status",
  formId: "Form id",
  formName: "Form",
  tags: "Tags",
  source: "Source",
  notes: "Notes",
  messageCount: "Messages sent",
  lastContactedAt: "Last texted",
  lastResponseAt: "Last reply",
  optedOut: "Opted out",
  optedOutAt: "Opted out on",
  createdAt: "Added on",
  updatedAt: "Last changed",
  customFields: "Custom fields (every one)",
};
const FIELDS = [...BASE_COLUMNS, "customFields"];
const DEFAULT_FIELDS = new Set(["firstName", "lastName", "phoneNumber", "email", "status", "tags", "customFields"]);

/**
 * Contacts → Export: the file format, whether to keep the list's filters, and the columns. The
 * download is GET /v1/contacts/export with those choices (a link: the browser saves the file).
 */
export function ContactExport() {
  const params = new URLSearchParams(search.value);
  const filters = EXPORT_FILTER_KEYS.filter((k) => params.get(k)).map((k) => [k, params.get(k)!] as const);
  const format = useSignal("xlsx");
  const keepFilters = useSignal(true);
  const fields = useSignal<Set<string>>(new Set(DEFAULT_FIELDS));
  const formName = useSignal<string | null>(null);
  useEffect(() => {
    const formId = params.get("formId");
    if (formId) api.get("/v1/forms/{id}", { path: { id: formId } }).then((r) => (formName.value = r.data.form?.name ?? null)).catch(() => {});
  }, []);

  const describe = (k: string, v: string) =>
    k === "search" ? `matching “${v}”` : k === "status" ? `with status ${v}` : k === "tags" ? `tagged ${v.split(",").join(" and ")}` : `from the form ${formName.value ?? v}`;
  const q = new URLSearchParams({ format: format.value });
  if (keepFilters.value) for (const [k, v] of filters) q.set(k, v);
  const chosen = FIELDS.filter((f) => fields.value.has(f));
  q.set("fields", chosen.join(","));
  const back = `/contacts${filters.length ? "?" + new URLSearchParams(filters as unknown as string[][]) : ""}`;

  function toggle(f: string, on: boolean) {
    const s = new Set(fields.value);
    if (on) s.add(f);
    else s.delete(f);
    fields.value = s;
  }
  return (
    <section>
      <p>
        <a href={back}>← All contacts</a>
      </p>
      <h1>Contacts: export</h1>
      {can("contacts.export") ? null : (
        <p class="warning" role="note">
          {isPerson() ? "Only an owner or an admin of the account can export contacts." : "Exporting contacts needs an admin key: sign in with one to download the file."}
        </p>
      )}
      <fieldset class="choices">
        <legend>File format</legend>
        {FORMATS.map(([v, label]) => (
          <label key={v}>
            <input type="radio" name="export-format" value={v} checked={format.value === v} onChange={() => (format.value = v)} />
            {label}
          </label>
        ))}
      </fieldset>
      <fieldset class="choices">
        <legend>Which contacts</legend>
        {filters.length ? (
          <>
            <label>
              <input type="radio" name="export-which" checked={keepFilters.value} onChange={() => (keepFilters.value = true)} />
              Only those {filters.map(([k, v]) => describe(k, v)).join(", ")} (as in the list)
            </label>
            <label>
              <input type="radio" name="export-which" checked={!keepFilters.value} onChange={() => (keepFilters.value = false)} />
              Every contact
            </label>
          </>
        ) : (
          <p>
            Every contact. To export only some, filter the <a href="/contacts">list</a> first (search, status, tags, form) and choose Export from there.
          </p>
        )}
      </fieldset>
      <fieldset class="choices">
        <legend>Columns to include</legend>
        {FIELDS.map((f) => (
          <label key={f}>
            <input type="checkbox" checked={fields.value.has(f)} onChange={(e) => toggle(f, (e.target as HTMLInputElement).checked)} />
            {FIELD_LABELS[f] ?? f}
          </label>
        ))}
        <p>
          <button type="button" class="secondary small" onClick={() => (fields.value = new Set(FIELDS))}>Choose all</button>{" "}
          <button type="button" class="secondary small" onClick={() => (fields.value = new Set(DEFAULT_FIELDS))}>Back to the usual ones</button>
        </p>
      </fieldset>
      {!can("contacts.export") ? null : chosen.length ? (
        <p>
          <a class="button-link" href={`/v1/contacts/export?${q}`} download data-testid="export-download">
            Download the file
          </a>
        </p>
      ) : (
        <p class="error" role="alert">Choose at least one column.</p>
      )}
    </section>
  );
}
