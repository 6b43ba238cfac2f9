/**
 * The intake applier's statements: what an acknowledged webhook submission becomes (its contact
 * created or merged, its submission row, its queued message), in one-row and multi-row forms.
 * The applier writes all three in one batch on its own connection (services/intake/worker.ts):
 * every statement is prepared once per connection, when the applier starts, never per batch
 * (docs/api-decisions.md, "One home per rule: accepting a submission"). The statements on
 * contacts and messages live in their tables' folders (stores/contacts/applier.ts,
 * stores/messages/applier.ts) and are gathered here (docs/api-decisions.md, "The house, round
 * two: stores by table").
 */
import type { Database, Statement } from "bun:sqlite";
import { openSqlite } from "../open-sqlite";
import { MultiInsert } from "../multi-insert";
import { applierContactStatements } from "./contacts/applier";
import { applierMessageStatements } from "./messages/applier";

export { mergeCustomFields, type ApplierContact } from "./contacts/applier";
export { MultiInsert };

const SUBMISSION_INSERT = "INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at, form_values, suppressed)";
const SUBMISSION_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?)";

/** Every statement the applier runs, prepared on `sqlite`. */
export function intakeApplierStore(sqlite: Database) {
  return {
    ...applierContactStatements(sqlite),
    ...applierMessageStatements(sqlite),
    submissionInsert: sqlite.prepare(`${SUBMISSION_INSERT} VALUES ${SUBMISSION_VALUES}`) as Statement<unknown, any[]>,
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
