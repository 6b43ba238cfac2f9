/**
 * The form builder's protection inputs as text the owner types, to and from the form's
 * settings as the API stores them; and the plain-words answer of a test submission. Pure, so
 * they are unit-tested (test/unit/web/form-protection.test.ts).
 */

export const CAPTCHA_NAMES: Record<string, string> = { turnstile: "Cloudflare Turnstile", hcaptcha: "hCaptcha", recaptcha: "Google reCAPTCHA" };
/** How the API answers a stored captcha secret (write-only). */
export const SECRET_MASK = "••••";

/** Every protection input as the owner sees it: numbers and lists as text, "" = not set. */
export interface ProtectionDraft {
  successUrl: string;
  errorUrl: string;
  duplicateWindowMinutes: string;
  ipLimitPerMinute: string;
  recipientLimitPerDay: string;
  /** "US, CA" */
  allowedCountries: string;
  /** one origin a line */
  allowedOrigins: string;
  honeypotOn: boolean;
  honeypotField: string;
  allowLinksInValues: boolean;
  captchaProvider: "" | "turnstile" | "hcaptcha" | "recaptcha";
  captchaSiteKey: string;
  /** What the owner typed; "" keeps the stored secret (when there is one for this provider). */
  captchaSecret: string;
  /** The provider whose secret the server holds (null: none stored). */
  storedCaptchaProvider: string | null;
}

const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));

export function draftFromSettings(s: Record<string, any>): ProtectionDraft {
  const c = s.captcha && typeof s.captcha === "object" ? s.captcha : null;
  return {
    successUrl: text(s.successUrl),
    errorUrl: text(s.errorUrl),
    duplicateWindowMinutes: s.duplicateWindowMinutes ? String(s.duplicateWindowMinutes) : "",
    ipLimitPerMinute: text(s.ipLimitPerMinute),
    recipientLimitPerDay: text(s.recipientLimitPerDay),
    allowedCountries: Array.isArray(s.allowedCountries) ? s.allowedCountries.join(", ") : "",
    allowedOrigins: Array.isArray(s.allowedOrigins) ? s.allowedOrigins.join("\n") : "",
    // The API's default: the honeypot is on as "_gotcha" unless the form sets null.
    honeypotOn: s.honeypotField !== null,
    honeypotField: typeof s.honeypotField === "string" ? s.honeypotField : "_gotcha",
    allowLinksInValues: s.allowLinksInValues === true,
    captchaProvider: c && ["turnstile", "hcaptcha", "recaptcha"].includes(c.provider) ? c.provider : "",
    captchaSiteKey: c ? text(c.siteKey) : "",
    captchaSecret: "",
    storedCaptchaProvider: c ? text(c.provider) || null : null,
  };
}

/** The recommended protections (docs/forms.md, "Protecting a public form"); `country` is the account's default country. */
export function recommendedDraft(d: ProtectionDraft, country: string): ProtectionDraft {
  return { ...d, duplicateWindowMinutes: "10", ipLimitPerMinute: "10", recipientLimitPerDay: "5", allowedCountries: country, honeypotOn: true, honeypotField: d.honeypotField || "_gotcha", allowLinksInValues: false };
}

/** A typed number as the API wants it; anything else is sent as typed so the API names the field. */
function numberOr(v: string, empty: number | null): number | string | null {
  const t = v.trim();
  if (t === "") return empty;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

const list = (v: string, sep: RegExp) =>
  v
    .split(sep)
    .map((x) => x.trim())
    .filter(Boolean);

/** The settings keys to send for a draft (merged over the form's other settings). */
export function settingsFromDraft(d: ProtectionDraft): Record<string, unknown> {
  const countries = list(d.allowedCountries, /[\s,;]+/).map((c) => c.toUpperCase());
  const origins = list(d.allowedOrigins, /[\s,]+/);
  let captcha: Record<string, string> | null = null;
  if (d.captchaProvider) {
    captcha = { provider: d.captchaProvider };
    // An empty secret box keeps the stored secret when the provider did not change; the API says so otherwise.
    captcha.secret = d.captchaSecret.trim() !== "" ? d.captchaSecret.trim() : d.storedCaptchaProvider === d.captchaProvider ? SECRET_MASK : "";
    if (d.captchaSiteKey.trim()) captcha.siteKey = d.captchaSiteKey.trim();
  }
  return {
    successUrl: d.successUrl.trim() || null,
    errorUrl: d.errorUrl.trim() || null,
    duplicateWindowMinutes: numberOr(d.duplicateWindowMinutes, 0),
    ipLimitPerMinute: numberOr(d.ipLimitPerMinute, null),
    recipientLimitPerDay: numberOr(d.recipientLimitPerDay, null),
    allowedCountries: countries.length ? countries : null,
    allowedOrigins: origins.length ? origins : null,
    honeypotField: d.honeypotOn ? d.honeypotField.trim() || "_gotcha" : null,
    allowLinksInValues: d.allowLinksInValues,
    captcha,
  };
}

/** API error entries ({field, message}) that belong to the input for `name` ("settings.captcha" takes "settings.captcha.secret"). */
export function errorsFor(errors: ReadonlyArray<{ field: string; message: string }>, name: string): string[] {
  return errors.filter((e) => e.field === name || e.field.startsWith(name + ".") || e.field.startsWith(name + "[")).map((e) => e.message);
}

// ---------------------------------------------------------------------------------------------
// A test submission's answer, in plain words

export interface TestOutcome {
  kind: "queued" | "duplicate" | "suppressed" | "refused";
  text: string;
  messageId: string | null;
  errors?: Array<{ field: string; message: string }>;
  /** Queued while no phone is connected: the page links to adding one. */
  waitsForPhone?: boolean;
}

const SUPPRESSED: Record<string, string> = {
  "recipient-limit": "this number already had as many texts today as the form's per-number limit allows",
};

/** `status` and `body` of the webhook's answer; `fmt` shows an ISO time to the owner. */
/**
 * `phoneConnected` false: no phone is connected, so the estimate would be a guess: the answer says
 * texts wait until a phone connects instead (docs/api-decisions.md, "The dashboard never locks
 * itself out; honest status").
 */
export function describeTestAnswer(status: number, body: any, fmt: (iso: string) => string, phoneConnected = true): TestOutcome {
  const data = body?.data ?? {};
  if (status === 200 && data.duplicate === true) {
    return {
      kind: "duplicate",
      messageId: data.messageId ?? null,
      text: "Not sent again: this number got a text from this form a few minutes ago, and the form's duplicate window holds back a second one. The contact was updated.",
    };
  }
  if (status === 200 && data.messageId === null) {
    const why = SUPPRESSED[data.suppressed] ?? `it was held back (${data.suppressed ?? "no reason given"})`;
    return { kind: "suppressed", messageId: null, text: `The contact was saved, but no text was queued: ${why}.` };
  }
  if (status === 200) {
    const when = !phoneConnected
      ? " No phone is connected, so texts wait until a phone connects."
      : data.estimatedDelivery
        ? ` Expected to go out around ${fmt(data.estimatedDelivery)}.`
        : "";
    const pos = typeof data.queuePosition === "number" ? ` at position ${data.queuePosition} in the queue` : "";
    return { kind: "queued", messageId: data.messageId ?? null, text: `Queued${pos}.${when}`, ...(phoneConnected ? {} : { waitsForPhone: true }) };
  }
  const code = body?.code as string | undefined;
  if (code === "VALIDATION_ERROR" && Array.isArray(body?.errors)) {
    return { kind: "refused", messageId: null, text: "The form refused the submission; nothing was saved:", errors: body.errors };
  }
  const reason: Record<string, string> = {
    ORIGIN_NOT_ALLOWED: "the form only accepts submissions from the websites in its “Allowed websites” list, and this dashboard is not one of them",
    CAPTCHA_FAILED: "the form asks for a captcha, which only a visitor's browser on your website can solve",
    CAPTCHA_UNAVAILABLE: "the captcha provider did not answer in time",
    RATE_LIMIT_EXCEEDED: "too many submissions in the last minute; try again shortly",
    QUOTA_EXCEEDED: "the account's monthly message quota is used up",
  };
  const why = code && reason[code] ? reason[code] : (body?.message ?? `the server answered ${status}`);
  return { kind: "refused", messageId: null, text: `Refused, nothing was saved: ${why}.` };
}
