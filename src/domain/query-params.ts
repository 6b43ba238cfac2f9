import { parseIsoTimestamp } from "./message-transitions";

/**
 * Query parameters shared by every list: one reading of a date, one wording of an enum error.
 */

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
