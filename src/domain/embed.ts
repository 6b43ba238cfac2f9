/**
 * The copy-paste HTML snippet for a form (GET /v1/forms/:id/embed): a plain <form> that posts to
 * the webhook, one labelled input per declared field, the honeypot input hidden from people, and
 * the captcha widget when the form has one. No styling beyond what hides the honeypot.
 */
import type { FieldDef } from "./submission";
import type { CaptchaSettings } from "./protection";

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const INPUT_TYPES: Record<FieldDef["type"], string> = { text: "text", longText: "textarea", email: "email", phone: "tel", number: "number", url: "url", date: "date", timezone: "text" };

// Maps: a field named `constructor` or `toString` must not find Object.prototype's members.
const BUILTIN_LABELS: ReadonlyMap<string, string> = new Map([
  ["phoneNumber", "Mobile number"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["email", "E-mail"],
  ["source", "How did you hear about us?"],
]);

const AUTOCOMPLETE: ReadonlyMap<string, string> = new Map([
  ["phoneNumber", "tel"],
  ["firstName", "given-name"],
  ["lastName", "family-name"],
  ["email", "email"],
]);

const WIDGETS: Record<CaptchaSettings["provider"], { script: string; className: string }> = {
  turnstile: { script: "https://challenges.cloudflare.com/turnstile/v0/api.js", className: "cf-turnstile" },
  hcaptcha: { script: "https://js.hcaptcha.com/1/api.js", className: "h-captcha" },
  recaptcha: { script: "https://www.google.com/recaptcha/api.js", className: "g-recaptcha" },
};

/** "companyName" → "Company name". */
function humanize(name: string): string {
  const words = name.replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export interface EmbedInput {
  formName: string;
  webhookUrl: string;
  fields: readonly FieldDef[];
  honeypotField: string | null;
  captcha: Pick<CaptchaSettings, "provider" | "siteKey"> | null;
  /** settings.consentField: a checkbox the visitor ticks to agree to texts (null: none). */
  consentField?: string | null;
}

export function embedSnippet(f: EmbedInput): string {
  const fields: FieldDef[] = [...f.fields];
  // Every submission needs the number to text; put it first when the form does not declare it.
  if (!fields.some((x) => x.name === "phoneNumber")) fields.unshift({ name: "phoneNumber", type: "phone", required: true });
  const lines: string[] = [];
  lines.push(`<form class="textwire-form" action="${escapeHtml(f.webhookUrl)}" method="post" accept-charset="UTF-8">`);
  for (const field of fields) {
    const id = `tw-${field.name}`;
    const type = field.type === "date" && field.validation?.format && field.validation.format !== "YYYY-MM-DD" ? "text" : INPUT_TYPES[field.type];
    const required = field.name === "phoneNumber" || field.required === true;
    const label = field.label ?? BUILTIN_LABELS.get(field.name) ?? humanize(field.name);
    const attrs = [`id="${id}"`, `name="${escapeHtml(field.name)}"`, `type="${type}"`];
    if (required) attrs.push("required");
    if (field.placeholder) attrs.push(`placeholder="${escapeHtml(field.placeholder)}"`);
    else if (field.type === "timezone") attrs.push('placeholder="Europe/London"');
    const autocomplete = AUTOCOMPLETE.get(field.name);
    if (autocomplete) attrs.push(`autocomplete="${autocomplete}"`);
    const v = field.validation ?? {};
    const texty = field.type === "text" || field.type === "longText";
    if (texty && typeof v.maxLength === "number") attrs.push(`maxlength="${v.maxLength}"`);
    if (texty && typeof v.minLength === "number") attrs.push(`minlength="${v.minLength}"`);
    if (field.type === "number" && typeof v.min === "number") attrs.push(`min="${v.min}"`);
    if (field.type === "number" && typeof v.max === "number") attrs.push(`max="${v.max}"`);
    if (field.type === "number" && v.integer !== true) attrs.push('step="any"');
    // A long text is a textarea (no type attribute), several lines high.
    const control = field.type === "longText" ? `<textarea ${attrs.filter((a) => !a.startsWith("type=")).join(" ")} rows="5"></textarea>` : `<input ${attrs.join(" ")}>`;
    lines.push(`  <p>`, `    <label for="${id}">${escapeHtml(label)}${required ? " *" : ""}</label>`, `    ${control}`, `  </p>`);
  }
  if (f.consentField) {
    // Not required: a visitor who leaves it unticked is still heard (no text is sent to them).
    const id = `tw-${f.consentField}`;
    lines.push(
      `  <p>`,
      `    <input id="${escapeHtml(id)}" name="${escapeHtml(f.consentField)}" type="checkbox" value="yes">`,
      `    <label for="${escapeHtml(id)}">I agree to receive text messages from ${escapeHtml(f.formName)}. Reply STOP to opt out.</label>`,
      `  </p>`,
    );
  }
  if (f.honeypotField) {
    lines.push(
      `  <!-- Left empty by people; bots that fill it in are refused quietly. Keep it hidden. -->`,
      `  <div style="position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden" aria-hidden="true">`,
      `    <label for="tw-${escapeHtml(f.honeypotField)}">Leave this field empty</label>`,
      `    <input id="tw-${escapeHtml(f.honeypotField)}" name="${escapeHtml(f.honeypotField)}" type="text" value="" tabindex="-1" autocomplete="off">`,
      `  </div>`,
    );
  }
  if (f.captcha) {
    const w = WIDGETS[f.captcha.provider];
    lines.push(`  <script src="${w.script}" async defer></script>`);
    lines.push(
      f.captcha.siteKey
        ? `  <div class="${w.className}" data-sitekey="${escapeHtml(f.captcha.siteKey)}"></div>`
        : `  <!-- Set settings.captcha.siteKey (the provider's public site key) to get it filled in here. -->\n  <div class="${w.className}" data-sitekey=""></div>`,
    );
  }
  lines.push(`  <button type="submit">Send</button>`, `</form>`);
  return lines.join("\n") + "\n";
}
