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
  /** checked: the form accepts the values (nothing saved); sent: also texted to the owner's number. */
  kind: "checked" | "sent" | "refused";
  text: string;
  /** The text a visitor would get, and how many texts it takes. */
  preview?: { text: string; segments: number };
  /** What a post from the website meets that the test skips. */
  notes?: string[];
  messageId: string | null;
  /** Sent while no phone is connected: the page links to adding one. */
  waitsForPhone?: boolean;
}

/**
 * `status` and `body` of POST /v1/forms/:id/test; `fmt` shows an ISO time to the owner.
 * `phoneConnected` false: no phone is connected, so the estimate would be a guess: the answer says
 * texts wait until a phone connects instead (docs/api-decisions.md, "The dashboard never locks
 * itself out; honest status"). Refusals are shown in the server's plain words (field labels, never
 * field names: docs/api-decisions.md, "Plain words for visitors").
 */
export function describeTestAnswer(status: number, body: any, fmt: (iso: string) => string, phoneConnected = true): TestOutcome {
  const data = body?.data ?? {};
  if (status === 200) {
    const preview = typeof data.text === "string" ? { text: data.text, segments: Number(data.segments) || 1 } : undefined;
    const notes = Array.isArray(data.notes) ? (data.notes as string[]) : [];
    if (data.sent) {
      const when = !phoneConnected
        ? " No phone is connected, so texts wait until a phone connects."
        : data.sent.estimatedDelivery
          ? ` Expected to go out around ${fmt(data.sent.estimatedDelivery)}.`
          : "";
      return {
        kind: "sent",
        messageId: data.sent.messageId ?? null,
        text: `${body?.message ?? "The test text was sent."}${when}`,
        preview,
        notes,
        ...(phoneConnected ? {} : { waitsForPhone: true }),
      };
    }
    return { kind: "checked", messageId: null, text: body?.message ?? "The form accepts these values. Nothing was saved.", preview, notes };
  }
  const code = body?.code as string | undefined;
  if (code === "VALIDATION_ERROR") {
    return { kind: "refused", messageId: null, text: `Your website would refuse these values: ${body?.message ?? "something is not quite right"}` };
  }
  const reason: Record<string, string> = {
    RECIPIENT_OPTED_OUT: "that number replied STOP, so Textwire does not text it",
    QUOTA_EXCEEDED: "the account's monthly message quota is used up",
    RATE_LIMIT_EXCEEDED: "too many requests in the last minute; try again shortly",
    PERMISSION_ERROR: "your role does not let you send texts",
    FORM_NOT_FOUND: "this form no longer exists",
  };
  const why = code && reason[code] ? reason[code] : (body?.message ?? `the server answered ${status}`);
  return { kind: "refused", messageId: null, text: `Not tested: ${why}.` };
}
