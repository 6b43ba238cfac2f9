/**
 * Every statement on the submissions the team reads (migration 0044): the account's list (the
 * inbox and GET /v1/submissions), one submission, a contact's, the CSV export's cursor, the
 * unread mark, and a contact's removal. The applier writes them (stores/intake-applier.ts).
 *
 * The account's list walks the primary key backwards (UUIDv7 ids: time order), so it needs no
 * index of its own; a contact's uses submissions_contact_idx, a form's submissions_form_created_idx
 * (docs/api-decisions.md, "The owner hears back", every request kept).
 */
import type { Database } from "bun:sqlite";
import type { forms, submissions } from "../schema/forms";

/**
 * A submission as stored (its values: a JSON object by field name, null before migration 0044),
 * with its form's name and field definitions (JSON) for the labels.
 */
type StoredRecord = Pick<typeof submissions.$inferSelect, "id" | "formId" | "contactId" | "formValues" | "createdAt" | "messageId" | "suppressed" | "readAt"> & {
  formName: (typeof forms.$inferSelect)["name"];
  formFields: (typeof forms.$inferSelect)["fields"];
};

/**
 * A submission with its form's name and field definitions for the labels: its values (an object
 * by field name; null before migration 0044 or when unreadable) and the fields parsed.
 */
export type SubmissionRecord = Omit<StoredRecord, "formValues" | "formFields"> & { formValues: Record<string, unknown> | null; formFields: unknown };

/** Stored JSON text, parsed; null for none or text that is not JSON. */
function parsedOrNull(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Turns stored rows into records, parsing each form's fields once (a page or an export shows many submissions of few forms). */
function recordMaker(): (r: StoredRecord) => SubmissionRecord {
  const fields = new Map<string, unknown>();
  return (r) => {
    let f = fields.get(r.formId);
    if (f === undefined) fields.set(r.formId, (f = parsedOrNull(r.formFields) ?? []));
    return { ...r, formFields: f, formValues: parsedOrNull(r.formValues) as Record<string, unknown> | null };
  };
}

/** Filters of the list, already checked (ISO instants; `suppressed`: any, none, or one reason). */
export interface SubmissionFilter {
  formId?: string;
  contactId?: string;
  from?: string;
  to?: string;
  suppressed?: "any" | "none" | string;
  unread?: boolean;
}

const COLUMNS = `s.id, s.form_id AS formId, f.name AS formName, f.fields AS formFields, s.contact_id AS contactId,
  s.form_values AS formValues, s.created_at AS createdAt, s.message_id AS messageId, s.suppressed, s.read_at AS readAt`;

function where(accountId: string, f: SubmissionFilter): { sql: string; params: string[] } {
  const sql = ["s.account_id = ?"];
  const params = [accountId];
  if (f.formId !== undefined) (sql.push("s.form_id = ?"), params.push(f.formId));
  if (f.contactId !== undefined) (sql.push("s.contact_id = ?"), params.push(f.contactId));
  if (f.from !== undefined) (sql.push("s.created_at >= ?"), params.push(f.from));
  if (f.to !== undefined) (sql.push("s.created_at < ?"), params.push(f.to));
  if (f.suppressed === "any") sql.push("s.suppressed IS NOT NULL");
  else if (f.suppressed === "none") sql.push("s.suppressed IS NULL");
  else if (f.suppressed !== undefined) (sql.push("s.suppressed = ?"), params.push(f.suppressed));
  if (f.unread === true) sql.push("s.read_at IS NULL");
  else if (f.unread === false) sql.push("s.read_at IS NOT NULL");
  return { sql: sql.join(" AND "), params };
}

/** Newest first (the id's time order; the id breaks ties of the same millisecond). */
export function listSubmissions(sqlite: Database, accountId: string, f: SubmissionFilter, limit: number, offset: number): SubmissionRecord[] {
  const w = where(accountId, f);
  const rows = sqlite
    .query(`SELECT ${COLUMNS} FROM submissions s JOIN forms f ON f.id = s.form_id WHERE ${w.sql} ORDER BY s.id DESC LIMIT ? OFFSET ?`)
    .all(...w.params, limit, offset) as StoredRecord[];
  return rows.map(recordMaker());
}

export function countSubmissions(sqlite: Database, accountId: string, f: SubmissionFilter): number {
  const w = where(accountId, f);
  return (sqlite.query(`SELECT count(*) AS n FROM submissions s WHERE ${w.sql}`).get(...w.params) as { n: number }).n;
}

/** Every submission the filter selects, newest first, read a row at a time (the CSV export). */
export function* iterateSubmissions(sqlite: Database, accountId: string, f: SubmissionFilter): IterableIterator<SubmissionRecord> {
  const w = where(accountId, f);
  const make = recordMaker();
  const rows = sqlite.query(`SELECT ${COLUMNS} FROM submissions s JOIN forms f ON f.id = s.form_id WHERE ${w.sql} ORDER BY s.id DESC`).iterate(...w.params) as IterableIterator<StoredRecord>;
  for (const r of rows) yield make(r);
}

/** The field names the filter's submissions hold, in the order first seen (the export's columns). */
export function submissionFieldNames(sqlite: Database, accountId: string, f: SubmissionFilter): string[] {
  const w = where(accountId, f);
  return (
    sqlite.query(`SELECT j.key AS k FROM submissions s, json_each(s.form_values) j WHERE ${w.sql} AND s.form_values IS NOT NULL GROUP BY j.key ORDER BY min(s.rowid), min(j.id)`).all(...w.params) as Array<{ k: string }>
  ).map((r) => r.k);
}

export function findSubmission(sqlite: Database, accountId: string, id: string): SubmissionRecord | null {
  const r = sqlite.query(`SELECT ${COLUMNS} FROM submissions s JOIN forms f ON f.id = s.form_id WHERE s.id = ? AND s.account_id = ?`).get(id, accountId) as StoredRecord | null;
  return r ? recordMaker()(r) : null;
}

/** The submission that queued a message (a conversation's first request). */
export function submissionOfMessage(sqlite: Database, accountId: string, contactId: string, messageId: string): SubmissionRecord | null {
  const r = sqlite
    .query(`SELECT ${COLUMNS} FROM submissions s JOIN forms f ON f.id = s.form_id WHERE s.contact_id = ? AND s.account_id = ? AND s.message_id = ? ORDER BY s.id LIMIT 1`)
    .get(contactId, accountId, messageId) as StoredRecord | null;
  return r ? recordMaker()(r) : null;
}

/** Marks submissions read (those still unread); returns how many were. */
export function markSubmissionsRead(sqlite: Database, accountId: string, ids: string[], at: string): number {
  return sqlite
    .query("UPDATE submissions SET read_at = ?3 WHERE account_id = ?1 AND read_at IS NULL AND id IN (SELECT value FROM json_each(?2))")
    .run(accountId, JSON.stringify(ids), at).changes;
}


/** Whether the account has this form / this contact (a filter naming another account's is 404). */
export function accountHas(sqlite: Database, accountId: string, table: "forms" | "contacts", id: string): boolean {
  return sqlite.query(`SELECT 1 FROM ${table} WHERE id = ? AND account_id = ?`).get(id, accountId) !== null;
}

/** The field definitions (parsed; null when unreadable) of the account's forms, or of one: the export's column labels. */
export function formFieldDefs(sqlite: Database, accountId: string, formId?: string): unknown[] {
  const rows = formId
    ? sqlite.query("SELECT fields FROM forms WHERE account_id = ? AND id = ?").all(accountId, formId)
    : sqlite.query("SELECT fields FROM forms WHERE account_id = ? ORDER BY created_at").all(accountId);
  return (rows as Array<Pick<typeof forms.$inferSelect, "fields">>).map((r) => parsedOrNull(r.fields));
}
