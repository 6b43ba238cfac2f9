/**
 * Phone number normalisation for submissions and contacts.
 *
 * libphonenumber-js with the `max` metadata decides validity and number type:
 * a number must be valid and able to receive text messages.
 */
import { parsePhoneNumberFromString, type NumberType } from "libphonenumber-js/max";
import { parseE164, type E164Parse } from "./phone-e164";
import { SAY, fieldLabel } from "./visitor-words";

/** Numbers without a country code are read as numbers of this country (spec: "US +1 is added"). */
export const DEFAULT_PHONE_COUNTRY = "US" as const;

/** Longest input we try to parse; real numbers with punctuation fit easily. */
export const MAX_PHONE_INPUT_LENGTH = 40;

/**
 * Types that can receive texts. `FIXED_LINE_OR_MOBILE` is what every US/Canada number is typed as
 * (the plan cannot tell them apart). VOIP and PERSONAL_NUMBER ranges are routinely SMS-capable.
 * `undefined` (valid number whose country metadata has no type patterns) is accepted: we cannot
 * prove it is not a mobile, and refusing would reject whole countries.
 * Refused: FIXED_LINE, TOLL_FREE, PREMIUM_RATE, SHARED_COST, UAN, VOICEMAIL, PAGER.
 */
const TEXTABLE_TYPES: ReadonlySet<NumberType> = new Set<NumberType>([
  "MOBILE",
  "FIXED_LINE_OR_MOBILE",
  "VOIP",
  "PERSONAL_NUMBER",
  undefined,
]);

const TYPE_WORDS: Partial<Record<NonNullable<NumberType>, string>> = {
  FIXED_LINE: "a landline",
  TOLL_FREE: "a toll-free number",
  PREMIUM_RATE: "a premium-rate number",
  SHARED_COST: "a shared-cost number",
  UAN: "a non-geographic (UAN) number",
  VOICEMAIL: "a voicemail access number",
  PAGER: "a pager number",
};

export type PhoneFormat = "national" | "international";

export interface NormalizePhoneOptions {
  /** Allowed ISO 3166 country codes (case-insensitive), e.g. ["US", "CA"]. Empty/absent: any. */
  regions?: readonly string[];
  /**
   * `international`: the input must carry its country code explicitly, i.e. start with `+`
   * (or the `00` international prefix, which we read as `+`).
   * `national`: the input must be written in the national format of the default country (US):
   * no leading `+`/`00`/`011`, and the number must be a +1 number.
   */
  format?: PhoneFormat;
  /** Subject of the error messages; default "phone number" (the webhook passes the field name). */
  label?: string;
  /** The label a form's owner gave the field, for the visitor's sentence; null or absent: none. */
  visitorLabel?: string | null;

  /**
   * Accept a valid number whatever its type (a landline, a toll-free number): SMSGate's
   * `skipPhoneValidation` — the number is still normalised to E.164.
   */
  anyType?: boolean;
}

export type NormalizePhoneResult =
  | { ok: true; e164: string; country?: string }
  | { ok: false; message: string; requirement: string; visitor: string };

const REQUIREMENT = "valid mobile phone number";

/** `+` and 1 to MAX_PHONE_INPUT_LENGTH - 1 digits, nothing around them. */
const COMPACT_E164 = /^\+[0-9]{1,39}$/;

/** Characters a written phone number may contain (no letters: vanity numbers and "ext." refused). */
const ALLOWED_CHARS = /^[0-9+()\-.\/\s]*$/;

/**
 * A refusal; the visitor's sentence defaults to asking for a mobile number (of the allowed
 * countries), as every refusal but the number's kind and format does.
 */
function refusal(opts: NormalizePhoneOptions, message: string, requirement = REQUIREMENT, visitor?: string): { ok: false; message: string; requirement: string; visitor: string } {
  return { ok: false, message, requirement, visitor: visitor ?? SAY.phone(opts.visitorLabel ?? null, opts.regions) };
}

export function normalizePhone(input: unknown, opts: NormalizePhoneOptions = {}): NormalizePhoneResult {
  const L = opts.label ?? "phone number";
  const own = opts.visitorLabel ?? null;
  if (typeof input !== "string") return refusal(opts, `${L} must be a string`);
  // Already `+digits` (what API clients send): no clean-up to do and no shape check can fail.
  const compact = COMPACT_E164.test(input);
  const raw = compact ? input : input.trim().replace(/\s+/g, " ");
  if (!compact) {
    if (raw === "") return refusal(opts, `${L} is required`, "required", SAY.required(own ?? fieldLabel("phoneNumber")));
    if (raw.length > MAX_PHONE_INPUT_LENGTH) {
      return refusal(opts, `${L} must be at most ${MAX_PHONE_INPUT_LENGTH} characters`);
    }
    if (!ALLOWED_CHARS.test(raw)) {
      return refusal(opts, `${L} may contain only digits, spaces and + ( ) - . /`);
    }
    if (phoneDigits(raw).length === 0) return refusal(opts, `${L} must contain digits`);
    if (raw.indexOf("+") > 0 || raw.indexOf("+") !== raw.lastIndexOf("+")) {
      return refusal(opts, `${L}: '+' may only appear once, at the start`);
    }
  }

  // "00" is the international prefix in most of the world; no valid US national number starts
  // with 0, so reading it as "+" cannot misread a US number.
  const hasPlus = raw.startsWith("+");
  const hasZeroZero = !hasPlus && raw.startsWith("00");
  const text = hasZeroZero ? "+" + phoneDigits(raw).slice(2) : raw;
  const explicitCountry = hasPlus || hasZeroZero;

  if (opts.format === "international" && !explicitCountry) {
    return refusal(opts, `${L} must be in international format, starting with + and the country code`, "international format (+ and country code)", SAY.phoneInternational(own));
  }
  if (opts.format === "national" && explicitCountry) {
    return refusal(opts, `${L} must be in national format, without + or a country prefix`, "national format", SAY.phoneNational(own));
  }

  const parsed = parsePhone(text);
  if (!parsed || !parsed.valid) return refusal(opts, `${L} is not a valid phone number`);

  if (opts.format === "national" && parsed.countryCallingCode !== "1") {
    // e.g. "011 44 …": the US international dialling prefix is not the national format.
    return refusal(opts, `${L} must be in national format, without + or a country prefix`, "national format", SAY.phoneNational(own));
  }

  const type = parsed.type;
  if (!opts.anyType && !TEXTABLE_TYPES.has(type)) {
    const what = (type && TYPE_WORDS[type]) ?? "not a mobile number";
    return refusal(opts, `${L} is ${what} and cannot receive text messages`, REQUIREMENT, SAY.phoneKind(own, what));
  }

  const country = parsed.country;
  if (opts.regions && opts.regions.length > 0) {
    const allowed = opts.regions.map((r) => String(r).toUpperCase());
    if (!country || !allowed.includes(country)) {
      return refusal(opts, 
        `${L} must be from one of: ${allowed.join(", ")}`,
        `phone number from ${allowed.join(", ")}`,
        SAY.phone(own, allowed),
      );
    }
  }

  return country ? { ok: true, e164: parsed.number, country } : { ok: true, e164: parsed.number };
}

/**
 * libphonenumber-js's reading of `text` (default country US): E.164 text through the fast path
 * (src/domain/phone-e164.ts, same answers), anything else — or what that path leaves — through
 * the library.
 */
export function parsePhone(text: string): E164Parse | undefined {
  const fast = parseE164(text);
  if (fast !== undefined) return fast;
  let p;
  try {
    p = parsePhoneNumberFromString(text, DEFAULT_PHONE_COUNTRY);
  } catch {
    return undefined;
  }
  if (!p) return undefined;
  // The type only of a valid number, as before (nothing reads it otherwise).
  const valid = p.isValid();
  return { number: p.number, country: p.country, countryCallingCode: p.countryCallingCode, valid, type: valid ? p.getType() : undefined };
}
/** Digits only, for searching by phone ("(415) 555-2671" → "4155552671"). */
export function phoneDigits(s: string): string {
  return s.replace(/\D+/g, "");
}
