import { parseIsoTimestamp } from "./message-transitions";
import { canonicalTimeZone, isPeriod, PERIODS, type Period } from "./time-series";
import type { FieldError } from "./submission";

/**
 * Query parameters shared by every list: one reading of a date, one wording of an enum error,
 * one reading of an analytics period and zone.
 */

/** Lists: page ≥ 1 (default 1), 1 ≤ limit ≤ 100 (default 50) — CONTRACT §3. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** The highest page number a list accepts (contacts, forms and messages alike). */
export const MAX_PAGE = 1_000_000;

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
