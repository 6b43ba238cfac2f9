/**
 * The FTS5 trigram index `contacts_fts` (drizzle/0002_contact_search_index.sql) over
 * contacts.search_text and contacts.custom_fields, used as a PRE-FILTER only: a trigram phrase
 * query finds every row containing the text as a substring, but it folds case (and folds a few
 * letters such as "ſ" to "s"), so it may also find rows the exact test would not. Callers keep the
 * exact test (instr / json_extract) after it: the result is exactly what the exact test alone
 * gives, read from the index instead of a full scan.
 *
 * Cost: ~140 trigrams per contact, and FTS5 flushes its pending terms at every statement
 * savepoint, so a trigger-fed insert cost ~55-60 us. Since migration 0023 a new contact is not
 * indexed by its writer: it waits in contacts_fts_pending and the applier Worker indexes pending
 * contacts in multi-row chunks (db/stores/contacts/search-pending.ts); searches also read the pending
 * rows, through the same exact tests.
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
