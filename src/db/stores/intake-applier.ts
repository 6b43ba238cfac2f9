/**
 * The intake applier's statements: what an acknowledged webhook submission becomes (its contact
 * created or merged, its submission row, its queued message), in one-row and multi-row forms.
 * They span contacts, messages and submissions because the applier writes all three in one
 * batch on its own connection (services/intake/worker.ts): prepared once per connection, when
 * the applier starts, never per batch (docs/api-decisions.md, "One home per rule: accepting a
 * submission").
 */
import type { Database, Statement } from "bun:sqlite";
import type { contacts } from "../schema/contacts";
import { openSqlite } from "../open-sqlite";

type Contact = typeof contacts.$inferSelect;

/** What the applier reads of a stored contact to merge a resubmission into it. */
export type ApplierContact = Pick<Contact, "id" | "firstName" | "lastName" | "email" | "customFields" | "source">;

/** Rows per multi-row INSERT statement, largest first (what is left after the largest goes in smaller ones). */
const ROWS_PER_INSERT = [32, 8, 1];

/** INSERT (or UPDATE … FROM VALUES) statements over the same columns for each size in ROWS_PER_INSERT. */
export class MultiInsert {
  private readonly statements: Array<[number, Statement<unknown, any[]>]>;
  /** `tail` follows the VALUES list (an UPDATE … FROM (VALUES …) AS v WHERE …). */
  constructor(sqlite: Database, head: string, row: string, tail = "") {
    this.statements = ROWS_PER_INSERT.map((n) => [n, sqlite.prepare(`${head} VALUES ${Array(n).fill(row).join(", ")}${tail}`)]);
  }
  run(rows: unknown[][]): void {
    let i = 0;
    for (const [n, statement] of this.statements) {
      for (; i + n <= rows.length; i += n) statement.run(...(n === 1 ? rows[i] : rows.slice(i, i + n).flat()));
    }
  }
}

const CONTACT_COLUMNS = "id, first_name AS firstName, last_name AS lastName, email, custom_fields AS customFields, source";
const CONTACT_INSERT = `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at, consent)`;
const CONTACT_VALUES = "(?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?, ?)";
const MESSAGE_INSERT = `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name,
         status, priority, priority_rank, webhook_data, template_used, scheduled_for, retry_count, metadata, seq,
         lease_expiries, created_at, updated_at)`;
const MESSAGE_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)";
const SUBMISSION_INSERT = "INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at, form_values, suppressed)";
const SUBMISSION_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?)";

/** Every statement the applier runs, prepared on `sqlite`. */
export function intakeApplierStore(sqlite: Database) {
  return {
    contactByPhone: sqlite.prepare(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = ? AND phone_number = ?`) as Statement<ApplierContact, [string, string]>,
    /** A chunk's contacts of one account at once (`?2`: a JSON array of phone numbers). */
    contactsByPhones: sqlite.prepare(
      `SELECT c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName, c.email,
              c.custom_fields AS customFields, c.source
         FROM json_each(?2) j CROSS JOIN contacts c ON c.account_id = ?1 AND c.phone_number = j.value`,
    ) as Statement<ApplierContact & { phoneNumber: string }, [string, string]>,
    contactInsert: sqlite.prepare(`${CONTACT_INSERT} VALUES ${CONTACT_VALUES}`) as Statement<unknown, any[]>,
    contactUpdate: sqlite.prepare(
      `UPDATE contacts SET first_name = ?, last_name = ?, email = ?, custom_fields = ?, source = ?, search_text = ?, updated_at = ?
        WHERE id = ?`,
    ) as Statement<unknown, any[]>,
    /** A form's timezone field sets the contact's own zone (docs/forms.md, "The customer's time zone"). */
    contactTimeZone: sqlite.prepare("UPDATE contacts SET time_zone = ? WHERE id = ?") as Statement<unknown, [string, string]>,
    messageInsert: sqlite.prepare(`${MESSAGE_INSERT} VALUES ${MESSAGE_VALUES}`) as Statement<unknown, any[]>,
    submissionInsert: sqlite.prepare(`${SUBMISSION_INSERT} VALUES ${SUBMISSION_VALUES}`) as Statement<unknown, any[]>,
    contactInserts: new MultiInsert(sqlite, CONTACT_INSERT, CONTACT_VALUES),
    contactUpdates: new MultiInsert(
      sqlite,
      `UPDATE contacts SET first_name = v.column2, last_name = v.column3, email = v.column4, custom_fields = v.column5,
         source = v.column6, search_text = v.column7, updated_at = v.column8 FROM (`,
      "(?, ?, ?, ?, ?, ?, ?, ?)",
      ") AS v WHERE contacts.id = v.column1",
    ),
    /** A resubmission that changes nothing but updated_at: the name, email and search indexes are left alone. */
    contactTouches: new MultiInsert(sqlite, "UPDATE contacts SET updated_at = v.column2 FROM (", "(?, ?)", ") AS v WHERE contacts.id = v.column1"),
    messageInserts: new MultiInsert(sqlite, MESSAGE_INSERT, MESSAGE_VALUES),
    submissionInserts: new MultiInsert(sqlite, SUBMISSION_INSERT, SUBMISSION_VALUES),
    /** The batch's transaction, a chunk's savepoint, and one entry's (a failing row is skipped alone). */
    begin: sqlite.prepare("BEGIN IMMEDIATE"),
    commit: sqlite.prepare("COMMIT"),
    rollback: sqlite.prepare("ROLLBACK"),
    chunkSavepoint: sqlite.prepare("SAVEPOINT chunk"),
    chunkRelease: sqlite.prepare("RELEASE chunk"),
    chunkRollback: sqlite.prepare("ROLLBACK TO chunk"),
    savepoint: sqlite.prepare("SAVEPOINT entry"),
    release: sqlite.prepare("RELEASE entry"),
    rollbackTo: sqlite.prepare("ROLLBACK TO entry"),
  };
}

export type IntakeApplierStore = ReturnType<typeof intakeApplierStore>;

/** The applier Worker's own connection, with the settings only it uses. */
export function openApplierConnection(dbPath: string, cacheMb: number): Database {
  // The server's page cache size: a batch touches the contacts' and messages' indexes all over.
  const sqlite = openSqlite(dbPath, { create: false, cacheMb });
  // The intake row is the durable copy: these commits need no fsync of their own (a later
  // intake commit syncs the WAL they are in; lost, they are applied again from the intake).
  sqlite.exec("PRAGMA synchronous = NORMAL");
  // Checkpoints are the checkpoint thread's (or the main connection's, --checkpoint inline): an
  // automatic one here ran inside the applier's COMMIT, ~4× its cost.
  sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  return sqlite;
}
