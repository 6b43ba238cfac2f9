/**
 * New contacts written many rows per INSERT statement (the CSV/XLSX import).
 *
 * Why: the FTS5 trigger on contacts (drizzle/0002) flushes the index's pending terms at the end
 * of every statement, so one INSERT per contact pays a flush per contact; one INSERT of 100
 * contacts pays one. Measured on the 2-core machine: 5,000 contacts in 100-row statements
 * 1.2 s against 2.7–2.9 s one statement each (same transactions). Tags need no
 * statement of their own: contact_tags follows the tags column by trigger (migration 0020).
 *
 * The caller keeps the order of effects: rows wait here only until `flush`, which the import
 * calls before anything else reads or writes contacts (a repeated phone, an update, an opt-out)
 * and before its transaction commits.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { recordFormRows } from "../../derived-counts";

/** Columns of a new contact, in the order of `contactInsertValues`. */
export const CONTACT_INSERT_COLUMNS = `(id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags,
    last_contacted_at, last_response_at, message_count, source, notes, search_text, created_at, updated_at, consent, time_zone)`;
/** One row's placeholders: last_contacted_at starts NULL and message_count 0. */
export const CONTACT_INSERT_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 0, ?, ?, ?, ?, ?, ?, ?)";
const PARAMS_PER_ROW = 18;
/** Where account_id, form_id and created_at sit in a row's values. */
const ACCOUNT_ID_AT = 1;
const FORM_ID_AT = 7;
const CREATED_AT_AT = 14;

/** Rows per statement: 100 × 18 parameters, well under SQLite's 32,766. */
export const CONTACT_BATCH_ROWS = 100;

export interface PendingContact {
  id: string;
  phoneNumber: string;
  /** The 18 values of CONTACT_INSERT_ROW, in order. */
  values: SQLQueryBindings[];
}

export class ContactInsertBatch {
  private rows: PendingContact[] = [];
  private phones = new Set<string>();

  constructor(private readonly sqlite: Database) {}

  get size(): number {
    return this.rows.length;
  }

  /** Whether a contact with this number waits here (then flush before looking it up). */
  hasPhone(phone: string): boolean {
    return this.phones.has(phone);
  }

  add(row: PendingContact): void {
    if (row.values.length !== PARAMS_PER_ROW) throw new Error(`a contact row has ${PARAMS_PER_ROW} values, got ${row.values.length}`);
    this.rows.push(row);
    this.phones.add(row.phoneNumber);
  }

  /** Writes every waiting contact (its tags by trigger); returns their ids in the order they were added. */
  flush(): string[] {
    const rows = this.rows;
    if (rows.length === 0) return [];
    this.rows = [];
    this.phones.clear();
    for (let at = 0; at < rows.length; at += CONTACT_BATCH_ROWS) {
      const part = rows.slice(at, at + CONTACT_BATCH_ROWS);
      this.run(`INSERT INTO contacts ${CONTACT_INSERT_COLUMNS} VALUES `, CONTACT_INSERT_ROW, part.length, CONTACT_BATCH_ROWS, part.flatMap((r) => r.values));
    }
    for (const r of rows) recordContactInsert(this.sqlite, r.values);
    return rows.map((r) => r.id);
  }

  /**
   * Runs `head` with `n` copies of `row`, as statements of `full` rows and then of halving sizes
   * (64, 32, …, 1 rows): a slice's last rows reuse the same few prepared statements instead of
   * compiling one of their exact size at the end of every slice (compiling a 100-row INSERT costs
   * about as much as running it). The statements stay in the connection's cache: at most eight,
   * whatever the row counts.
   */
  private run(head: string, row: string, n: number, full: number, values: SQLQueryBindings[]): void {
    const perRow = values.length / n;
    let at = 0;
    while (at < n) {
      const size = chunkSize(n - at, full);
      this.sqlite.query(head + Array(size).fill(row).join(", ")).run(...values.slice(at * perRow, (at + size) * perRow));
      at += size;
    }
  }
}

/**
 * A contact inserted with CONTACT_INSERT_ROW's values: one more new contact of its form in the
 * form's rollup rows (migration 0022); a contact of no form is in no form's stats.
 */
export function recordContactInsert(sqlite: Database, values: SQLQueryBindings[]): void {
  const formId = values[FORM_ID_AT];
  if (typeof formId !== "string") return;
  recordFormRows(sqlite, { accountId: values[ACCOUNT_ID_AT] as string, formId, createdAt: values[CREATED_AT_AT] as string, submissions: 0, newContacts: 1 });
}

/** The largest statement size that fits `left` rows: `full`, else the largest power of two ≤ left. */
export function chunkSize(left: number, full: number): number {
  if (left >= full) return full;
  let size = 1;
  while (size * 2 <= left) size *= 2;
  return size;
}
