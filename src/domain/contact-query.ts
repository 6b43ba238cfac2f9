/**
 * Parsing of the contacts list / search / export / analytics parameters. Every bad
 * value is reported by parameter name with the allowed values; nothing here touches the database.
 */
import { splitTags } from "./tags";
import { CONTACT_STATUSES, isContactStatus, type ContactStatus, isValidCustomFieldName } from "./contact-update";
import { enumError, parsePaging, parsePeriodAndZone, parseQueryDate } from "./query-params";
import type { Period } from "./time-series";
import { phoneDigits } from "./phone";
import type { FieldError } from "./submission";

export const CONTACT_SORT_FIELDS = ["createdAt", "updatedAt", "firstName", "lastName"] as const;
export type ContactSortField = (typeof CONTACT_SORT_FIELDS)[number];
export const MAX_FILTER_TAGS = 20;
export const MAX_SEARCH_LENGTH = 200;

export interface ContactFilter {
  status?: ContactStatus;
  /** Contacts having ALL of these tags. */
  tags?: string[];
  formId?: string;
  /** Inclusive, ISO UTC. */
  createdAfter?: string;
  /** Exclusive, ISO UTC. */
  createdBefore?: string;
  /** Lower-cased text, or phone digits when the search looks like a phone number. */
  search?: string;
  /** Exact custom field matches (POST /contacts/search). */
  customFields?: Record<string, string>;
  /** Opted out of texts or not. */
  optedOut?: boolean;
}

export interface ContactListQuery extends ContactFilter {
  page: number;
  limit: number;
  sortBy: ContactSortField;
  order: "asc" | "desc";
}

type Raw = Record<string, unknown>;

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return String(v);
}

/** "YYYY-MM-DD" (UTC midnight) or a full ISO 8601 date-time → ISO UTC with ms. */
export function parseDateParam(v: string): string | null {
  const ms = parseQueryDate(v);
  return ms === null ? null : new Date(ms).toISOString();
}

/** Tags separated by commas or semicolons → list (splitTags); empty items ignored. */
export function parseTagList(v: string | undefined, name: string, errors: FieldError[]): string[] | undefined {
  if (v === undefined) return undefined;
  const tags = splitTags(v);
  if (tags.length === 0) return undefined;
  if (tags.length > MAX_FILTER_TAGS) {
    errors.push({ field: name, message: `${name} may list at most ${MAX_FILTER_TAGS} tags`, requirement: `at most ${MAX_FILTER_TAGS} tags`, provided: tags.length });
    return undefined;
  }
  return tags;
}

/** What `search` is matched as: phone digits when it is written like a phone number, else text. */
export function searchPattern(q: string): string {
  const s = q.trim();
  if (/\d/.test(s) && /^[\d\s()+\-./]+$/.test(s)) return phoneDigits(s);
  return s.toLowerCase();
}

export function parseFilter(raw: Raw, errors: FieldError[]): ContactFilter {
  const f: ContactFilter = {};
  const status = str(raw.status);
  if (status !== undefined && status !== "") {
    if (isContactStatus(status)) f.status = status;
    else errors.push(enumError("status", CONTACT_STATUSES, status.slice(0, 100)));
  }
  const tags = parseTagList(str(raw.tags), "tags", errors);
  if (tags) f.tags = tags;
  const formId = str(raw.formId);
  if (formId !== undefined && formId !== "") f.formId = formId;
  for (const k of ["createdAfter", "createdBefore"] as const) {
    const v = str(raw[k]);
    if (v === undefined || v === "") continue;
    const d = parseDateParam(v);
    if (d === null) errors.push({ field: k, message: `${k} must be an ISO 8601 date or date-time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z)`, requirement: "ISO 8601 date", provided: v.slice(0, 100) });
    else f[k] = d;
  }
  const optedOut = str(raw.optedOut);
  if (optedOut !== undefined && optedOut !== "") {
    if (optedOut === "true" || optedOut === "false") f.optedOut = optedOut === "true";
    else errors.push(enumError("optedOut", ["true", "false"], optedOut.slice(0, 100)));
  }
  const search = str(raw.search);
  if (search !== undefined && search.trim() !== "") {
    if (search.length > MAX_SEARCH_LENGTH) errors.push({ field: "search", message: `search must be at most ${MAX_SEARCH_LENGTH} characters`, requirement: `at most ${MAX_SEARCH_LENGTH} characters`, provided: search.slice(0, 100) });
    else f.search = searchPattern(search);
  }
  return f;
}

export function parseSort(raw: Raw, errors: FieldError[]): { sortBy: ContactSortField; order: "asc" | "desc" } {
  let sortBy: ContactSortField = "createdAt";
  let order: "asc" | "desc" = "desc";
  const s = str(raw.sortBy);
  if (s !== undefined && s !== "") {
    if ((CONTACT_SORT_FIELDS as readonly string[]).includes(s)) sortBy = s as ContactSortField;
    else errors.push(enumError("sortBy", CONTACT_SORT_FIELDS, s.slice(0, 100)));
  }
  const o = str(raw.order);
  if (o !== undefined && o !== "") {
    if (o === "asc" || o === "desc") order = o;
    else errors.push(enumError("order", ["asc", "desc"], o.slice(0, 100)));
  }
  return { sortBy, order };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export function parseListQuery(raw: Raw): Parsed<ContactListQuery> {
  const errors: FieldError[] = [];
  const value = { ...parseFilter(raw, errors), ...parsePaging(raw, errors), ...parseSort(raw, errors) };
  return errors.length ? { ok: false, errors } : { ok: true, value };
}

/** POST /contacts/search: {customFields, tags?, status?, page?, limit?, sortBy?, order?}. */
export function parseSearchBody(body: unknown): Parsed<ContactListQuery> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ field: "body", message: "body must be a JSON object", requirement: "object", provided: null }] };
  }
  const b = body as Raw;
  const errors: FieldError[] = [];
  const allowed = ["customFields", "tags", "status", "page", "limit", "sortBy", "order"];
  for (const k of Object.keys(b)) {
    if (!allowed.includes(k)) errors.push({ field: k, message: `${k} is not a search parameter; allowed: ${allowed.join(", ")}`, requirement: allowed.join(", "), provided: k });
  }
  const f: ContactFilter = {};
  const cf = b.customFields;
  if (cf === undefined || typeof cf !== "object" || cf === null || Array.isArray(cf)) {
    errors.push({ field: "customFields", message: "customFields must be an object of field name to the value to match", requirement: "object of strings", provided: null });
  } else {
    // A Map: a custom field named `__proto__` is searched for like any other.
    const out = new Map<string, string>();
    for (const [k, v] of Object.entries(cf)) {
      if (!isValidCustomFieldName(k)) errors.push({ field: `customFields.${k}`, message: "custom field names are 1-64 characters without quotes, backslashes or control characters", requirement: "valid field name", provided: k.slice(0, 100) });
      else if (typeof v !== "string") errors.push({ field: `customFields.${k}`, message: `customFields.${k} must be a string`, requirement: "string", provided: v === undefined ? null : (v as unknown) });
      else out.set(k, v);
    }
    if (out.size > 20) errors.push({ field: "customFields", message: "customFields may name at most 20 fields", requirement: "at most 20 fields", provided: out.size });
    if (out.size) f.customFields = Object.fromEntries(out);
  }
  if (b.tags !== undefined) {
    let list: string[] | undefined;
    if (typeof b.tags === "string") list = parseTagList(b.tags, "tags", errors);
    else if (Array.isArray(b.tags) && b.tags.every((t) => typeof t === "string")) list = parseTagList((b.tags as string[]).join(","), "tags", errors);
    else errors.push({ field: "tags", message: "tags must be an array of strings", requirement: "array of strings", provided: null });
    if (list) f.tags = list;
  }
  if (b.status !== undefined) {
    if (isContactStatus(b.status)) f.status = b.status;
    else errors.push(enumError("status", CONTACT_STATUSES, typeof b.status === "string" ? b.status.slice(0, 100) : null));
  }
  const paging = parsePaging({ page: b.page, limit: b.limit }, errors);
  const sort = parseSort({ sortBy: b.sortBy, order: b.order }, errors);
  return errors.length ? { ok: false, errors } : { ok: true, value: { ...f, ...paging, ...sort } };
}

export interface AnalyticsQuery {
  period: Period;
  formId?: string;
  timezone: string;
}

export function parseAnalyticsQuery(raw: Raw): Parsed<AnalyticsQuery> {
  const errors: FieldError[] = [];
  // An empty parameter is an absent one here, as for every contacts filter.
  const { period, timezone } = parsePeriodAndZone(str(raw.period) || undefined, str(raw.timezone), errors);
  const formId = str(raw.formId);
  return errors.length ? { ok: false, errors } : { ok: true, value: { period, timezone, formId: formId || undefined } };
}
