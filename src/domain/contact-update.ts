/**
 * Validation of a contact's create / update body (PUT /contacts/<id>, POST /contacts, bulk,
 * import rows), and applying a validated patch to a contact's stored state.
 *
 * Rules (the API's Contact, and the decisions the spec leaves open; docs/api-decisions.md,
 * "Contacts"):
 * - firstName / lastName ≤ 50 characters; email must look deliverable; "" or null clears them.
 * - status is one of new, contacted, responded, converted (the error lists the four).
 * - tags REPLACE the contact's tags: an array of at most 50 non-empty strings of at most 50
 *   characters each, trimmed, duplicates dropped (first occurrence kept). `,` and `;` are
 *   refused inside a tag: the `tags=a,b` filter splits on commas and CSV exports join with `;`.
 * - customFields MERGE into the contact's: each value a string of at most 500 characters, or null
 *   to delete that key. Keys are 1-64 characters without `"`, `\` or control characters; a contact
 *   holds at most 100 custom fields.
 * - notes ≤ 5000 characters; source ≤ 100; lastResponseAt an ISO 8601 timestamp or null.
 * - timeZone is an IANA name Intl knows (stored in its canonical spelling), or null / "" to clear
 *   it (docs/contacts.md, "Time zone").
 * - phoneNumber is normalised to E.164 like the webhook does (US when no country code).
 * - Any other key is refused by name (read-only fields such as messageCount included), so a
 *   typo never looks like a successful update.
 *
 * Pure: no database, no clock.
 */
import { normalizePhone } from "./phone";
import { isValidEmail, MAX_PERSON_NAME_LENGTH, MAX_CUSTOM_VALUE_LENGTH, MAX_CUSTOM_KEY_LENGTH, MAX_SOURCE_LENGTH, type FieldError } from "./submission";
import { parseIsoTimestamp } from "./message-transitions";
import { parseContactTimeZone } from "./contact-time-zone";

export const CONTACT_STATUSES = ["new", "contacted", "responded", "converted"] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;
export const MAX_NOTES_LENGTH = 5_000;
export const MAX_CUSTOM_FIELDS = 100;

export const UPDATABLE_FIELDS = [
  "firstName",
  "lastName",
  "email",
  "phoneNumber",
  "status",
  "customFields",
  "tags",
  "notes",
  "source",
  "lastResponseAt",
  "timeZone",
] as const;

export function isContactStatus(v: unknown): v is ContactStatus {
  return typeof v === "string" && (CONTACT_STATUSES as readonly string[]).includes(v);
}

/** A validated change: absent keys leave the contact alone; null clears. */
export interface ContactPatch {
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  /** E.164. */
  phoneNumber?: string;
  status?: ContactStatus;
  /** Replaces the tags. */
  tags?: string[];
  /** Merged: null deletes the key. */
  customFields?: Record<string, string | null>;
  notes?: string | null;
  source?: string | null;
  /** ISO 8601 UTC with ms, or null. */
  lastResponseAt?: string | null;
  /** IANA, canonical; null clears (the form's zone applies). */
  timeZone?: string | null;
}

export type PatchResult = { ok: true; patch: ContactPatch } | { ok: false; errors: FieldError[] };

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Whether `s` holds more than `max` characters (code points, so an emoji counts once). A string
 * of at most `max` UTF-16 units cannot hold more code points: only longer ones are counted.
 */
export function longerThan(s: string, max: number): boolean {
  return s.length > max && [...s].length > max;
}

function cut(v: unknown): unknown {
  return typeof v === "string" && v.length > 100 ? v.slice(0, 100) : v;
}

function optionalText(
  body: Record<string, unknown>,
  key: string,
  max: number,
  errors: FieldError[],
  patch: Record<string, unknown>,
) {
  if (!Object.hasOwn(body, key)) return;
  const v = body[key];
  if (v === null) return void (patch[key] = null);
  if (typeof v !== "string") {
    errors.push({ field: key, message: `${key} must be a string or null`, requirement: "string", provided: cut(v) });
    return;
  }
  const s = v.trim();
  if (longerThan(s, max)) {
    errors.push({ field: key, message: `${key} must be at most ${max} characters`, requirement: `at most ${max} characters`, provided: cut(s) });
    return;
  }
  patch[key] = s === "" ? null : s;
}

/** Tags as stored: trimmed, de-duplicated; errors name tags[i]. */
export function validateTags(v: unknown, errors: FieldError[], field = "tags"): string[] | undefined {
  if (!Array.isArray(v)) {
    errors.push({ field, message: `${field} must be an array of strings`, requirement: "array of strings", provided: cut(v) });
    return undefined;
  }
  if (v.length > MAX_TAGS) {
    errors.push({ field, message: `${field} may hold at most ${MAX_TAGS} tags`, requirement: `at most ${MAX_TAGS} tags`, provided: v.length });
    return undefined;
  }
  const out: string[] = [];
  const before = errors.length;
  v.forEach((t, i) => {
    const f = `${field}[${i}]`;
    if (typeof t !== "string" || t.trim() === "") {
      errors.push({ field: f, message: `${f} must be a non-empty string`, requirement: "non-empty string", provided: cut(t) });
      return;
    }
    const s = t.trim();
    if (longerThan(s, MAX_TAG_LENGTH)) {
      errors.push({ field: f, message: `${f} must be at most ${MAX_TAG_LENGTH} characters`, requirement: `at most ${MAX_TAG_LENGTH} characters`, provided: cut(s) });
    } else if (/[,;]/.test(s) || CONTROL.test(s)) {
      errors.push({ field: f, message: `${f} may not contain commas, semicolons or control characters`, requirement: "no , or ; in a tag", provided: s });
    } else if (!out.includes(s)) out.push(s);
  });
  return errors.length === before ? out : undefined;
}

export function isValidCustomFieldName(k: string): boolean {
  return k.length >= 1 && k.length <= MAX_CUSTOM_KEY_LENGTH && !/["\\]/.test(k) && !CONTROL.test(k);
}

function validateCustomFields(v: unknown, errors: FieldError[]): Record<string, string | null> | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    errors.push({ field: "customFields", message: "customFields must be an object of string values", requirement: "object of strings", provided: cut(JSON.stringify(v)) });
    return undefined;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_CUSTOM_FIELDS) {
    errors.push({ field: "customFields", message: `customFields may hold at most ${MAX_CUSTOM_FIELDS} fields`, requirement: `at most ${MAX_CUSTOM_FIELDS} fields`, provided: entries.length });
    return undefined;
  }
  // Entries, then fromEntries: a custom field named `__proto__` is stored as a field, never as the
  // object's prototype (docs/api-decisions.md, "Hostile input, round two").
  const out: Array<[string, string | null]> = [];
  const before = errors.length;
  for (const [k, val] of entries) {
    const f = `customFields.${k}`;
    if (!isValidCustomFieldName(k)) {
      errors.push({ field: f, message: `custom field names must be 1-${MAX_CUSTOM_KEY_LENGTH} characters without quotes, backslashes or control characters`, requirement: "valid field name", provided: cut(k) });
    } else if (val === null) out.push([k, null]);
    else if (typeof val !== "string") {
      errors.push({ field: f, message: `${f} must be a string (or null to delete it)`, requirement: "string or null", provided: cut(val) });
    } else if (longerThan(val, MAX_CUSTOM_VALUE_LENGTH)) {
      errors.push({ field: f, message: `${f} must be at most ${MAX_CUSTOM_VALUE_LENGTH} characters`, requirement: `at most ${MAX_CUSTOM_VALUE_LENGTH} characters`, provided: cut(val) });
    } else out.push([k, val]);
  }
  return errors.length === before ? Object.fromEntries(out) : undefined;
}

export const STATUS_MESSAGE = `status must be one of ${CONTACT_STATUSES.join(", ")}`;

/**
 * Validates a create/update body. `mode: "create"` requires phoneNumber; `"bulk"` refuses it
 * (one phone number cannot belong to many contacts).
 */
export function validateContactInput(body: unknown, mode: "create" | "update" | "bulk"): PatchResult {
  const errors: FieldError[] = [];
  const field = mode === "bulk" ? "updates" : "body";
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ field, message: `${field} must be a JSON object`, requirement: "object", provided: null }] };
  }
  const b = body as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(b)) {
    if (!(UPDATABLE_FIELDS as readonly string[]).includes(k)) {
      errors.push({ field: k, message: `${k} is not a field that can be set; allowed: ${UPDATABLE_FIELDS.join(", ")}`, requirement: `one of ${UPDATABLE_FIELDS.join(", ")}`, provided: k });
    }
  }
  optionalText(b, "firstName", MAX_PERSON_NAME_LENGTH, errors, patch);
  optionalText(b, "lastName", MAX_PERSON_NAME_LENGTH, errors, patch);
  optionalText(b, "notes", MAX_NOTES_LENGTH, errors, patch);
  optionalText(b, "source", MAX_SOURCE_LENGTH, errors, patch);
  const has = (k: string) => Object.hasOwn(b, k);
  if (has("email")) {
    const v = b.email;
    if (v === null || v === "") patch.email = null;
    else if (typeof v !== "string" || !isValidEmail(v.trim())) {
      errors.push({ field: "email", message: "email must be a valid e-mail address", requirement: "valid e-mail format", provided: cut(v) });
    } else patch.email = v.trim();
  }
  if (has("status")) {
    if (isContactStatus(b.status)) patch.status = b.status;
    else errors.push({ field: "status", message: STATUS_MESSAGE, requirement: CONTACT_STATUSES.join(", "), provided: cut(b.status) ?? null });
  }
  if (has("tags")) {
    const tags = validateTags(b.tags, errors);
    if (tags) patch.tags = tags;
  }
  if (has("customFields")) {
    const cf = validateCustomFields(b.customFields, errors);
    if (cf) patch.customFields = cf;
  }
  if (has("lastResponseAt")) {
    const v = b.lastResponseAt;
    if (v === null || v === "") patch.lastResponseAt = null;
    else {
      const ms = parseIsoTimestamp(v);
      if (ms === null) {
        errors.push({ field: "lastResponseAt", message: "lastResponseAt must be an ISO 8601 timestamp or null", requirement: "ISO 8601 timestamp", provided: cut(v) });
      } else patch.lastResponseAt = new Date(ms).toISOString();
    }
  }
  if (has("timeZone")) {
    const v = b.timeZone;
    if (v === null || v === "") patch.timeZone = null;
    else {
      const zone = parseContactTimeZone(v);
      if (zone === null) {
        errors.push({ field: "timeZone", message: "timeZone must be an IANA time zone name such as Europe/London or America/Chicago", requirement: "IANA time zone name, or null to clear it", provided: cut(v) });
      } else patch.timeZone = zone;
    }
  }
  if (has("phoneNumber")) {
    if (mode === "bulk") {
      errors.push({ field: "phoneNumber", message: "phoneNumber cannot be set on many contacts at once", requirement: "absent in bulk updates", provided: cut(b.phoneNumber) });
    } else {
      const r = normalizePhone(b.phoneNumber, { label: "phoneNumber" });
      if (r.ok) patch.phoneNumber = r.e164;
      else errors.push({ field: "phoneNumber", message: r.message, requirement: r.requirement, provided: cut(b.phoneNumber) ?? null });
    }
  } else if (mode === "create") {
    errors.push({ field: "phoneNumber", message: "phoneNumber is required", requirement: "required", provided: null });
  }
  if (mode !== "create" && errors.length === 0 && Object.keys(patch).length === 0) {
    errors.push({ field, message: `nothing to update; give at least one of ${UPDATABLE_FIELDS.filter((f) => mode !== "bulk" || f !== "phoneNumber").join(", ")}`, requirement: "at least one field", provided: null });
  }
  return errors.length ? { ok: false, errors } : { ok: true, patch: patch as ContactPatch };
}

/** The parts of a stored contact a patch touches. */
export interface ContactState {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phoneNumber: string;
  status: ContactStatus;
  tags: string[];
  customFields: Record<string, string>;
  notes: string | null;
  source: string | null;
  lastResponseAt: string | null;
  /** The contact's own IANA zone; null = the form's. */
  timeZone: string | null;
}

/** A new contact: the defaults, then a validated create patch (which always holds phoneNumber). */
export function newContactState(patch: ContactPatch): ContactState {
  const empty: ContactState = { firstName: null, lastName: null, email: null, phoneNumber: patch.phoneNumber!, status: "new", tags: [], customFields: {}, notes: null, source: null, lastResponseAt: null, timeZone: null };
  return applyContactPatch(empty, patch);
}

/** Tags replace; custom fields merge (null deletes); everything else overwrites. */
export function applyContactPatch(current: ContactState, patch: ContactPatch): ContactState {
  const next: ContactState = { ...current, customFields: { ...current.customFields }, tags: [...current.tags] };
  for (const k of ["firstName", "lastName", "email", "notes", "source", "lastResponseAt", "timeZone"] as const) {
    if (patch[k] !== undefined) next[k] = patch[k] ?? null;
  }
  if (patch.phoneNumber !== undefined) next.phoneNumber = patch.phoneNumber;
  if (patch.status !== undefined) next.status = patch.status;
  if (patch.tags !== undefined) next.tags = [...patch.tags];
  if (patch.customFields) {
    // A Map: assigning `next.customFields["__proto__"]` would set the prototype, not a field.
    const merged = new Map(Object.entries(current.customFields));
    for (const [k, v] of Object.entries(patch.customFields)) {
      if (v === null) merged.delete(k);
      else merged.set(k, v);
    }
    next.customFields = Object.fromEntries(merged);
  }
  return next;
}

/** Whether the merged custom fields stay within the per-contact limit. */
export function customFieldsWithinLimit(cf: Record<string, string>): boolean {
  return Object.keys(cf).length <= MAX_CUSTOM_FIELDS;
}
