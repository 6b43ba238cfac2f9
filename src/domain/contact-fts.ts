/**
 * The FTS5 trigram index `contacts_fts` (drizzle/0002_contact_search_index.sql) over
 * contacts.search_text and contacts.custom_fields, used as a PRE-FILTER only: a trigram phrase
 * query finds every row containing the text as a substring, but it folds case (and folds a few
 * letters such as "ſ" to "s"), so it may also find rows the exact test would not. Callers keep the
 * exact test (instr / json_extract) after it: the result is exactly what the exact test alone
 * gives, read from the index instead of a full scan.
 *
 * Cost: the triggers write ~140 trigrams per contact, and FTS5 flushes its pending terms at every
 * statement savepoint, so a trigger-fed insert costs ~60 us (bulk import of 100k contacts: ~5 s ->
 * ~12 s). Feeding the index from the writers instead (no trigger) measured ~3x cheaper, at the
 * price of every writer having to remember it.
 */
export type FtsColumn = "search_text" | "custom_fields";

/** Trigrams need three characters (code points); shorter text cannot be looked up. */
export const FTS_MIN_CHARS = 3;

/**
 * The MATCH expression finding rows whose `column` contains `text`, or null when the index cannot
 * answer (fewer than 3 code points, or control characters, which are left to the exact scan).
 */
export function ftsMatch(column: FtsColumn, text: string): string | null {
  if ([...text].length < FTS_MIN_CHARS) return null;
  if (/[\u0000-\u001f\u007f]/.test(text)) return null;
  return `{${column}} : "${text.replace(/"/g, '""')}"`;
}
