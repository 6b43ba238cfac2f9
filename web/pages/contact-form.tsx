import { useSignal } from "@preact/signals";
import { api, ApiError, errorText, fieldErrorsOf } from "../api";
import type { Contact, RequestBody } from "../api-types";
import { FieldError, errAttrs, type ApiFieldErrors } from "../components/FieldError";
import { nameOf, parseTags, splitName } from "../contact-names";

export { nameOf, parseTags, splitName };

/**
 * The contact's fields as a person types them: "Add contact" and the contact page's edit form
 * (docs/contacts.md, "Adding and correcting contacts"). The server normalises and checks the phone
 * exactly as the webhook does; a number another contact has is answered with a link to them.
 */
const STATUSES: Array<Contact["status"]> = ["new", "contacted", "responded", "converted"];

/** The API's field names, as the form labels them, for its messages. */
const LABELS: Array<[RegExp, string]> = [
  [/\bphoneNumber\b/g, "Phone number"],
  [/\bfirstName\b/g, "Name (first word)"],
  [/\blastName\b/g, "Name (after the first word)"],
  [/\bemail\b/g, "E-mail"],
  [/\btags\b/g, "Tags"],
  [/\bnotes\b/g, "Notes"],
  [/\btimeZone\b/g, "Time zone"],
  [/\bcustomFields\b\.?/g, "Other details: "],
];
const plain = (msg: string) => LABELS.reduce((m, [re, label]) => m.replace(re, label), msg);

type Detail = { name: string; value: string };

/** The browser's list of IANA zones, offered as the customer's own (docs/contacts.md, "Time zone"). */
const ZONES: string[] = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];

/** Another contact has the number: who, to link to. */
type Clash = { id: string; label: string };

export function ContactForm(props: { contact?: Contact; submitLabel: string; onSaved: (c: Contact) => void; onCancel?: () => void }) {
  const c = props.contact;
  const startName = c ? nameOf(c) : "";
  const name = useSignal(startName);
  const phone = useSignal(c?.phoneNumber ?? "");
  const email = useSignal(c?.email ?? "");
  const status = useSignal<Contact["status"]>(c?.status ?? "new");
  const tags = useSignal(c?.tags.join(", ") ?? "");
  const notes = useSignal(c?.notes ?? "");
  const timeZone = useSignal(c?.timeZone ?? "");
  const rows = useSignal<Detail[]>(Object.entries(c?.customFields ?? {}).map(([name, value]) => ({ name, value: String(value) })));
  const errors = useSignal<ApiFieldErrors>([]);
  const error = useSignal("");
  const clash = useSignal<Clash | null>(null);
  const busy = useSignal(false);
  const idp = c ? `edit-${c.id.slice(0, 8)}` : "new";

  function body(): RequestBody<"/v1/contacts", "post"> & RequestBody<"/v1/contacts/{id}", "put"> {
    const custom: Record<string, string | null> = {};
    for (const r of rows.value) if (r.name.trim()) custom[r.name.trim()] = r.value;
    // Details the person removed are deleted (customFields merge; null deletes a key).
    for (const k of Object.keys(c?.customFields ?? {})) if (!(k in custom)) custom[k] = null;
    const b: ReturnType<typeof body> = {
      phoneNumber: phone.value,
      // Sent only when changed: a stored first name of two words ("Mary Ann") is kept as it is.
      ...(name.value.trim() !== startName ? splitName(name.value) : {}),
      email: email.value.trim() || null,
      tags: parseTags(tags.value),
      notes: notes.value.trim() || null,
      timeZone: timeZone.value.trim() || null,
      customFields: custom,
    };
    if (c) b.status = status.value;
    else b.consent = { source: "manual" };
    return b;
  }

  async function save(e: Event) {
    e.preventDefault();
    if (busy.value) return;
    busy.value = true;
    errors.value = [];
    error.value = "";
    clash.value = null;
    try {
      const r = c ? await api.put("/v1/contacts/{id}", { path: { id: c.id }, json: body() }) : await api.post("/v1/contacts", { json: body() });
      props.onSaved(r.data.contact);
    } catch (err) {
      // One Name field holds both names: its problems are shown under it.
      errors.value = fieldErrorsOf(err).map((x) => ({ ...x, field: x.field === "lastName" ? "firstName" : x.field, message: plain(x.message) }));
      if (err instanceof ApiError && err.code === "DUPLICATE_PHONE_NUMBER" && typeof err.body?.details?.existingContactId === "string") {
        const id = err.body.details.existingContactId as string;
        clash.value = { id, label: "that contact" };
        api.get("/v1/contacts/{id}", { path: { id } })
          .then((o) => (clash.value = { id, label: nameOf(o.data.contact) || o.data.contact.phoneNumber }))
          .catch(() => {});
      } else error.value = errors.value.length ? "Please check the marked fields." : plain(errorText(err));
    } finally {
      busy.value = false;
    }
  }

  const text = (id: string, label: string, name: string, sig: { value: string }, extra: Record<string, unknown> = {}) => (
    <span class="field">
      <label for={`${idp}-${id}`}>{label}</label>
      <input id={`${idp}-${id}`} value={sig.value} onInput={(e) => (sig.value = (e.target as HTMLInputElement).value)} {...errAttrs(errors.value, name, `${idp}-${id}-err`)} {...extra} />
      <FieldError errors={errors.value} name={name} id={`${idp}-${id}-err`} />
    </span>
  );

  return (
    <form class="contact-form" onSubmit={save} aria-label={props.submitLabel}>
      <div class="contact-grid">
        {text("name", "Name", "firstName", name, { maxLength: 101, autoComplete: "off" })}
        {text("phone", "Phone number", "phoneNumber", phone, { required: true, type: "tel", inputMode: "tel", placeholder: "(415) 555-0134 or +44 7700 900123" })}
        {text("email", "E-mail", "email", email, { type: "email", autoComplete: "off" })}
        {c ? (
          <span class="field">
            <label for={`${idp}-status`}>Status</label>
            <select id={`${idp}-status`} value={status.value} onChange={(e) => (status.value = (e.target as HTMLSelectElement).value as Contact["status"])}>
              {STATUSES.map((s) => (
                <option key={s} value={s}>{s}</option>
              ))}
            </select>
          </span>
        ) : null}
        {text("tags", "Tags", "tags", tags, { placeholder: "vip, spring (commas between)" })}
        {text("tz", "Time zone (leave empty for the form's)", "timeZone", timeZone, { list: `${idp}-zones`, autoComplete: "off", placeholder: "Europe/London" })}
        <datalist id={`${idp}-zones`}>
          {ZONES.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
      </div>
      {clash.value ? (
        <p class="error" role="alert">
          Another contact already has this phone number: <a href={`/contacts/${encodeURIComponent(clash.value.id)}`}>{clash.value.label}</a>.
        </p>
      ) : null}
      <span class="field wide">
        <label for={`${idp}-notes`}>Notes</label>
        <textarea id={`${idp}-notes`} rows={3} maxLength={5000} value={notes.value} onInput={(e) => (notes.value = (e.target as HTMLTextAreaElement).value)} {...errAttrs(errors.value, "notes", `${idp}-notes-err`)} />
        <FieldError errors={errors.value} name="notes" id={`${idp}-notes-err`} />
      </span>
      <fieldset class="custom-fields">
        <legend>Other details</legend>
        {rows.value.map((r, i) => (
          <div class="detail-row" key={i}>
            <span class="field">
              <label for={`${idp}-cf-name-${i}`}>What (detail {i + 1})</label>
              <input
                id={`${idp}-cf-name-${i}`}
                value={r.name}
                maxLength={100}
                placeholder="Dog's name"
                onInput={(e) => (rows.value = rows.value.map((x, j) => (j === i ? { ...x, name: (e.target as HTMLInputElement).value } : x)))}
              />
            </span>
            <span class="field">
              <label for={`${idp}-cf-value-${i}`}>Value (detail {i + 1})</label>
              <input
                id={`${idp}-cf-value-${i}`}
                value={r.value}
                maxLength={500}
                onInput={(e) => (rows.value = rows.value.map((x, j) => (j === i ? { ...x, value: (e.target as HTMLInputElement).value } : x)))}
              />
            </span>
            <button type="button" class="secondary" onClick={() => (rows.value = rows.value.filter((_, j) => j !== i))}>
              Remove detail {i + 1}
            </button>
          </div>
        ))}
        <FieldError errors={errors.value} name="customFields" id={`${idp}-cf-err`} />
        <button type="button" class="secondary" onClick={() => (rows.value = [...rows.value, { name: "", value: "" }])}>
          Add a detail
        </button>
      </fieldset>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      <div class="dialog-actions">
        <button type="submit" disabled={busy.value}>{props.submitLabel}</button>
        {props.onCancel ? (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
