/**
 * Protections of a public form: the settings that make a form safe to put on a website,
 * their validation, their defaults and the "recommended" shorthand, and the pure checks the
 * webhook applies to a submission (links in inserted values, value cap, allowed countries).
 * A form that sets none of them behaves as in v1, except the honeypot and the links rule, which
 * only ever refuse abuse and are on by default.
 *
 * Kept whole at a little over 450 lines: the settings, their validation and the checks that
 * read them are one vocabulary; split, each part would import the others' types and constants.
 */
import { isSupportedCountry } from "libphonenumber-js/max";
import { parsePhone } from "./phone";
import type { FieldDef, FieldError, SubmissionValue } from "./submission";
import { isValidQuietHours, type QuietHours } from "./quiet-hours";
import { SAY, declaredLabel, fieldLabel } from "./visitor-words";

export const CAPTCHA_PROVIDERS = ["turnstile", "hcaptcha", "recaptcha"] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

/** The form field each provider's widget posts its token in. */
export const CAPTCHA_TOKEN_FIELDS: Record<CaptchaProvider, string> = {
  turnstile: "cf-turnstile-response",
  hcaptcha: "h-captcha-response",
  recaptcha: "g-recaptcha-response",
};

/** How a write-only secret is shown in every answer. */
export const SECRET_MASK = "••••";

export interface CaptchaSettings {
  provider: CaptchaProvider;
  secret: string;
  /** The public site key the widget needs (for the embed snippet); optional. */
  siteKey?: string;
}

export interface ProtectionSettings {
  successUrl: string | null;
  errorUrl: string | null;
  /** 0 = off. */
  duplicateWindowMinutes: number;
  ipLimitPerMinute: number | null;
  recipientLimitPerDay: number | null;
  /** Upper-case ISO 3166 alpha-2 codes; null = any country. */
  allowedCountries: string[] | null;
  /** Lower-case origins (scheme://host[:port]); null = any origin. */
  allowedOrigins: string[] | null;
  honeypotField: string | null;
  captcha: CaptchaSettings | null;
  allowLinksInValues: boolean;
  quietHours: QuietHours | null;
}

export const DEFAULT_HONEYPOT_FIELD = "_gotcha";
export const MAX_DUPLICATE_WINDOW_MINUTES = 1_440;
export const MAX_IP_LIMIT_PER_MINUTE = 10_000;
export const MAX_RECIPIENT_LIMIT_PER_DAY = 1_000;
export const MAX_REDIRECT_URL_LENGTH = 2_000;
export const MAX_ALLOWED_ORIGINS = 50;
/** Values inserted into a message: at most this many characters unless the field allows more. */
export const MAX_INSERTED_VALUE_LENGTH = 100;

/** The recommended values (docs/forms.md, "Protecting a public form"); allowedCountries comes from the account. */
export const RECOMMENDED_PROTECTION = Object.freeze({
  duplicateWindowMinutes: 10,
  ipLimitPerMinute: 10,
  recipientLimitPerDay: 5,
  honeypotField: DEFAULT_HONEYPOT_FIELD,
  allowLinksInValues: false,
});

export const PROTECTION_SETTING_KEYS = [
  "protection",
  "successUrl",
  "errorUrl",
  "duplicateWindowMinutes",
  "ipLimitPerMinute",
  "recipientLimitPerDay",
  "allowedCountries",
  "allowedOrigins",
  "honeypotField",
  "captcha",
  "allowLinksInValues",
  "quietHours",
] as const;

const HONEYPOT_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const isIntIn = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

function isHttpUrl(v: unknown): v is string {
  if (typeof v !== "string" || v.length > MAX_REDIRECT_URL_LENGTH) return false;
  try {
    const u = new URL(v);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/** "https://Shop.example:443/" → "https://shop.example"; null when it is not a bare http(s) origin. */
export function normalizeOrigin(v: unknown): string | null {
  if (typeof v !== "string" || v.length > 300) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return null;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "") return null;
  if ((u.pathname !== "/" && u.pathname !== "") || u.search || u.hash || u.username || u.password) return null;
  return u.origin.toLowerCase();
}

/**
 * Problems with the protection settings in `s` (a settings object). `fields` are the form's
 * declared fields when known (a honeypot must not be one of them); `storedCaptcha` lets an
 * update keep the stored secret by posting the mask or leaving the secret out.
 */
export function validateProtectionSettings(s: Record<string, unknown>, fields: unknown, storedCaptcha?: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const has = (k: string) => Object.hasOwn(s, k) && s[k] !== undefined;
  if (has("protection") && s.protection !== "recommended" && s.protection !== null) {
    errors.push({ field: "settings.protection", message: 'protection must be "recommended" (fills in the recommended protections)' });
  }
  for (const k of ["successUrl", "errorUrl"] as const) {
    if (has(k) && s[k] !== null && !isHttpUrl(s[k])) {
      errors.push({ field: `settings.${k}`, message: `${k} must be an http:// or https:// URL of at most ${MAX_REDIRECT_URL_LENGTH} characters` });
    }
  }
  if (has("duplicateWindowMinutes") && s.duplicateWindowMinutes !== null && !isIntIn(s.duplicateWindowMinutes, 0, MAX_DUPLICATE_WINDOW_MINUTES)) {
    errors.push({ field: "settings.duplicateWindowMinutes", message: `duplicateWindowMinutes must be an integer from 0 (off) to ${MAX_DUPLICATE_WINDOW_MINUTES}` });
  }
  if (has("ipLimitPerMinute") && s.ipLimitPerMinute !== null && !isIntIn(s.ipLimitPerMinute, 1, MAX_IP_LIMIT_PER_MINUTE)) {
    errors.push({ field: "settings.ipLimitPerMinute", message: `ipLimitPerMinute must be an integer from 1 to ${MAX_IP_LIMIT_PER_MINUTE}, or null for no limit` });
  }
  if (has("recipientLimitPerDay") && s.recipientLimitPerDay !== null && !isIntIn(s.recipientLimitPerDay, 1, MAX_RECIPIENT_LIMIT_PER_DAY)) {
    errors.push({
      field: "settings.recipientLimitPerDay",
      message: `recipientLimitPerDay must be an integer from 1 to ${MAX_RECIPIENT_LIMIT_PER_DAY}, or null for no limit`,
    });
  }
  if (has("allowedCountries") && s.allowedCountries !== null) {
    const c = s.allowedCountries;
    if (!Array.isArray(c) || c.length === 0 || c.length > 250) {
      errors.push({ field: "settings.allowedCountries", message: "allowedCountries must be a non-empty list of two-letter country codes such as US, or null for any" });
    } else {
      c.forEach((code, i) => {
        if (typeof code !== "string" || !/^[A-Za-z]{2}$/.test(code) || !isSupportedCountry(code.toUpperCase() as never)) {
          errors.push({ field: `settings.allowedCountries[${i}]`, message: "each country must be a two-letter ISO code with a telephone numbering plan, e.g. US" });
        }
      });
    }
  }
  if (has("allowedOrigins") && s.allowedOrigins !== null) {
    const o = s.allowedOrigins;
    if (!Array.isArray(o) || o.length === 0 || o.length > MAX_ALLOWED_ORIGINS) {
      errors.push({ field: "settings.allowedOrigins", message: `allowedOrigins must be a list of 1 to ${MAX_ALLOWED_ORIGINS} origins such as https://shop.example, or null for any` });
    } else {
      o.forEach((origin, i) => {
        if (normalizeOrigin(origin) === null) {
          errors.push({ field: `settings.allowedOrigins[${i}]`, message: "each origin must be scheme and host only, such as https://shop.example (no path)" });
        }
      });
    }
  }
  if (has("honeypotField") && s.honeypotField !== null) {
    const h = s.honeypotField;
    if (typeof h !== "string" || !HONEYPOT_NAME.test(h)) {
      errors.push({ field: "settings.honeypotField", message: "honeypotField must be a field name (letters, digits, _ or -; up to 64), or null to turn it off" });
    } else if (Array.isArray(fields) && fields.some((f) => isPlainObject(f) && f.name === h)) {
      errors.push({ field: "settings.honeypotField", message: `honeypotField '${h}' is one of the form's fields; the honeypot must be a field people never fill in` });
    } else if (["phoneNumber", "firstName", "lastName", "email", "source"].includes(h)) {
      errors.push({ field: "settings.honeypotField", message: `honeypotField cannot be the built-in field '${h}'` });
    }
  }
  if (has("captcha") && s.captcha !== null) {
    const c = s.captcha;
    if (!isPlainObject(c)) {
      errors.push({ field: "settings.captcha", message: `captcha must be an object {provider, secret}, or null to turn it off` });
    } else {
      for (const k of Object.keys(c)) {
        if (!["provider", "secret", "siteKey"].includes(k)) errors.push({ field: `settings.captcha.${k}`, message: `unknown captcha setting '${k}'; allowed: provider, secret, siteKey` });
      }
      if (!(CAPTCHA_PROVIDERS as readonly unknown[]).includes(c.provider)) {
        errors.push({ field: "settings.captcha.provider", message: `provider must be one of ${CAPTCHA_PROVIDERS.join(", ")}` });
      }
      const keepsStored = (c.secret === undefined || c.secret === SECRET_MASK) && isPlainObject(storedCaptcha) && storedCaptcha.provider === c.provider;
      if (!keepsStored && !(typeof c.secret === "string" && c.secret.trim() !== "" && c.secret.length <= 500 && c.secret !== SECRET_MASK)) {
        errors.push({ field: "settings.captcha.secret", message: "secret is required: the provider's secret key (kept write-only)" });
      }
      if (c.siteKey !== undefined && c.siteKey !== null && !(typeof c.siteKey === "string" && /^[\x21-\x7e]{1,200}$/.test(c.siteKey))) {
        errors.push({ field: "settings.captcha.siteKey", message: "siteKey must be the provider's public site key" });
      }
    }
  }
  if (has("allowLinksInValues") && typeof s.allowLinksInValues !== "boolean") {
    errors.push({ field: "settings.allowLinksInValues", message: "allowLinksInValues must be true or false" });
  }
  if (has("quietHours") && s.quietHours !== null && !isValidQuietHours(s.quietHours)) {
    errors.push({
      field: "settings.quietHours",
      message: 'quietHours must be {start: "HH:MM", end: "HH:MM"} (24-hour clock, start and end differ), or null for none',
    });
  }
  return errors;
}

/**
 * The settings to store: `protection: "recommended"` expanded (explicit values win), a captcha
 * posted with the mask or without a secret keeps the stored secret. `defaultCountry` is the
 * account's default country (the recommended allowedCountries).
 */
export function expandProtection(s: Record<string, unknown>, defaultCountry: string, storedCaptcha?: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.protection === "recommended") {
    Object.assign(out, RECOMMENDED_PROTECTION, { allowedCountries: [defaultCountry] });
  }
  for (const [k, v] of Object.entries(s)) if (k !== "protection") out[k] = v;
  if (isPlainObject(out.captcha)) {
    const c = { ...out.captcha };
    if ((c.secret === undefined || c.secret === SECRET_MASK) && isPlainObject(storedCaptcha)) c.secret = storedCaptcha.secret;
    out.captcha = c;
  }
  if (Array.isArray(out.allowedCountries)) out.allowedCountries = out.allowedCountries.map((c) => String(c).toUpperCase());
  if (Array.isArray(out.allowedOrigins)) out.allowedOrigins = out.allowedOrigins.map((o) => normalizeOrigin(o) ?? o);
  return out;
}

/** Settings as answered by the API: the captcha secret never leaves the server. */
export function maskSecrets<T extends Record<string, unknown>>(settings: T): T {
  if (!isPlainObject(settings.captcha)) return settings;
  return { ...settings, captcha: { ...settings.captcha, secret: SECRET_MASK } };
}

/** Protection settings with defaults filled in (call on validated settings). */
export function resolveProtection(s: Record<string, unknown>): ProtectionSettings {
  const intOr = <T>(v: unknown, min: number, d: T): number | T => (typeof v === "number" && Number.isInteger(v) && v >= min ? v : d);
  const c = s.captcha;
  return {
    successUrl: typeof s.successUrl === "string" ? s.successUrl : null,
    errorUrl: typeof s.errorUrl === "string" ? s.errorUrl : null,
    duplicateWindowMinutes: intOr(s.duplicateWindowMinutes, 0, 0),
    ipLimitPerMinute: intOr(s.ipLimitPerMinute, 1, null),
    recipientLimitPerDay: intOr(s.recipientLimitPerDay, 1, null),
    allowedCountries: Array.isArray(s.allowedCountries) ? s.allowedCountries.map((x) => String(x).toUpperCase()) : null,
    allowedOrigins: Array.isArray(s.allowedOrigins) ? s.allowedOrigins.map((o) => normalizeOrigin(o) ?? String(o)) : null,
    honeypotField: s.honeypotField === null ? null : typeof s.honeypotField === "string" ? s.honeypotField : DEFAULT_HONEYPOT_FIELD,
    captcha:
      isPlainObject(c) && (CAPTCHA_PROVIDERS as readonly unknown[]).includes(c.provider) && typeof c.secret === "string"
        ? { provider: c.provider as CaptchaProvider, secret: c.secret, ...(typeof c.siteKey === "string" ? { siteKey: c.siteKey } : {}) }
        : null,
    allowLinksInValues: s.allowLinksInValues === true,
    quietHours: isValidQuietHours(s.quietHours) ? s.quietHours : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Checks on a submission

/** Whether a posted honeypot value is filled in (any non-blank value). */
export function honeypotFilled(body: Record<string, unknown>, field: string | null): boolean {
  if (field === null || !Object.hasOwn(body, field)) return false;
  const v = body[field];
  if (v === undefined || v === null) return false;
  if (typeof v === "string") return v.trim() !== "";
  return true;
}

/**
 * Top-level domains a bare domain is recognised by (besides the two-letter country codes, a few
 * internationalised ones and IDN `xn--`): the common generic ones, and the reserved test names
 * phishers' examples use. A domain followed by a path (`evil.example/login`) or a port is a link
 * whatever its ending.
 */
const GENERIC_TLDS = new Set(
  (
    "com net org info biz io app dev xyz top online site shop store link click live life world today news " +
    "email page web website blog cloud tech digital space pro club vip win bid loan men work ltd icu cfd sbs " +
    "support help services tk ml ga cf gq gov edu mil int mobi name example test invalid localhost"
  ).split(" "),
);
/** Internationalised top-level domains seen in the wild (Cyrillic, Chinese, Japanese, Greek). */
const IDN_TLDS = new Set("рф рус укр бел срб мкд қаз онлайн сайт орг ком 中国 中國 香港 台湾 台灣 公司 网络 网址 在线 コム みんな ελ ευ".split(" "));
/** Country-code TLDs that are not a country in libphonenumber's list. */
const EXTRA_CC_TLDS = new Set(["uk", "eu", "su", "ac", "aq", "bv", "gs", "hm", "pn", "tf", "um"]);
/**
 * Abbreviations written before a name without a space ("Mr.Li", "Dr.No", "St.Kitts"): such a
 * single word before a country code is a person or a place, not a domain. A generic ending
 * (`dr.com`) or a path still makes it a link.
 */
const ABBREVIATIONS = new Set(
  "mr mrs ms mx dr st no nr jr sr prof rev fr mt ft vs etc apt ave rd sgt capt gen lt col hon messrs vol fig dept univ est".split(" "),
);

const isCcTld = (tld: string) => /^[a-z]{2}$/.test(tld) && (EXTRA_CC_TLDS.has(tld) || isSupportedCountry(tld.toUpperCase() as never));
const isKnownTld = (tld: string) => GENERIC_TLDS.has(tld) || IDN_TLDS.has(tld) || tld.startsWith("xn--") || isCcTld(tld);

/** Invisible characters a link can hide behind: soft hyphen, zero-width spaces and joiners, BOM. */
const INVISIBLE = /[\u00AD\u034F\u180E\u200B-\u200F\u2060-\u2064\uFEFF]/g;
/**
 * Characters that read as a full stop. Browsers turn the first three into "." in a host name
 * (UTS 46); NFKC already maps U+FF0E, U+FE52 and U+2024, the rest stay look-alikes.
 */
const DOT_LIKE = /[\u3002\uFF0E\uFF61\uFE52\u2024\u06D4\u0701\u0702\u2E3C\uA4F8]/g;
/** "evil[.]com", "evil(dot)com": the ways a link is written to dodge a filter. */
const BRACKETED_DOT = /[ \t]*[[({][ \t]*(?:\.|dot)[ \t]*[\])}][ \t]*/gi;

/** The text as a reader (or a browser) sees it: compatibility forms folded, dots made dots. */
function asRead(text: string): string {
  return text.normalize("NFKC").replace(INVISIBLE, "").replace(DOT_LIKE, ".").replace(BRACKETED_DOT, ".");
}

/** `x://`, and the web schemes with any slashes (`https:/x`, `http:\\x`): browsers accept those. */
const SCHEME_RE = /:\/\/[^\s]|(?<![\p{L}\p{N}])(?:https?|ftp|wss?)[ \t]*:[ \t]*[\\/]/iu;
/**
 * Schemes that act without `//`, written without a space after the colon ("JavaScript: fun" and
 * "Tel: 555" are prose); `data:` only with a media type or a comma ("data: 5GB" is prose too).
 */
const BARE_SCHEME_RE = /(?<![\p{L}\p{N}])(?:(?:mailto|intent|javascript|vbscript):\S|data:[ \t]*(?:[a-z]+\/[a-z0-9.+-]+|[;,]))/iu;
const WWW_RE = /(?<![\p{L}\p{N}])www\d{0,3}\./iu;
/** An HTML anchor: `<a href=…>`, `<A>`, or any `href=`. */
const ANCHOR_RE = /<[ \t]*a(?:[\s>/])|(?<![\p{L}\p{N}])href[ \t]*=/iu;
const IPV4_RE = /(?<![\p{L}\p{N}.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{N}]|\.\p{N})/gu;
const LABEL = "[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,61}[\\p{L}\\p{N}])?";
/** A host name: labels and a final label of letters (or IDN `xn--`), not inside a longer word or an e-mail address. */
const DOMAIN_RE = new RegExp(`(?<![\\p{L}\\p{N}@._-])((?:${LABEL}\\.)+)(\\p{L}{2,24}|xn--[a-z0-9-]{1,59})(?![\\p{L}\\p{N}_-])`, "giu");
/** `evil .example/x`, `evil . com/x`, `evil. com/x`: a host with spaces around its last dot, then a path or port. */
const SPACED_DOMAIN_RE = new RegExp(`(?<![\\p{L}\\p{N}@._-])${LABEL}([ \\t]*)\\.([ \\t]*)(\\p{L}{2,24})(?=\\/[\\p{L}\\p{N}]|:\\d)`, "gu");
/** `user@evil.example/login` is not an e-mail address: browsers read the part before `@` as a user name. */
const AT_HOST_PATH_RE = new RegExp(`@(?:${LABEL}\\.)+\\p{L}{2,24}(?:\\/|:\\d)`, "u");

/**
 * True when `text` holds a link a reader could follow: a URL (`http://…`, `https:/…`), `www.…`,
 * a bare domain (`bank.com`, `evil.example/login`, `ｅｖｉｌ.com`, `evil。example`), an IPv4 host,
 * a `mailto:`/`javascript:`/`data:` URI or an HTML anchor. Full-width and other compatibility
 * forms, zero-width characters and dot look-alikes are normalised first. E-mail addresses,
 * abbreviations ("Dr. Smith", "e.g.", "Mr.Smith"), numbers, prices, times and versions are not
 * links (docs/api-decisions.md, "Hostile input, round two: template names, the links rule,
 * outbound addresses").
 */
export function containsLink(text: string): boolean {
  const t = asRead(text);
  if (SCHEME_RE.test(t) || BARE_SCHEME_RE.test(t) || WWW_RE.test(t) || ANCHOR_RE.test(t) || AT_HOST_PATH_RE.test(t)) return true;
  IPV4_RE.lastIndex = 0;
  for (let m = IPV4_RE.exec(t); m !== null; m = IPV4_RE.exec(t)) {
    if (m.slice(1, 5).every((o) => Number(o) <= 255)) return true;
  }
  DOMAIN_RE.lastIndex = 0;
  for (let m = DOMAIN_RE.exec(t); m !== null; m = DOMAIN_RE.exec(t)) {
    const after = t.slice(m.index + m[0].length);
    if (after.startsWith("/") || /^:\d/.test(after)) return true;
    const tld = m[2].toLowerCase();
    if (GENERIC_TLDS.has(tld) || IDN_TLDS.has(tld) || tld.startsWith("xn--")) return true;
    if (isCcTld(tld)) {
      const labels = m[1].slice(0, -1);
      if (!(labels.indexOf(".") < 0 && ABBREVIATIONS.has(labels.toLowerCase()))) return true;
    }
  }
  // Spaces around the last dot: only lower-case endings, so prose such as "I code in .NET/C#"
  // or "Yes. No/maybe" stays text. A space before the dot (never in prose) takes any known
  // ending; a space only after it (as after a full stop) takes a generic one (`com`, `net` …).
  SPACED_DOMAIN_RE.lastIndex = 0;
  for (let m = SPACED_DOMAIN_RE.exec(t); m !== null; m = SPACED_DOMAIN_RE.exec(t)) {
    const [, before, afterDot, tld] = m;
    if (tld !== tld.toLowerCase() || (before === "" && afterDot === "")) continue;
    if (before !== "" ? isKnownTld(tld) : GENERIC_TLDS.has(tld)) return true;
  }
  return false;
}

/** Which submitted values a template variable inserts ("fullName" inserts both names). */
const SOURCES_OF: ReadonlyMap<string, readonly string[]> = new Map([["fullName", ["firstName", "lastName"]]]);
/** Variables whose value is not free text a visitor chose (or was checked as an address). */
const NOT_FREE_TEXT = new Set(["phoneNumber", "email", "formName", "date", "time"]);

/**
 * The links rule and the value cap on the values a message inserts: every failure, one per field.
 * `variables` are the template's placeholder names.
 */
export function checkInsertedValues(
  v: SubmissionValue,
  variables: readonly string[],
  fields: readonly FieldDef[],
  allowLinks: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const variable of variables) {
    // A Map: a placeholder such as {{constructor}} is a field name, not a key of Object.prototype.
    for (const name of SOURCES_OF.get(variable) ?? [variable]) {
      if (seen.has(name) || NOT_FREE_TEXT.has(name)) continue;
      seen.add(name);
      const value =
        name === "firstName" ? v.firstName : name === "lastName" ? v.lastName : name === "source" ? v.source : Object.hasOwn(v.custom, name) ? v.custom[name] : undefined;
      if (value === undefined) continue;
      const def = fields.find((f) => f.name === name);
      if (def?.type === "email" || def?.type === "phone") continue;
      const declaredMax = def?.validation?.maxLength;
      const cap = typeof declaredMax === "number" && declaredMax > MAX_INSERTED_VALUE_LENGTH ? declaredMax : MAX_INSERTED_VALUE_LENGTH;
      // Code points: never more than UTF-16 units, so only a long value needs counting.
      let length = value.length;
      if (length > cap) {
        length = 0;
        for (const _ of value) length++;
      }
      if (length > cap) {
        errors.push({
          field: name,
          message: `${name} must be at most ${cap} characters (it is put into the text message)`,
          requirement: `max ${cap} characters`,
          provided: value.slice(0, 100),
          visitor: SAY.tooLong(fieldLabel(name, def), cap),
        });
        continue;
      }
      if (!allowLinks && def?.type !== "url" && containsLink(value)) {
        errors.push({
          field: name,
          message: `${name} must not contain a link or web address (it is put into the text message)`,
          requirement: "no links",
          provided: value.slice(0, 100),
          visitor: SAY.noLinks(fieldLabel(name, def)),
        });
      }
    }
  }
  return errors;
}

/** Number types a protected form refuses even though v1 accepts them: pumping and relay targets. */
const REFUSED_TYPES_WHEN_RESTRICTED = new Set(["VOIP", "PERSONAL_NUMBER", "TOLL_FREE", "PREMIUM_RATE", "SHARED_COST", "UAN"]);

/** allowedCountries: null when the E.164 number may receive texts from this form, else the error. */
export function checkCountry(e164: string, allowed: readonly string[], fields: readonly FieldDef[] = []): FieldError | null {
  const own = declaredLabel(fields.find((f) => f.name === "phoneNumber"));
  // Always E.164 here (normalizePhone's output): the fast path answers it.
  const parsed = parsePhone(e164);
  const country = parsed?.country;
  const list = allowed.join(", ");
  if (!parsed || !country || !allowed.includes(country)) {
    return {
      field: "phoneNumber",
      message: `phoneNumber must be a number in ${list}`,
      requirement: `a number in ${list}`,
      provided: e164,
      visitor: SAY.phone(own, allowed),
    };
  }
  const type = parsed.type;
  if (type && REFUSED_TYPES_WHEN_RESTRICTED.has(type)) {
    return {
      field: "phoneNumber",
      message: "phoneNumber must be a personal mobile number (internet, personal-routing and premium numbers are refused)",
      requirement: "a mobile number",
      provided: e164,
      visitor: SAY.personalMobile(own),
    };
  }
  return null;
}
