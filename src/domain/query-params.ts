import { parseIsoTimestamp } from "./message-transitions";
import { canonicalTimeZone, isPeriod, PERIODS, type Period } from "./time-series";
import type { FieldError } from "./submission";

/**
 * Query parameters shared by every list: one reading of a date, one wording of an enum error,
 * one reading of an analytics period and zone.
 */

/** Lists: page ≥ 1 (default 1), 1 ≤ limit ≤ 100 (default 50). */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** The highest page number a list accepts (every list alike). */
export const MAX_PAGE = 1_000_000;

/**
 * A whole-number query value from `min` to `max`: digits only, nothing else ("1e3", "0x10", " 1",
 * "1.0", "-0" are refused, as is anything past the range, however long), so no value reaches SQL
 * as an unsafe integer or an offset past the end of the table. Absent or empty: `def`. A bad value
 * is pushed to `errors` as "<name> must be an integer from <min> to <max>"
 * (docs/api-decisions.md, "Hostile input, round two").
 */
export function parseIntParam(value: unknown, name: string, def: number, min: number, max: number, errors: FieldError[]): number {
  if (value === undefined || value === null || value === "") return def;
  const v = String(value);
  // At most 16 digits read: a longer run is out of every range, and Number() of it would round.
  const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) {
    errors.push({ field: name, message: `${name} must be an integer from ${min} to ${max}`, requirement: `integer ${min}-${max}`, provided: v.slice(0, 100) });
    return def;
  }
  return n;
}

/**
 * THE reading of `page` and `limit`, for every paginated list (query string or search body):
 * page 1-MAX_PAGE (default 1), limit 1-MAX_PAGE_SIZE (default DEFAULT_PAGE_SIZE).
 */
export function parsePaging(raw: { page?: unknown; limit?: unknown }, errors: FieldError[]): { page: number; limit: number } {
  return {
    page: parseIntParam(raw.page, "page", 1, 1, MAX_PAGE, errors),
    limit: parseIntParam(raw.limit, "limit", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE, errors),
  };
}

export const DEFAULT_PERIOD: Period = "30d";

/** A query date: any ISO 8601 date-time (zone optional, UTC assumed) or a plain YYYY-MM-DD (00:00 UTC). */
export function parseQueryDate(value: string): number | null {
  const s = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return parseIsoTimestamp(`${s}T00:00:00Z`);
  return parseIsoTimestamp(s);
}

/** "status must be one of queued, sent, failed, cancelled" with the spec's details fields. */
export function enumError(field: string, allowed: readonly string[], provided: unknown) {
  return { field, message: `${field} must be one of ${allowed.join(", ")}`, requirement: `one of ${allowed.join(", ")}`, provided };
}

/**
 * An analytics period (absent → 30d) and IANA zone (absent or empty → `defaultZone`, names made
 * canonical). A bad value is pushed to `errors` naming the parameter and the allowed values.
 */
export function parsePeriodAndZone(
  period: string | undefined,
  timezone: string | undefined,
  errors: FieldError[],
  defaultZone = "UTC",
): { period: Period; timezone: string } {
  let p = DEFAULT_PERIOD;
  if (period !== undefined) {
    if (isPeriod(period)) p = period;
    else errors.push(enumError("period", PERIODS, period.slice(0, 100)));
  }
  let tz = defaultZone;
  if (timezone !== undefined && timezone !== "") {
    const c = canonicalTimeZone(timezone);
    if (c) tz = c;
    else errors.push({ field: "timezone", message: "timezone must be an IANA time zone name, e.g. America/New_York", requirement: "IANA time zone name", provided: timezone.slice(0, 100) });
  }
  return { period: p, timezone: tz };
}
