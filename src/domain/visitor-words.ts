/**
 * What a website visitor reads when a form refuses their post, in one place: the sentence for
 * every field problem (naming the field by its label, never by its name) and the reason for every
 * refusal of the whole post. The built-in error page and the JSON `message` a website shows both
 * come from here; the API keeps the field names and developer wording in `details` and `errors`
 * (docs/api-decisions.md, "Plain words for visitors").
 */

/** The words a visitor sees for the built-in fields a form did not label. */
const BUILTIN_LABELS: ReadonlyMap<string, string> = new Map([
  ["phoneNumber", "Mobile phone number"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["email", "E-mail"],
  ["source", "Source"],
]);

/** The label the form's owner gave the field, or null (none, blank, or not a string). */
export function declaredLabel(def: { label?: unknown } | undefined): string | null {
  const l = def?.label;
  return typeof l === "string" && l.trim() !== "" ? l.trim() : null;
}

/**
 * What the visitor calls a field: its declared label; else a built-in field's plain name; else
 * the name written as words (`favoriteColor` and `favorite_color` → "Favorite color").
 */
export function fieldLabel(name: string, def?: { label?: unknown }): string {
  const declared = declaredLabel(def);
  if (declared !== null) return declared;
  const builtin = BUILTIN_LABELS.get(name);
  if (builtin !== undefined) return builtin;
  const words = name.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words === "" ? "a field" : words[0].toUpperCase() + words.slice(1);
}

const q = (label: string) => `'${label}'`;
const inField = (label: string | null) => (label === null ? "" : ` in ${q(label)}`);

/** The sentences, one per kind of problem; `label` is what fieldLabel gives. */
export const SAY = {
  required: (label: string) => `Please fill in ${q(label)}.`,
  notText: (label: string) => `Please enter ${q(label)} as plain text.`,
  tooShort: (label: string, n: number) => `Please write at least ${n} characters in ${q(label)}.`,
  tooLong: (label: string, n: number) => `Please keep ${q(label)} to ${n} characters or fewer.`,
  format: (label: string) => `Please check what you entered in ${q(label)}.`,
  email: (label: string) => `Please enter an e-mail address like name@example.com in ${q(label)}.`,
  emailDomain: (label: string, domains: readonly string[]) => `Please enter an e-mail address at ${domains.join(" or ")} in ${q(label)}.`,
  number: (label: string) => `Please enter a number in ${q(label)}.`,
  wholeNumber: (label: string) => `Please enter a whole number in ${q(label)}.`,
  atLeast: (label: string, min: number) => `Please enter ${min} or more in ${q(label)}.`,
  atMost: (label: string, max: number) => `Please enter ${max} or less in ${q(label)}.`,
  url: (label: string) => `Please enter a full web address like https://example.com in ${q(label)}.`,
  urlProtocol: (label: string, protocols: readonly string[]) => `Please enter a web address starting with ${protocols.map((p) => `${p}://`).join(" or ")} in ${q(label)}.`,
  urlDomain: (label: string, domains: readonly string[]) => `Please enter a link to ${domains.join(" or ")} in ${q(label)}.`,
  date: (label: string, format: string) => `Please enter a date written as ${format} in ${q(label)}.`,
  timeZone: (label: string) => `Please choose a time zone such as Europe/London in ${q(label)}.`,
  dateFrom: (label: string, min: string) => `Please enter a date on or after ${min} in ${q(label)}.`,
  dateUntil: (label: string, max: string) => `Please enter a date on or before ${max} in ${q(label)}.`,
  noLinks: (label: string) => `Please leave links out of ${q(label)}.`,
  /** A phone number that is not a textable number; `label` only when the form's owner gave one. */
  phone: (label: string | null, regions?: readonly string[]) =>
    `Please enter a mobile phone number${regions && regions.length > 0 ? ` (${regions.join(", ")})` : ""}${inField(label)}.`,
  /** A valid number of a kind that cannot get texts: `what` is e.g. "a landline". */
  phoneKind: (label: string | null, what: string) => `That number is ${what}; please enter a mobile number${inField(label)}.`,
  phoneInternational: (label: string | null) => `Please enter the mobile number with + and the country code, like +1 415 555 0123${inField(label)}.`,
  phoneNational: (label: string | null) => `Please enter the mobile number without + or a country code, like (415) 555-0123${inField(label)}.`,
  personalMobile: (label: string | null) => `Please enter a personal mobile phone number${inField(label)}.`,
  /** A key the website's own form should never send (a blank or overlong name): not the visitor's doing. */
  badFieldName: () => "Something in the form is not quite right. Please tell the website's owner.",
} as const;

/** Field problems as one message: each field's sentence, in order. */
export function visitorSummary(errors: readonly { visitor?: string; message: string }[]): string {
  // An owner's own message may lack its full stop; each sentence ends with one, so they read (and
  // the error page splits them) as sentences.
  const said = errors
    .map((e) => e.visitor?.trim() || null)
    .filter((s): s is string => s !== null)
    .map((s) => (/[.!?…]$/.test(s) ? s : `${s}.`));
  return said.length > 0 ? said.join(" ") : REFUSALS.VALIDATION_ERROR;
}

/** Plain words for every refusal of a whole post, by error code. */
export const REFUSALS: Readonly<Record<string, string>> = {
  VALIDATION_ERROR: "Something in the form is not quite right. Please check it and try again.",
  CAPTCHA_FAILED: "The “I am not a robot” check was not completed. Please try it again.",
  CAPTCHA_UNAVAILABLE: "The “I am not a robot” check is not reachable right now. Please try again in a minute.",
  RATE_LIMIT_EXCEEDED: "Too many messages were sent from here in a short time. Please wait a minute and try again.",
  QUOTA_EXCEEDED: "This form cannot send any more text messages this month.",
  ORIGIN_NOT_ALLOWED: "This form does not accept messages from this website.",
  FORM_DISABLED: "This form is not accepting messages at the moment.",
  NOT_FOUND: "This form no longer exists or has moved.",
  IDEMPOTENCY_KEY_REUSED: "This form was sent twice with different details. Please send it again.",
  PAYLOAD_TOO_LARGE: "The form held too much text. Please shorten it and try again.",
  UNSUPPORTED_MEDIA_TYPE: "The form could not be read. Please try again.",
  SERVICE_UNAVAILABLE: "The service is busy. Please try again in a minute.",
};

/** The refusal's plain words; anything unforeseen gets a polite, general one. */
export function refusalFor(code: string): string {
  return REFUSALS[code] ?? "Your message could not be sent. Please try again later.";
}
