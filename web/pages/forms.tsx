import { FormsOverHttp } from "./settings-server";
import { useEffect } from "preact/hooks";
import { useSignal, useComputed } from "@preact/signals";
import { api, can, errorText, fieldErrorsOf } from "../api";
import { useResource } from "../resource";
import { act } from "../act";
import { fmtDate } from "../format";
import { navigate, path } from "../router";
import { smsInfo } from "../../src/domain/sms-encoding";
import { PRIORITIES } from "../../src/domain/statuses";
import { TextSize } from "../components/TextSize";
import { InsertField } from "../components/InsertField";
import { renderTemplate } from "../../src/domain/template";
import { Confirm } from "../components/Confirm";
import { CopyButton } from "../components/CopyButton";

import { draftFromSettings, recommendedDraft, settingsFromDraft, type ProtectionDraft } from "../form-protection";
import { ProtectionFields } from "./form-protection";
import { errAttrs, FieldError } from "../components/FieldError";
import { CardTable } from "../components/CardTable";
import { TestSubmission } from "./form-test";
import { labelFrom, plainProblem } from "../plain-problems";

/** The builder's labels, for its list of problems (the API's names stay out of sight). */
const BUILDER_LABELS: Record<string, string> = {
  name: "Form name",
  description: "Description (for you)",
  fields: "Fields of the form",
  messageTemplate: "Text message template",
  "settings.timezone": "Time zone",
  "settings.delayMinutes": "Delay before sending (minutes)",
  "settings.rateLimitPerDay": "Daily limit",
  "settings.defaultPriority": "Priority",
  "settings.quietHours": "Quiet hours",
  "settings.duplicateWindowMinutes": "Ignore repeats of the same number for (minutes)",
  "settings.ipLimitPerMinute": "Submissions per visitor per minute",
  "settings.recipientLimitPerDay": "Texts per phone number per day",
  "settings.allowedCountries": "Phone numbers only from (country codes)",
  "settings.allowedOrigins": "Allowed websites",
  "settings.honeypotField": "Spam trap field name",
  "settings.captcha": "Captcha",
  "settings.captcha.secret": "Captcha secret key",
  "settings.captcha.siteKey": "Captcha site key (public)",
  "settings.successUrl": "Thank-you page (address)",
  "settings.errorUrl": "Error page (address)",
  "settings.allowLinksInValues": "Allow links in what visitors type",
  "settings.consentField": "Consent box",
};
const builderFixed = labelFrom(BUILDER_LABELS);
/** `fields[2].label` → "Field 3 label", as the builder labels it; the rest from the list above. */
function builderLabel(field: string): string | null {
  const m = /^fields\[(\d+)\](?:\.(name|type|label|validation))?/.exec(field);
  if (m) return `Field ${Number(m[1]) + 1} ${m[2] === "validation" ? "maximum length" : (m[2] ?? "")}`.trim();
  return builderFixed(field);
}
import type { Form, FormField, FormSummary } from "../api-types";

/** The forms pages' own words when the browser will not copy. */
const COPY_REFUSED = "Copying is not allowed here: select the text and copy it.";

const FIELD_TYPES = ["text", "longText", "email", "phone", "number", "url", "date", "timezone"];
/** The field types as the builder names them. */
const TYPE_NAMES: Record<string, string> = { text: "Short text", longText: "Long text (several lines)", email: "E-mail", phone: "Phone", number: "Number", url: "Web address", date: "Date", timezone: "Time zone (the customer's own)" };
/** The consent checkbox's name when the builder adds one. */
const CONSENT_FIELD = "consent";
const SAMPLE_BY_TYPE: Record<string, string> = { text: "Sample", email: "ada@example.com", phone: "+14155550123", number: "42", url: "https://example.com", date: "2026-05-01", timezone: "Europe/London" };
const SAMPLE_BUILTINS: Record<string, string> = { firstName: "Ada", lastName: "Lovelace", fullName: "Ada Lovelace", email: "ada@example.com", phoneNumber: "+14155550123", source: "website" };


/** The account's home country (GET /v1/account), read once per page load: every API call counts against the key's limit. */
let homeCountryOnce: Promise<string> | undefined;
function homeCountry(): Promise<string> {
  homeCountryOnce ??= api.get("/v1/account")
    .then((r) => r.data.account.defaultCountry as string)
    .catch(() => ((homeCountryOnce = undefined), "US"));
  return homeCountryOnce;
}

export function Forms() {
  const id = path.value.split("/")[2];
  if (id === "new") {
    if (!can("forms.write")) return <ReadOnly text="Only an owner or an admin of the account can make forms." />;
    return <FormEditor />;
  }
  return id ? <FormEditor id={decodeURIComponent(id)} /> : <FormList />;
}

function ReadOnly(props: { text: string }) {
  return (
    <section>
      <p>
        <a href="/forms">← All forms</a>
      </p>
      <h1>Forms</h1>
      <p class="notice">{props.text}</p>
    </section>
  );
}

function FormList() {
  const notice = useSignal("");
  const deleting = useSignal<FormSummary | null>(null);
  const rotating = useSignal<FormSummary | null>(null);
  const typed = useSignal("");
  const { data: forms, error, load } = useResource(() => api.get("/v1/forms", { query: { limit: 100, counts: true } }).then((r) => r.data.forms));
  async function setActive(f: FormSummary, isActive: boolean) {
    // Shown at once: a re-render while the change is on its way must not flip the box back.
    forms.value = forms.value?.map((x) => (x.id === f.id ? { ...x, isActive } : x)) ?? null;
    await act(notice, () => api.put("/v1/forms/{id}", { path: { id: f.id }, json: { isActive } }), () => `${f.name} ${isActive ? "accepts submissions again" : "no longer accepts submissions"}.`, load);
  }
  async function remove() {
    const f = deleting.value;
    deleting.value = null;
    if (!f || typed.value.trim() !== f.name) return;
    await act(notice, () => api.delete("/v1/forms/{id}", { path: { id: f.id } }), () => `${f.name} deleted, with its contacts and messages.`, load);
  }
  async function rotate() {
    const f = rotating.value;
    rotating.value = null;
    if (!f) return;
    await act(notice, () => api.post("/v1/forms/{id}/rotate-webhook", { path: { id: f.id } }), () => `${f.name} has a new webhook address; the old one stopped working. Update your website.`, load);
  }
  const admin = can("forms.write");
  return (
    <section>
      <div class="page-head">
        <h1>Forms</h1>
        {admin ? (
          <a class="button-link" href="/forms/new">New form</a>
        ) : null}
      </div>
      <p>Point a website form (or any tool) at a form's webhook address: each submission saves the contact and queues the text.</p>
      <FormsOverHttp />
      <p aria-live="polite" class="notice-line">{notice.value}</p>
      {error.value ? <p class="error" role="alert">{error.value}</p> : null}
      {forms.value ? (
        forms.value.length ? (
          <CardTable columns={["Form", "Webhook address", "Texts", "Converted", "Accepting", "Created", admin && "Actions"]}>
            {forms.value.map((f) => (
              <tr key={f.id} data-form-id={f.id}>
                <td data-label="Form"><a href={`/forms/${encodeURIComponent(f.id)}`}>{f.name}</a></td>
                <td class="webhook" data-label="Webhook address">
                  <code>{f.webhookUrl}</code>{" "}
                  <CopyButton text={f.webhookUrl} onDone={(m) => (notice.value = m)} refused={COPY_REFUSED} label={`Copy the webhook address of ${f.name}`}>
                    Copy
                  </CopyButton>
                </td>
                <td class="num" data-label="Texts">{f.counts ? (f.counts.messages ? `${f.counts.messagesSent} sent of ${f.counts.messages}` : "none yet") : "—"}</td>
                <td class="num" data-label="Converted" title="Contacts of this form whose status is converted">
                  {f.counts ? (f.counts.contacts ? `${f.counts.converted} of ${f.counts.contacts} (${f.counts.conversionRate}%)` : "no contacts yet") : "—"}
                </td>
                <td data-label="Accepting">
                  {admin ? (
                    <input type="checkbox" aria-label={`${f.name} accepts submissions`} checked={f.isActive} onChange={(e) => setActive(f, (e.target as HTMLInputElement).checked)} />
                  ) : f.isActive ? (
                    "yes"
                  ) : (
                    "no"
                  )}
                </td>
                <td data-label="Created">{fmtDate(f.createdAt)}</td>
                {admin ? (
                  <td class="actions" data-label="Actions">
                    <button type="button" class="secondary" aria-label={`New webhook address for ${f.name}`} onClick={() => (rotating.value = f)}>
                      New webhook address
                    </button>{" "}
                    <button type="button" class="secondary" aria-label={`Delete ${f.name}`} onClick={() => ((typed.value = ""), (deleting.value = f))}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </CardTable>
        ) : (
          <p>No forms yet.{admin ? " Create one with “New form”." : ""}</p>
        )
      ) : null}
      <Confirm
        open={rotating.value !== null}
        title={`Make a new webhook address for ${rotating.value?.name ?? ""}?`}
        body="The current address stops working at once: your website's form will fail until you paste the new address (or the new embed code) into it. Contacts, messages and statistics stay with the form."
        action="Make a new address"
        onConfirm={rotate}
        onCancel={() => (rotating.value = null)}
      />
      <TypedConfirm
        form={deleting.value}
        typed={typed.value}
        onType={(v) => (typed.value = v)}
        onConfirm={remove}
        onCancel={() => (deleting.value = null)}
      />
    </section>
  );
}

/** Deleting a form deletes its contacts and messages: the owner types its name to confirm. */
function TypedConfirm(props: { form: FormSummary | null; typed: string; onType: (v: string) => void; onConfirm: () => void; onCancel: () => void }) {
  const f = props.form;
  return (
    <dialog
      ref={(d) => {
        if (!d) return;
        if (f && !d.open) d.showModal();
        if (!f && d.open) d.close();
      }}
      aria-labelledby="delete-title"
      class="confirm"
      onCancel={props.onCancel}
    >
      <h2 id="delete-title">Delete {f?.name}?</h2>
      <p>This deletes the form, its contacts and their messages, for good. Type the form's name to confirm.</p>
      <label for="delete-name">Form name</label>
      <input id="delete-name" value={props.typed} onInput={(e) => props.onType((e.target as HTMLInputElement).value)} autocomplete="off" />
      <div class="dialog-actions">
        <button type="button" class="danger" disabled={!f || props.typed.trim() !== f.name} onClick={props.onConfirm}>
          Delete form
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>Keep it</button>
      </div>
    </dialog>
  );
}

const zones = (() => {
  try {
    return (Intl as any).supportedValuesOf("timeZone") as string[];
  } catch {
    return ["UTC"];
  }
})();

function FormEditor(props: { id?: string }) {
  const name = useSignal("");
  const description = useSignal("");
  const template = useSignal("Hi {{firstName}}, thanks for contacting us! We will reply soon.");
  const fields = useSignal<FormField[]>([{ name: "firstName", type: "text", label: "First name", required: false }]);
  const settings = useSignal<Record<string, any>>({ timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC", delayMinutes: 0, defaultPriority: "normal" });
  const draft = useSignal<ProtectionDraft>(draftFromSettings({}));
  const country = useSignal("US");
  const form = useSignal<Form | null>(null);
  const embed = useSignal("");
  /** "request": no server address is set, so the addresses shown are the ones this browser used. */
  const addressSource = useSignal("");
  const error = useSignal("");
  const fieldErrors = useSignal<Array<{ field: string; message: string }>>([]);
  const notice = useSignal("");
  const rotating = useSignal(false);

  useEffect(() => {
    if (!props.id) {
      // A new form starts with the recommended protections; "numbers only from" is the account's home country.
      draft.value = recommendedDraft(draft.value, country.value);
      // The home country may arrive after the owner started typing: only the country list is
      // updated, and only while it still shows the placeholder (nothing typed is replaced).
      const initial = draft.value.allowedCountries;
      homeCountry().then((c) => {
        country.value = c;
        if (draft.value.allowedCountries === initial) draft.value = { ...draft.value, allowedCountries: c };
      });
      return;
    }
    homeCountry().then((c) => (country.value = c));
    api.get("/v1/forms/{id}", { path: { id: props.id } })
      .then((r) => {
        const f: Form = r.data.form;
        form.value = f;
        name.value = f.name;
        description.value = f.description ?? "";
        template.value = f.messageTemplate;
        fields.value = f.fields;
        settings.value = f.settings;
        draft.value = draftFromSettings(f.settings);
      })
      .catch((e) => (error.value = errorText(e)));
    api.get("/v1/forms/{id}/embed", { path: { id: props.id } })
      .then((r) => ((embed.value = r.data.html), (addressSource.value = r.data.addressSource)))
      .catch(() => {});
  }, [props.id]);

  const preview = useComputed(() => {
    // A Map and own keys: a field named `constructor` or `__proto__` previews like any other.
    const vars = new Map(Object.entries({ ...SAMPLE_BUILTINS, formName: name.value || "Your form", date: "May 1, 2026", time: "9:30 AM" }));
    for (const f of fields.value) if (!Object.hasOwn(SAMPLE_BUILTINS, f.name)) vars.set(f.name, f.label ? `(${f.label})` : (Object.hasOwn(SAMPLE_BY_TYPE, f.type) ? SAMPLE_BY_TYPE[f.type] : "Sample"));
    const text = renderTemplate(template.value, vars).content;
    return { text, info: smsInfo(text), chars: [...text].length };
  });

  function setField(i: number, patch: Partial<FormField>) {
    fields.value = fields.value.map((f, j) => (j === i ? { ...f, ...patch } : f));
  }
  function setSetting(k: string, v: unknown) {
    settings.value = { ...settings.value, [k]: v };
  }
  async function save(e: Event) {
    e.preventDefault();
    error.value = "";
    notice.value = "";
    fieldErrors.value = [];
    const s = { ...settings.value, ...settingsFromDraft(draft.value) };
    delete s.protection;
    const body = { name: name.value.trim(), description: description.value.trim() || null, messageTemplate: template.value, fields: fields.value, settings: s };
    try {
      const r = props.id
        ? await api.put("/v1/forms/{id}", { path: { id: props.id }, json: body })
        : await api.post("/v1/forms", { json: body });
      notice.value = props.id ? "Form saved." : "Form created.";
      if (!props.id) navigate(`/forms/${encodeURIComponent(r.data.form.id)}`, true);
      else {
        form.value = r.data.form;
        settings.value = r.data.form.settings;
        draft.value = draftFromSettings(r.data.form.settings);
      }
    } catch (err) {
      error.value = errorText(err);
      fieldErrors.value = fieldErrorsOf(err);
    }
  }
  async function rotate() {
    rotating.value = false;
    if (!props.id) return;
    const id = props.id;
    await act(
      notice,
      () => api.post("/v1/forms/{id}/rotate-webhook", { path: { id } }),
      (r) => {
        form.value = { ...form.value!, webhookUrl: r.data.webhookUrl };
        api.get("/v1/forms/{id}/embed", { path: { id } }).then((x) => (embed.value = x.data.html));
        return "New webhook address made: the old one stopped working. Update your website.";
      },
    );
  }

  const p = preview.value;
  // Staff and viewers read a form (and may send a test); only owners and admins change it.
  const canEdit = can("forms.write");
  return (
    <section>
      <p>
        <a href="/forms">← All forms</a>
      </p>
      <h1>Forms: {props.id ? (canEdit ? `edit ${form.value?.name ?? ""}` : form.value?.name ?? "") : "new form"}</h1>
      {canEdit ? null : <p class="notice" data-testid="form-read-only">You can read this form and send it a test; only an owner or an admin of the account can change it.</p>}
      <form class="editor" onSubmit={save}>
        <div class="editor-main">
          <fieldset class="plain" disabled={!canEdit}>
          <span class="field wide">
            <label for="form-name">Form name</label>
            <input id="form-name" required maxLength={100} value={name.value} onInput={(e) => (name.value = (e.target as HTMLInputElement).value)} {...errAttrs(fieldErrors.value, "name", "form-name-error")} />
            <FieldError errors={fieldErrors.value} name="name" id="form-name-error" />
          </span>
          <span class="field wide">
            <label for="form-description">Description (for you)</label>
            <input id="form-description" value={description.value} onInput={(e) => (description.value = (e.target as HTMLInputElement).value)} {...errAttrs(fieldErrors.value, "description", "form-description-error")} />
            <FieldError errors={fieldErrors.value} name="description" id="form-description-error" />
          </span>
          <fieldset>
            <legend>Fields of the form (besides the phone number)</legend>
            <FieldError errors={fieldErrors.value.filter((x) => x.field === "fields")} name="fields" id="fields-error" />
            {fields.value.map((f, i) => (
              <div class="field-row" key={i}>
                <span class="field">
                  <label for={`field-name-${i}`}>Field {i + 1} name</label>
                  <input id={`field-name-${i}`} required value={f.name} onInput={(e) => setField(i, { name: (e.target as HTMLInputElement).value.trim() })} {...errAttrs(fieldErrors.value, `fields[${i}].name`, `field-name-${i}-error`)} />
                  <FieldError errors={fieldErrors.value} name={`fields[${i}].name`} id={`field-name-${i}-error`} />
                </span>
                <span class="field">
                  <label for={`field-type-${i}`}>Field {i + 1} type</label>
                  <select id={`field-type-${i}`} value={f.type} onChange={(e) => setField(i, { type: (e.target as HTMLSelectElement).value as FormField["type"] })} {...errAttrs(fieldErrors.value, `fields[${i}].type`, `field-type-${i}-error`)}>
                    {FIELD_TYPES.map((t) => (
                      <option key={t} value={t}>{TYPE_NAMES[t] ?? t}</option>
                    ))}
                  </select>
                  <FieldError errors={fieldErrors.value} name={`fields[${i}].type`} id={`field-type-${i}-error`} />
                </span>
                <span class="field">
                  <label for={`field-label-${i}`}>Field {i + 1} label</label>
                  <input id={`field-label-${i}`} value={f.label ?? ""} onInput={(e) => setField(i, { label: (e.target as HTMLInputElement).value || undefined })} {...errAttrs(fieldErrors.value, `fields[${i}].label`, `field-label-${i}-error`)} />
                  <FieldError errors={fieldErrors.value} name={`fields[${i}].label`} id={`field-label-${i}-error`} />
                </span>
                <span class="field">
                  <label for={`field-max-${i}`}>Field {i + 1} maximum length</label>
                  <input
                    id={`field-max-${i}`}
                    type="number"
                    min={1}
                    value={f.validation?.maxLength ?? ""}
                    onInput={(e) => {
                      const v = (e.target as HTMLInputElement).value;
                      const { maxLength: _drop, ...rest } = f.validation ?? {};
                      setField(i, { validation: v ? { ...rest, maxLength: Number(v) } : Object.keys(rest).length ? rest : undefined });
                    }}
                    {...errAttrs(fieldErrors.value, `fields[${i}].validation`, `field-max-${i}-error`)}
                  />
                  <FieldError errors={fieldErrors.value} name={`fields[${i}].validation`} id={`field-max-${i}-error`} />
                </span>
                <label class="check">
                  <input type="checkbox" checked={!!f.required} onChange={(e) => setField(i, { required: (e.target as HTMLInputElement).checked })} /> Field {i + 1} required
                </label>
                <button type="button" class="secondary" aria-label={`Remove field ${i + 1}`} onClick={() => (fields.value = fields.value.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" class="secondary" onClick={() => (fields.value = [...fields.value, { name: "", type: "text", required: false }])}>
              Add a field
            </button>
            <label class="check">
              <input
                type="checkbox"
                checked={typeof settings.value.consentField === "string"}
                aria-describedby="form-consent-help"
                onChange={(e) => setSetting("consentField", (e.target as HTMLInputElement).checked ? (settings.value.consentField ?? CONSENT_FIELD) : null)}
              />{" "}
              Consent box: visitors tick “I agree to receive text messages”
            </label>
            <small class="hint" id="form-consent-help">
              Added to the form's HTML below. A visitor who leaves it unticked is still heard (the request is in Requests), but gets no text.
            </small>
            <FieldError errors={fieldErrors.value} name="settings.consentField" id="form-consent-error" />
          </fieldset>
          <span class="field wide">
            <label for="form-template">Text message template</label>
            <textarea id="form-template" rows={4} maxLength={1600} required value={template.value} onInput={(e) => (template.value = (e.target as HTMLTextAreaElement).value)} {...errAttrs(fieldErrors.value, "messageTemplate", "form-template-error", "template-help")} />
            <small id="template-help">
              To put the customer's own answers in the text, insert a field: it is written as its name in double braces, e.g. {"{{firstName}}"}, and the text
              says “Ada” for a customer called Ada.
            </small>
            <FieldError errors={fieldErrors.value} name="messageTemplate" id="form-template-error" />
          </span>
          <InsertField
            id="form-insert"
            textareaId="form-template"
            value={template.value}
            onChange={(v) => (template.value = v)}
            fields={[
              ...fields.value.filter((f) => f.name).map((f) => [f.name, f.label || f.name] as const),
              ...(fields.value.some((f) => f.name === "fullName") ? [] : [["fullName", "Full name"] as const]),
              ["formName", "The form's name"] as const,
              ["date", "Today's date"] as const,
              ["time", "The time"] as const,
            ]}
          />
          <fieldset>
            <legend>Sending</legend>
            <span class="field">
              <label for="form-zone">Time zone</label>
              <select id="form-zone" value={settings.value.timezone ?? "UTC"} onChange={(e) => setSetting("timezone", (e.target as HTMLSelectElement).value)} {...errAttrs(fieldErrors.value, "settings.timezone", "form-zone-error")}>
                {(zones.includes(settings.value.timezone ?? "UTC") ? zones : [settings.value.timezone ?? "UTC", ...zones]).map((z) => (
                  <option key={z} value={z}>{z}</option>
                ))}
              </select>
              <FieldError errors={fieldErrors.value} name="settings.timezone" id="form-zone-error" />
            </span>
            <span class="field">
              <label for="form-delay">Delay before sending (minutes)</label>
              <input id="form-delay" type="number" min={0} value={settings.value.delayMinutes ?? 0} onInput={(e) => setSetting("delayMinutes", Number((e.target as HTMLInputElement).value))} {...errAttrs(fieldErrors.value, "settings.delayMinutes", "form-delay-error")} />
              <FieldError errors={fieldErrors.value} name="settings.delayMinutes" id="form-delay-error" />
            </span>
            <span class="field">
              <label for="form-daily">Daily limit (empty: none)</label>
              <input id="form-daily" type="number" min={1} value={settings.value.rateLimitPerDay ?? ""} onInput={(e) => setSetting("rateLimitPerDay", (e.target as HTMLInputElement).value ? Number((e.target as HTMLInputElement).value) : null)} {...errAttrs(fieldErrors.value, "settings.rateLimitPerDay", "form-daily-error")} />
              <FieldError errors={fieldErrors.value} name="settings.rateLimitPerDay" id="form-daily-error" />
            </span>
            <span class="field">
              <label for="form-priority">Priority</label>
              <select id="form-priority" value={settings.value.defaultPriority ?? "normal"} onChange={(e) => setSetting("defaultPriority", (e.target as HTMLSelectElement).value)} {...errAttrs(fieldErrors.value, "settings.defaultPriority", "form-priority-error")}>
                {PRIORITIES.map((x) => (
                  <option key={x} value={x}>{x}</option>
                ))}
              </select>
              <FieldError errors={fieldErrors.value} name="settings.defaultPriority" id="form-priority-error" />
            </span>
            <span class="field">
              <label for="form-quiet-start">Quiet hours from</label>
              <input id="form-quiet-start" type="time" value={settings.value.quietHours?.start ?? ""} onInput={(e) => setQuiet("start", (e.target as HTMLInputElement).value)} />
            </span>
            <span class="field">
              <label for="form-quiet-end">Quiet hours until</label>
              <input id="form-quiet-end" type="time" value={settings.value.quietHours?.end ?? ""} onInput={(e) => setQuiet("end", (e.target as HTMLInputElement).value)} {...errAttrs(fieldErrors.value, "settings.quietHours", "form-quiet-error")} />
              <FieldError errors={fieldErrors.value} name="settings.quietHours" id="form-quiet-error" />
            </span>
          </fieldset>
          <ProtectionFields
            draft={draft.value}
            onChange={(d) => (draft.value = d)}
            errors={fieldErrors.value}
            onRecommended={() => (draft.value = recommendedDraft(draft.value, country.value))}
          />
          {fieldErrors.value.length ? (
            <div class="error" role="alert">
              <p>The form was not saved: {fieldErrors.value.length === 1 ? "one setting needs" : `${fieldErrors.value.length} settings need`} a change (marked above).</p>
              <ul>
                {fieldErrors.value.map((x) => (
                  <li key={x.field + x.message}>{plainProblem(x.field, x.message, builderLabel)}</li>
                ))}
              </ul>
            </div>
          ) : error.value ? (
            <p class="error" role="alert">{error.value}</p>
          ) : null}
          </fieldset>
          {canEdit ? (
            <p>
              <button type="submit">{props.id ? "Save form" : "Create form"}</button> <span aria-live="polite">{notice.value}</span>
            </p>
          ) : null}
        </div>
        <aside class="preview" aria-labelledby="preview-title">
          <h2 id="preview-title">Preview</h2>
          <blockquote class="sms">{p.text}</blockquote>
          <p aria-live="polite" class="preview-figures">
            <TextSize content={p.text} testId="preview-figures" />
          </p>
        </aside>
      </form>
      {form.value ? (
        <>
          <h2>Webhook address</h2>
          <p>
            <code>{form.value.webhookUrl}</code>{" "}
            <CopyButton text={form.value!.webhookUrl} onDone={(m) => (notice.value = m)} refused={COPY_REFUSED}>Copy webhook address</CopyButton>{" "}
            {canEdit ? <button type="button" class="secondary" onClick={() => (rotating.value = true)}>Make a new address</button> : null}
          </p>
          {canEdit ? (
            <p class="hint">
              Make a new address when strangers post to the form: the old address stops working at once, so paste the new one (or the new HTML below) into your
              website.
            </p>
          ) : null}
          {addressSource.value === "request" ? (
            <p class="notice" data-testid="address-from-browser">
              No server address is set, so these addresses use the one your browser used. Before you publish the form, have whoever runs the server set it in
              Settings → Server: a website must keep the same address.
            </p>
          ) : null}
          {embed.value ? (
            <>
              <h2>Embed on your website</h2>
              <label for="embed-code">HTML to paste into your page</label>
              <textarea id="embed-code" class="code" rows={8} readOnly value={embed.value} />
              <p>
                <CopyButton text={embed.value} onDone={(m) => (notice.value = m)} refused={COPY_REFUSED}>Copy the HTML</CopyButton>
              </p>
            </>
          ) : null}
          {!canEdit ? <span aria-live="polite">{notice.value}</span> : null}
          <TestSubmission key={form.value.id} formId={form.value.id} fields={form.value.fields} />
          <Confirm
            open={rotating.value}
            title="Make a new webhook address?"
            body="The current address stops working at once; contacts, messages and statistics stay with the form. Update every website or tool that posts to it."
            action="Make a new address"
            onConfirm={rotate}
            onCancel={() => (rotating.value = false)}
          />
        </>
      ) : null}
    </section>
  );

  function setQuiet(part: "start" | "end", v: string) {
    const q = { start: settings.value.quietHours?.start ?? "", end: settings.value.quietHours?.end ?? "", [part]: v };
    // A half-filled pair is kept (and sent: the API says what is missing); both empty = none.
    setSetting("quietHours", q.start || q.end ? q : null);
  }
}
