/**
 * Validation of one webhook submission against its form's field definitions.
 *
 * Every field's problem is reported (one error per field: the first rule it breaks), each with
 * the offending `field`, a `message`, a short `requirement` and the value as `provided`.
 * The result splits the known names (phoneNumber, firstName, lastName, email, source) from every
 * other submitted key, which becomes a custom field value (a string).
 */
import { normalizePhone, type PhoneFormat } from "./phone";
import { SAY, declaredLabel, fieldLabel } from "./visitor-words";
import { parseContactTimeZone } from "./contact-time-zone";
import {
  BUILTIN_FIELD_NAMES,
  DEFAULT_DATE_FORMAT,
  codePointLength,
  compilePattern,
  parseDateBound,
  parseDateInFormat,
  type DateFormat,
  type FieldType,
} from "./form-definition";

export interface FieldError {
  field: string;
  message: string;
  requirement?: string;
  provided?: unknown;
  /** What a website visitor reads: the field's label and plain words (src/domain/visitor-words.ts). */
  visitor?: string;
}

/** Keys a field's `validation` object may hold; which ones apply depends on the field's type. */
export interface FieldValidation {
  /** Custom error text used for every failure of this field. */
  message?: string;
  // text
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  // email (+ domains for url)
  domains?: string[];
  /** email: same as the field's `required`. */
  required?: boolean;
  // phone: "national" | "international"; date: one of DATE_FORMATS
  format?: string;
  regions?: string[];
  // number: numbers; date: dates in the field's format (or YYYY-MM-DD)
  min?: number | string;
  max?: number | string;
  integer?: boolean;
  // url
  protocols?: string[];
}

export interface FieldDef {
  name: string;
  type: FieldType;
  required?: boolean;
  label?: string;
  placeholder?: string;
  validation?: FieldValidation;
}

export interface SubmissionValue {
  /** E.164. */
  phoneNumber: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  source?: string;
  /** The value of the form's first `timezone` field, when posted: the contact's own zone. */
  timeZone?: string;
  /** Every other submitted, non-empty key (declared or not) as a string; phone fields in E.164. */
  custom: Record<string, string>;
}

export type SubmissionResult = { ok: true; value: SubmissionValue } | { ok: false; errors: FieldError[] };

export interface ValidateSubmissionOptions {
  /** Longest custom field value, in characters. Default 500. */
  maxCustomLength?: number;
}

export const MAX_PERSON_NAME_LENGTH = 50;
export const MAX_EMAIL_LENGTH = 254;
export const MAX_SOURCE_LENGTH = 100;
export const MAX_CUSTOM_VALUE_LENGTH = 500;
/** Longest value of a declared longText field, in characters. */
export const MAX_LONG_TEXT_LENGTH = 5_000;
export const MAX_CUSTOM_KEY_LENGTH = 64;
/** `provided` in an error echoes at most this many characters of the posted value. */
export const MAX_PROVIDED_LENGTH = 100;

const EMAIL_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const EMAIL_LABEL = "[A-Za-z0-9\\u00a1-\\uffff](?:[A-Za-z0-9\\u00a1-\\uffff-]{0,61}[A-Za-z0-9\\u00a1-\\uffff])?";
const EMAIL_TLD = "(?:[A-Za-z\\u00a1-\\uffff]{2,63}|xn--[A-Za-z0-9-]{1,59})";
/** Pragmatic address shape: dot-atom local part @ dotted host name with an alphabetic TLD. */
const EMAIL_RE = new RegExp(`^${EMAIL_ATOM}(?:\\.${EMAIL_ATOM})*@(?:${EMAIL_LABEL}\\.)+${EMAIL_TLD}$`);

/** Whether `s` looks like a deliverable e-mail address (local@domain.tld, ≤ 254 characters). */
export function isValidEmail(s: string): boolean {
  if (s.length > MAX_EMAIL_LENGTH) return false;
  const at = s.lastIndexOf("@");
  if (at < 1 || at > 64) return false;
  return EMAIL_RE.test(s);
}

function truncate(s: string, n: number): string {
  if (s.length <= n) return s;
  let out = "";
  let count = 0;
  for (const ch of s) {
    if (count++ >= n) break;
    out += ch;
  }
  return out;
}

/** The posted value for an error's `provided`: strings cut to 100 characters, objects as JSON. */
function providedOf(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "string") return truncate(v, MAX_PROVIDED_LENGTH);
  if (typeof v === "object" && v !== null) {
    let json: string;
    try {
      json = JSON.stringify(v) ?? "";
    } catch {
      json = String(v);
    }
    return truncate(json, MAX_PROVIDED_LENGTH);
  }
  return v;
}

type Scalar = { kind: "absent" } | { kind: "bad" } | { kind: "value"; text: string };

/**
 * A posted value as text: strings trimmed; finite numbers and booleans converted; null, missing
 * and blank (whitespace-only) values are absent; objects, arrays and the rest are "bad".
 */
function scalarOf(v: unknown): Scalar {
  if (v === undefined || v === null) return { kind: "absent" };
  if (typeof v === "string") {
    const t = v.trim();
    return t === "" ? { kind: "absent" } : { kind: "value", text: t };
  }
  if (typeof v === "number") return Number.isFinite(v) ? { kind: "value", text: String(v) } : { kind: "bad" };
  if (typeof v === "boolean") return { kind: "value", text: String(v) };
  return { kind: "bad" };
}

type Check = { ok: true; value: string } | { ok: false; message: string; requirement: string; visitor: string };

const pass = (value: string): Check => ({ ok: true, value });
const failure = (message: string, requirement: string, visitor: string): Check => ({ ok: false, message, requirement, visitor });

function hostMatches(host: string, domains: readonly string[], allowSubdomains: boolean): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return domains.some((d) => {
    const want = String(d).trim().toLowerCase().replace(/^\*?\.|^@/, "").replace(/\.$/, "");
    return h === want || (allowSubdomains && h.endsWith("." + want));
  });
}

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The rules of a field's type and validation keys, applied to a present value. The visitor's
 * sentence names the field by its label (`def`), worked out only for a value that fails: this
 * runs for every key of every submission.
 */
function checkByType(name: string, type: FieldType, text: string, raw: unknown, v: FieldValidation, def: FieldDef | undefined): Check {
  switch (type) {
    case "text":
    case "longText": {
      const len = codePointLength(text);
      if (typeof v.minLength === "number" && len < v.minLength) {
        return failure(`${name} must be at least ${v.minLength} characters`, `minLength ${v.minLength}`, SAY.tooShort(fieldLabel(name, def), v.minLength));
      }
      if (typeof v.maxLength === "number" && len > v.maxLength) {
        return failure(`${name} must be at most ${v.maxLength} characters`, `maxLength ${v.maxLength}`, SAY.tooLong(fieldLabel(name, def), v.maxLength));
      }
      if (typeof v.pattern === "string") {
        // Unanchored, like RegExp#test: a pattern that must match the whole value anchors itself.
        const re = compilePattern(v.pattern);
        if (!re || !re.test(text)) return failure(`${name} has an invalid format`, `match pattern ${v.pattern}`, SAY.format(fieldLabel(name, def)));
      }
      return pass(text);
    }
    case "email": {
      if (!isValidEmail(text)) return failure(`${name} must be a valid e-mail address`, "valid e-mail address", SAY.email(fieldLabel(name, def)));
      if (Array.isArray(v.domains) && v.domains.length > 0) {
        const domain = text.slice(text.lastIndexOf("@") + 1);
        if (!hostMatches(domain, v.domains, false)) {
          return failure(`${name} must be an address at ${v.domains.join(", ")}`, `e-mail domain one of ${v.domains.join(", ")}`, SAY.emailDomain(fieldLabel(name, def), v.domains));
        }
      }
      return pass(text);
    }
    case "phone": {
      const r = normalizePhone(text, {
        regions: Array.isArray(v.regions) ? v.regions : undefined,
        format: v.format === "national" || v.format === "international" ? (v.format as PhoneFormat) : undefined,
        label: name,
        visitorLabel: declaredLabel(def),
      });
      return r.ok ? pass(r.e164) : failure(r.message, r.requirement, r.visitor);
    }
    case "number": {
      const n = typeof raw === "number" ? raw : NUMERIC.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n)) return failure(`${name} must be a number`, "number", SAY.number(fieldLabel(name, def)));
      if (v.integer === true && !Number.isInteger(n)) return failure(`${name} must be a whole number`, "integer", SAY.wholeNumber(fieldLabel(name, def)));
      if (typeof v.min === "number" && n < v.min) return failure(`${name} must be at least ${v.min}`, `min ${v.min}`, SAY.atLeast(fieldLabel(name, def), v.min));
      if (typeof v.max === "number" && n > v.max) return failure(`${name} must be at most ${v.max}`, `max ${v.max}`, SAY.atMost(fieldLabel(name, def), v.max));
      return pass(text);
    }
    case "url": {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        return failure(`${name} must be a full URL such as https://example.com`, "absolute URL", SAY.url(fieldLabel(name, def)));
      }
      // No protocols listed: http and https only (never javascript:, data:, file: …).
      const protocols = Array.isArray(v.protocols) && v.protocols.length > 0 ? v.protocols : ["http", "https"];
      const protocol = url.protocol.replace(/:$/, "").toLowerCase();
      if (!protocols.map((p) => String(p).toLowerCase()).includes(protocol)) {
        return failure(`${name} must use ${protocols.join(" or ")}`, `one of ${protocols.join(", ")}`, SAY.urlProtocol(fieldLabel(name, def), protocols.map(String)));
      }
      if (url.hostname === "") return failure(`${name} must be a full URL such as https://example.com`, "absolute URL", SAY.url(fieldLabel(name, def)));
      if (Array.isArray(v.domains) && v.domains.length > 0 && !hostMatches(url.hostname, v.domains, true)) {
        return failure(`${name} must be a link to ${v.domains.join(", ")}`, `domain one of ${v.domains.join(", ")}`, SAY.urlDomain(fieldLabel(name, def), v.domains));
      }
      return pass(text);
    }
    case "date": {
      const format = (typeof v.format === "string" ? v.format : DEFAULT_DATE_FORMAT) as DateFormat;
      const iso = parseDateInFormat(text, format);
      if (!iso) return failure(`${name} must be a real date written as ${format}`, `date as ${format}`, SAY.date(fieldLabel(name, def), format));
      const min = v.min !== undefined ? parseDateBound(v.min, format) : null;
      const max = v.max !== undefined ? parseDateBound(v.max, format) : null;
      if (min && iso < min) return failure(`${name} must be on or after ${v.min}`, `min ${v.min}`, SAY.dateFrom(fieldLabel(name, def), String(v.min)));
      if (max && iso > max) return failure(`${name} must be on or before ${v.max}`, `max ${v.max}`, SAY.dateUntil(fieldLabel(name, def), String(v.max)));
      return pass(text);
    }
    case "timezone": {
      // Stored in its canonical spelling; it sets the contact's own zone (docs/forms.md, "The customer's time zone").
      const zone = parseContactTimeZone(text);
      return zone ? pass(zone) : failure(`${name} must be an IANA time zone such as Europe/London`, "IANA time zone name", SAY.timeZone(fieldLabel(name, def)));
    }
  }
}

const BUILTINS: ReadonlySet<string> = new Set(BUILTIN_FIELD_NAMES);

export function validateSubmission(
  body: Record<string, unknown>,
  fields: FieldDef[],
  opts: ValidateSubmissionOptions = {},
): SubmissionResult {
  const maxCustom = opts.maxCustomLength ?? MAX_CUSTOM_VALUE_LENGTH;
  const errors: FieldError[] = [];
  // Own keys only: a posted `constructor` or `__proto__` is a field like any other, and an
  // absent one never reads Object.prototype (docs/api-decisions.md, "Hostile input, round two").
  const own = (k: string) => Object.hasOwn(body, k);
  const get = (k: string) => (own(k) ? body[k] : undefined);

  const declared = new Map<string, FieldDef>();
  for (const f of fields ?? []) if (f && typeof f.name === "string" && !declared.has(f.name)) declared.set(f.name, f);

  /**
   * Record a failure of `key`; a declared field's custom message replaces ours for a value that
   * breaks its rules, never for a missing one ("x is required" stays).
   */
  const report = (key: string, message: string, requirement: string, visitor: string) => {
    const custom = requirement === "required" ? undefined : declared.get(key)?.validation?.message;
    const own = typeof custom === "string" && custom !== "";
    errors.push({
      field: key,
      message: own ? custom : message,
      requirement,
      provided: providedOf(get(key)),
      // The owner's own words are what the owner wants visitors to read.
      visitor: own ? custom : visitor,
    });
  };

  /**
   * Checks common to every key: shape, required, the built-in rule (if any), then the declared
   * field's type rules. Returns the stored text, or undefined when absent or failed.
   */
  const checkKey = (key: string, builtin?: (text: string, def: FieldDef | undefined) => Check, maxLength = maxCustom): string | undefined => {
    const def = declared.get(key);
    const v: FieldValidation = def?.validation && typeof def.validation === "object" ? def.validation : {};
    const required = key === "phoneNumber" || def?.required === true || (def?.type === "email" && v.required === true);
    const s = scalarOf(get(key));
    if (s.kind === "bad") {
      report(key, `${key} must be a string`, "string, number or boolean", SAY.notText(fieldLabel(key, def)));
      return undefined;
    }
    if (s.kind === "absent") {
      if (required) report(key, `${key} is required`, "required", SAY.required(fieldLabel(key, def)));
      return undefined;
    }
    if (codePointLength(s.text) > maxLength) {
      report(key, `${key} must be at most ${maxLength} characters`, `max ${maxLength} characters`, SAY.tooLong(fieldLabel(key, def), maxLength));
      return undefined;
    }
    let stored = s.text;
    if (builtin) {
      const r = builtin(s.text, def);
      if (!r.ok) {
        report(key, r.message, r.requirement, r.visitor);
        return undefined;
      }
      stored = r.value;
    }
    if (def) {
      const r = checkByType(key, def.type, s.text, get(key), v, def);
      if (!r.ok) {
        report(key, r.message, r.requirement, r.visitor);
        return undefined;
      }
      // A declared phone field stores its E.164 form; the built-in phoneNumber already does.
      if (def.type === "phone" && !builtin) stored = r.value;
      // A declared time zone stores its canonical spelling (the contact's zone reads the same).
      if (def.type === "timezone") stored = r.value;
    }
    return stored;
  };

  const phoneDef = declared.get("phoneNumber");
  const phoneNumber = checkKey(
    "phoneNumber",
    (text, def) => {
      // A declared phone-type phoneNumber brings its regions/format; checkByType re-checks the same.
      const v = phoneDef?.type === "phone" ? (phoneDef.validation ?? {}) : {};
      const r = normalizePhone(text, {
        regions: Array.isArray(v.regions) ? v.regions : undefined,
        format: v.format === "national" || v.format === "international" ? (v.format as PhoneFormat) : undefined,
        label: "phoneNumber",
        visitorLabel: declaredLabel(def),
      });
      return r.ok ? pass(r.e164) : failure(r.message, r.requirement, r.visitor);
    },
    Number.MAX_SAFE_INTEGER,
  );
  const firstName = checkKey("firstName", undefined, MAX_PERSON_NAME_LENGTH);
  const lastName = checkKey("lastName", undefined, MAX_PERSON_NAME_LENGTH);
  const email = checkKey(
    "email",
    (text) => (isValidEmail(text) ? pass(text) : failure("email must be a valid e-mail address", "valid e-mail address", SAY.email(fieldLabel("email", declared.get("email"))))),
    MAX_EMAIL_LENGTH,
  );
  const source = checkKey("source", undefined, MAX_SOURCE_LENGTH);

  const custom: [string, string][] = [];
  const done = new Set<string>();

  // Declared fields first, in the form's order (so "required" errors come out in that order) …
  const keys = [...declared.keys(), ...Object.keys(body)];
  for (const key of keys) {
    if (BUILTINS.has(key) || done.has(key)) continue;
    done.add(key);
    if (!declared.has(key)) {
      // … then the undeclared keys, in the order they were posted.
      if (key === "") {
        errors.push({ field: key, message: `field name '${key}' is not allowed`, requirement: "field name", provided: providedOf(get(key)), visitor: SAY.badFieldName() });
        continue;
      }
      if (key.length > MAX_CUSTOM_KEY_LENGTH) {
        errors.push({
          field: truncate(key, MAX_PROVIDED_LENGTH),
          message: `field names must be at most ${MAX_CUSTOM_KEY_LENGTH} characters`,
          requirement: `field name max ${MAX_CUSTOM_KEY_LENGTH} characters`,
          provided: providedOf(get(key)),
          visitor: SAY.badFieldName(),
        });
        continue;
      }
    }
    // A long text ("Message") may hold a paragraph or two; any other value a line.
    const value = checkKey(key, undefined, declared.get(key)?.type === "longText" ? MAX_LONG_TEXT_LENGTH : maxCustom);
    if (value !== undefined) custom.push([key, value]);
  }

  if (errors.length > 0 || phoneNumber === undefined) return { ok: false, errors };
  // fromEntries defines own data properties, so a `__proto__` field stays a field.
  const value: SubmissionValue = { phoneNumber, custom: Object.fromEntries(custom) };
  if (firstName !== undefined) value.firstName = firstName;
  if (lastName !== undefined) value.lastName = lastName;
  if (email !== undefined) value.email = email;
  if (source !== undefined) value.source = source;
  for (const [name, def] of declared) {
    if (def.type === "timezone" && value.custom[name] !== undefined) {
      value.timeZone = value.custom[name];
      break;
    }
  }
  return { ok: true, value };
}
