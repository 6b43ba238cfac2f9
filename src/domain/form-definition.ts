/**
 * Validation of a form's definition: its fields, settings and message template, as posted to the
 * forms API (create and update). Every problem is reported, each as a {field, message} item with a
 * path such as `fields[2].validation.minLength` or `settings.timezone`.
 */
import { PRIORITIES, type Priority } from "./statuses";
import { isSupportedCountry } from "libphonenumber-js/max";
import type { FieldError } from "./submission";
// A form's zone follows the rule of analytics and stats, so a zone a form accepts is always one
// its statistics accept as their default.
import { isValidTimeZone } from "./time-series";
import { fallbackProblems, MAX_FALLBACK_LENGTH } from "./template";
import { PROTECTION_SETTING_KEYS, validateProtectionSettings } from "./protection";
import {
  codePointLength,
  compilePattern,
  DATE_FORMATS,
  DEFAULT_DATE_FORMAT,
  hasNestedUnboundedQuantifier,
  parseDateBound,
  parseDateInFormat,
  type DateFormat,
} from "./field-values";

// The value formats a field may declare have their own module; re-exported for this module's callers.
export { codePointLength, compilePattern, DATE_FORMATS, DEFAULT_DATE_FORMAT, hasNestedUnboundedQuantifier, parseDateBound, parseDateInFormat, type DateFormat };
import { DEFAULT_MAX_ATTEMPTS, maxAttemptsError } from "./retry-policy";

/**
 * longText: free text on several lines (a textarea), up to MAX_LONG_TEXT_LENGTH characters.
 * timezone: an IANA zone name that becomes the contact's own zone (docs/forms.md, "The customer's time zone").
 */
export const FIELD_TYPES = ["text", "longText", "email", "phone", "number", "url", "date", "timezone"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_FIELD_NAME_LENGTH = 64;
export const MAX_FIELDS_PER_FORM = 100;
export const MAX_LABEL_LENGTH = 200;
export const MAX_PATTERN_LENGTH = 500;
export const MAX_CUSTOM_MESSAGE_LENGTH = 500;
export const MAX_TEMPLATE_LENGTH = 1600;
export const MAX_DELAY_MINUTES = 525_600; // one year

/** Validation keys accepted per field type; `message` (custom error text) is accepted for all. */
export const VALIDATION_KEYS: Record<FieldType, readonly string[]> = {
  text: ["minLength", "maxLength", "pattern"],
  longText: ["minLength", "maxLength"],
  email: ["domains", "required"],
  phone: ["format", "regions"],
  number: ["min", "max", "integer"],
  url: ["protocols", "domains"],
  date: ["format", "min", "max"],
  timezone: [],
};

export const URL_PROTOCOLS = ["http", "https"] as const;
export const PHONE_FORMATS = ["national", "international"] as const;


// One home for the list (src/domain/statuses.ts); re-exported for the form rules' callers.
export { PRIORITIES, type Priority };

/** Names the webhook always knows; declaring them adds their type's checks on top. */
export const BUILTIN_FIELD_NAMES = ["firstName", "lastName", "email", "phoneNumber", "source"] as const;

/** Types a built-in name may be declared with (anything else would refuse every submission). */
/** A Map: a field named `constructor` or `toString` must not find Object.prototype's members. */
const BUILTIN_FIELD_TYPES: ReadonlyMap<string, readonly FieldType[]> = new Map<string, readonly FieldType[]>([
  ["firstName", ["text"]],
  ["lastName", ["text"]],
  ["source", ["text"]],
  ["email", ["email", "text"]],
  ["phoneNumber", ["phone", "text"]],
]);

const FIELD_KEYS = ["name", "type", "required", "label", "placeholder", "validation"];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

// ---------------------------------------------------------------------------------------------
// Fields

function checkDomains(v: unknown, path: string, errors: FieldError[]): void {
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    !v.every((d) => typeof d === "string" && d.trim() !== "" && d.length <= 253 && !/\s/.test(d))
  ) {
    errors.push({ field: path, message: "domains must be a non-empty array of domain names" });
  }
}

function checkValidation(type: FieldType, validation: unknown, path: string, errors: FieldError[]): void {
  if (validation === undefined || validation === null) return;
  if (!isPlainObject(validation)) {
    errors.push({ field: path, message: "validation must be an object" });
    return;
  }
  const allowed = VALIDATION_KEYS[type];
  for (const key of Object.keys(validation)) {
    if (key !== "message" && !allowed.includes(key)) {
      errors.push({
        field: `${path}.${key}`,
        message: `unknown validation key '${key}' for type ${type}; allowed: ${[...allowed, "message"].join(", ")}`,
      });
    }
  }
  const v = validation;
  const has = (k: string) => Object.hasOwn(v, k) && allowed.includes(k);

  if (Object.hasOwn(v, "message")) {
    const m = v.message;
    if (typeof m !== "string" || m.trim() === "" || codePointLength(m) > MAX_CUSTOM_MESSAGE_LENGTH) {
      errors.push({
        field: `${path}.message`,
        message: `message must be a non-empty string of at most ${MAX_CUSTOM_MESSAGE_LENGTH} characters`,
      });
    }
  }

  switch (type) {
    case "text":
    case "longText": {
      let okMin = true;
      let okMax = true;
      if (has("minLength") && !isNonNegativeInteger(v.minLength)) {
        okMin = false;
        errors.push({ field: `${path}.minLength`, message: "minLength must be a non-negative integer" });
      }
      if (has("maxLength") && !isNonNegativeInteger(v.maxLength)) {
        okMax = false;
        errors.push({ field: `${path}.maxLength`, message: "maxLength must be a non-negative integer" });
      }
      if (has("minLength") && has("maxLength") && okMin && okMax && (v.minLength as number) > (v.maxLength as number)) {
        errors.push({ field: `${path}.minLength`, message: "minLength must not be greater than maxLength" });
      }
      if (has("pattern")) {
        const p = v.pattern;
        if (typeof p !== "string" || p === "") {
          errors.push({ field: `${path}.pattern`, message: "pattern must be a non-empty string" });
        } else if (p.length > MAX_PATTERN_LENGTH) {
          errors.push({ field: `${path}.pattern`, message: `pattern must be at most ${MAX_PATTERN_LENGTH} characters` });
        } else if (!compilePattern(p)) {
          errors.push({ field: `${path}.pattern`, message: "pattern is not a valid regular expression" });
        } else if (hasNestedUnboundedQuantifier(p)) {
          errors.push({
            field: `${path}.pattern`,
            message: "pattern repeats a group that itself repeats without bound (e.g. (a+)+); it could make matching hang",
          });
        }
      }
      break;
    }
    case "email": {
      if (has("domains")) checkDomains(v.domains, `${path}.domains`, errors);
      if (has("required") && typeof v.required !== "boolean") {
        errors.push({ field: `${path}.required`, message: "required must be a boolean" });
      }
      break;
    }
    case "phone": {
      if (has("format") && !(PHONE_FORMATS as readonly unknown[]).includes(v.format)) {
        errors.push({ field: `${path}.format`, message: `format must be one of ${PHONE_FORMATS.join(", ")}` });
      }
      if (has("regions")) {
        const r = v.regions;
        if (!Array.isArray(r) || r.length === 0) {
          errors.push({ field: `${path}.regions`, message: "regions must be a non-empty array of two-letter country codes" });
        } else {
          r.forEach((code, i) => {
            if (typeof code !== "string" || !/^[A-Za-z]{2}$/.test(code) || !isSupportedCountry(code.toUpperCase() as never)) {
              errors.push({
                field: `${path}.regions[${i}]`,
                message: "each region must be a two-letter ISO country code with a telephone numbering plan, e.g. US",
              });
            }
          });
        }
      }
      break;
    }
    case "number": {
      const bad = (k: "min" | "max") => typeof v[k] !== "number" || !Number.isFinite(v[k] as number);
      if (has("min") && bad("min")) errors.push({ field: `${path}.min`, message: "min must be a number" });
      if (has("max") && bad("max")) errors.push({ field: `${path}.max`, message: "max must be a number" });
      if (has("min") && has("max") && !bad("min") && !bad("max") && (v.min as number) > (v.max as number)) {
        errors.push({ field: `${path}.min`, message: "min must not be greater than max" });
      }
      if (has("integer") && typeof v.integer !== "boolean") {
        errors.push({ field: `${path}.integer`, message: "integer must be a boolean" });
      }
      break;
    }
    case "url": {
      if (has("protocols")) {
        const p = v.protocols;
        if (
          !Array.isArray(p) ||
          p.length === 0 ||
          !p.every((x) => (URL_PROTOCOLS as readonly unknown[]).includes(x))
        ) {
          errors.push({
            field: `${path}.protocols`,
            message: `protocols must be a non-empty array of: ${URL_PROTOCOLS.join(", ")}`,
          });
        }
      }
      if (has("domains")) checkDomains(v.domains, `${path}.domains`, errors);
      break;
    }
    case "date": {
      let format: DateFormat = DEFAULT_DATE_FORMAT;
      if (has("format")) {
        if ((DATE_FORMATS as readonly unknown[]).includes(v.format)) format = v.format as DateFormat;
        else {
          errors.push({ field: `${path}.format`, message: `format must be one of ${DATE_FORMATS.join(", ")}` });
        }
      }
      const min = has("min") ? parseDateBound(v.min, format) : null;
      const max = has("max") ? parseDateBound(v.max, format) : null;
      if (has("min") && !min) {
        errors.push({ field: `${path}.min`, message: `min must be a date written as ${format} (or YYYY-MM-DD)` });
      }
      if (has("max") && !max) {
        errors.push({ field: `${path}.max`, message: `max must be a date written as ${format} (or YYYY-MM-DD)` });
      }
      if (min && max && min > max) errors.push({ field: `${path}.min`, message: "min must not be after max" });
      break;
    }
  }
}

/** Every problem in a form's `fields` array (empty when it is valid). */
export function validateFormFields(fields: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (fields === undefined || fields === null || (Array.isArray(fields) && fields.length === 0)) {
    return [{ field: "fields", message: "fields needs at least one field" }];
  }
  if (!Array.isArray(fields)) return [{ field: "fields", message: "fields must be an array of field definitions" }];
  if (fields.length > MAX_FIELDS_PER_FORM) {
    return [{ field: "fields", message: `fields may hold at most ${MAX_FIELDS_PER_FORM} fields` }];
  }
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const path = `fields[${i}]`;
    if (!isPlainObject(f)) {
      errors.push({ field: path, message: "each field must be an object with name and type" });
      return;
    }
    for (const key of Object.keys(f)) {
      if (!FIELD_KEYS.includes(key)) {
        errors.push({ field: `${path}.${key}`, message: `unknown field property '${key}'; allowed: ${FIELD_KEYS.join(", ")}` });
      }
    }

    const name = f.name;
    let nameOk = false;
    if (typeof name !== "string" || name === "") {
      errors.push({ field: `${path}.name`, message: "name is required" });
    } else if (name.length > MAX_FIELD_NAME_LENGTH) {
      errors.push({ field: `${path}.name`, message: `name must be at most ${MAX_FIELD_NAME_LENGTH} characters` });
    } else if (!FIELD_NAME_PATTERN.test(name)) {
      errors.push({
        field: `${path}.name`,
        message: "name must start with a letter or _ and contain only letters, digits and _",
      });
    } else if (seen.has(name)) {
      errors.push({ field: `${path}.name`, message: `duplicate field name '${name}'` });
    } else {
      seen.add(name);
      nameOk = true;
    }

    const type = f.type;
    const typeOk = (FIELD_TYPES as readonly unknown[]).includes(type);
    if (!typeOk) {
      errors.push({ field: `${path}.type`, message: `type must be one of ${FIELD_TYPES.join(", ")}` });
    } else {
      const builtinTypes = nameOk ? BUILTIN_FIELD_TYPES.get(name as string) : undefined;
      if (builtinTypes !== undefined && !builtinTypes.includes(type as FieldType)) {
        errors.push({ field: `${path}.type`, message: `built-in field '${name}' may only be declared as ${builtinTypes.join(" or ")}` });
      }
    }

    if (f.required !== undefined && typeof f.required !== "boolean") {
      errors.push({ field: `${path}.required`, message: "required must be a boolean" });
    }
    for (const k of ["label", "placeholder"] as const) {
      const val = f[k];
      if (val !== undefined && val !== null && (typeof val !== "string" || codePointLength(val) > MAX_LABEL_LENGTH)) {
        errors.push({ field: `${path}.${k}`, message: `${k} must be a string of at most ${MAX_LABEL_LENGTH} characters` });
      }
    }
    if (typeOk) checkValidation(type as FieldType, f.validation, `${path}.validation`, errors);
    else if (f.validation !== undefined && f.validation !== null && !isPlainObject(f.validation)) {
      errors.push({ field: `${path}.validation`, message: "validation must be an object" });
    }
  });
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Settings

export interface FormSettings {
  autoSend: boolean;
  delayMinutes: number;
  timezone: string;
  /** null: no per-form daily limit. */
  rateLimitPerDay: number | null;
  defaultPriority: Priority;
  /** Attempts per message before a transient failure is final (retry-policy.ts). */
  maxAttempts: number;
  /** The posted field that must hold a truthy value before a text is sent; null = none. */
  consentField: string | null;
  /** The language its texts are written in (a BCP 47 tag): how dates read in them ("Thu, Dec 10"). */
  language: string;
}

export const DEFAULT_FORM_SETTINGS: Readonly<FormSettings> = Object.freeze({
  autoSend: true,
  delayMinutes: 0,
  timezone: "UTC",
  rateLimitPerDay: null,
  defaultPriority: "normal",
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  consentField: null,
  language: "en-US",
});

const SETTINGS_KEYS: string[] = [...Object.keys(DEFAULT_FORM_SETTINGS), ...PROTECTION_SETTING_KEYS];
/** A consent checkbox's name (settings.consentField). */
const CONSENT_FIELD_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,99}$/;

/**
 * Every problem in a form's `settings` (undefined/null settings are valid: all defaults).
 * `fields` (the form's fields, when known) and `storedCaptcha` serve the protection settings.
 */
export function validateFormSettings(settings: unknown, fields?: unknown, storedCaptcha?: unknown): FieldError[] {
  if (settings === undefined || settings === null) return [];
  if (!isPlainObject(settings)) return [{ field: "settings", message: "settings must be an object" }];
  const errors: FieldError[] = [];
  const s = settings;
  for (const key of Object.keys(s)) {
    if (!SETTINGS_KEYS.includes(key)) {
      errors.push({ field: `settings.${key}`, message: `unknown setting '${key}'; allowed: ${SETTINGS_KEYS.join(", ")}` });
    }
  }
  if (s.autoSend !== undefined && typeof s.autoSend !== "boolean") {
    errors.push({ field: "settings.autoSend", message: "autoSend must be a boolean" });
  }
  if (s.delayMinutes !== undefined && !(isNonNegativeInteger(s.delayMinutes) && s.delayMinutes <= MAX_DELAY_MINUTES)) {
    errors.push({ field: "settings.delayMinutes", message: `delayMinutes must be an integer from 0 to ${MAX_DELAY_MINUTES}` });
  }
  if (s.timezone !== undefined && !isValidTimeZone(s.timezone)) {
    errors.push({ field: "settings.timezone", message: "timezone must be an IANA time zone such as UTC or America/New_York" });
  }
  if (
    s.rateLimitPerDay !== undefined &&
    s.rateLimitPerDay !== null &&
    !(typeof s.rateLimitPerDay === "number" && Number.isSafeInteger(s.rateLimitPerDay) && s.rateLimitPerDay >= 1)
  ) {
    errors.push({ field: "settings.rateLimitPerDay", message: "rateLimitPerDay must be an integer of at least 1, or null for no limit" });
  }
  if (s.defaultPriority !== undefined && !(PRIORITIES as readonly unknown[]).includes(s.defaultPriority)) {
    errors.push({ field: "settings.defaultPriority", message: `defaultPriority must be one of ${PRIORITIES.join(", ")}` });
  }
  errors.push(...validateProtectionSettings(s, fields, storedCaptcha));
  const attemptsErr = maxAttemptsError(s.maxAttempts);
  if (attemptsErr) errors.push({ field: "settings.maxAttempts", message: attemptsErr });
  if (s.consentField !== undefined && s.consentField !== null && !(typeof s.consentField === "string" && CONSENT_FIELD_RE.test(s.consentField))) {
    errors.push({ field: "settings.consentField", message: "consentField must be the name of the form's consent checkbox (letters, digits, _ or -, up to 100), or null" });
  }
  if (s.language !== undefined && !isKnownLanguage(s.language)) {
    errors.push({ field: "settings.language", message: "language must be a language tag such as en-US, en-GB, fr or de-CH" });
  }
  return errors;
}

/**
 * Settings with defaults filled in. Call on settings that passed validateFormSettings; on update,
 * merge the stored settings with the posted ones first (a posted null clears rateLimitPerDay).
 */
export function resolveFormSettings(settings: unknown): FormSettings {
  const s = isPlainObject(settings) ? settings : {};
  return {
    autoSend: typeof s.autoSend === "boolean" ? s.autoSend : DEFAULT_FORM_SETTINGS.autoSend,
    delayMinutes: isNonNegativeInteger(s.delayMinutes) ? s.delayMinutes : DEFAULT_FORM_SETTINGS.delayMinutes,
    timezone: isValidTimeZone(s.timezone) ? s.timezone : DEFAULT_FORM_SETTINGS.timezone,
    rateLimitPerDay:
      typeof s.rateLimitPerDay === "number" && s.rateLimitPerDay >= 1 ? s.rateLimitPerDay : DEFAULT_FORM_SETTINGS.rateLimitPerDay,
    defaultPriority: (PRIORITIES as readonly unknown[]).includes(s.defaultPriority)
      ? (s.defaultPriority as Priority)
      : DEFAULT_FORM_SETTINGS.defaultPriority,
    maxAttempts: maxAttemptsError(s.maxAttempts) === null && typeof s.maxAttempts === "number" ? s.maxAttempts : DEFAULT_FORM_SETTINGS.maxAttempts,
    consentField: typeof s.consentField === "string" && CONSENT_FIELD_RE.test(s.consentField) ? s.consentField : null,
    language: isKnownLanguage(s.language) ? s.language : DEFAULT_FORM_SETTINGS.language,
  };
}

/** A language tag the server can write dates in (Intl knows it). */
export function isKnownLanguage(v: unknown): v is string {
  if (typeof v !== "string" || v.length === 0 || v.length > 35 || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(v)) return false;
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([v]).length > 0;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Template

/** Problems with a form's messageTemplate: required, non-blank, at most 1600 characters. */
export function validateTemplate(t: unknown): FieldError[] {
  if (t === undefined || t === null || (typeof t === "string" && t.trim() === "")) {
    return [{ field: "messageTemplate", message: "messageTemplate is required" }];
  }
  if (typeof t !== "string") return [{ field: "messageTemplate", message: "messageTemplate must be a string" }];
  if (codePointLength(t) > MAX_TEMPLATE_LENGTH) {
    return [{ field: "messageTemplate", message: `messageTemplate must be at most ${MAX_TEMPLATE_LENGTH} characters` }];
  }
  return fallbackProblems(t).map((p) => ({
    field: "messageTemplate",
    message: `messageTemplate: "${p}" is not a valid fallback; write {{name | text}} with 1-${MAX_FALLBACK_LENGTH} characters of text and no {, }, | or line break`,
  }));
}
