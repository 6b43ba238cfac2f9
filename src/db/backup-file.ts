/**
 * The statements a backup or a restore runs on a database FILE, on a connection of its own (not
 * the server's): opening it raw, `VACUUM INTO` a copy, `PRAGMA integrity_check`, the schema
 * version, table names and row counts, and folding the WAL in. Infrastructure, like open.ts;
 * the rules (what is checked, what is refused) are in src/services/backups.ts.
 */
import { Database } from "bun:sqlite";
import { BUSY_TIMEOUT_MS } from "./open";

export { schemaVersionOf, tableNames } from "./database-info";

const sqlString = (s: string) => "'" + s.replace(/'/g, "''") + "'";

/** A connection with no PRAGMAs but busy_timeout (no WAL switch: a read-only peek must not write). */
export function openDatabaseFile(path: string, readonly: boolean): Database {
  const db = readonly ? new Database(path, { readonly: true }) : new Database(path, { readwrite: true, create: false });
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return db;
}

/** A consistent single-file snapshot of the database at `dest` (one read transaction; no -wal). */
export function vacuumInto(db: Database, dest: string): void {
  db.exec(`VACUUM INTO ${sqlString(dest)}`);
}

/** `PRAGMA integrity_check`'s lines joined ("ok" when sound); throws when the file is not a database. */
export function integrityCheck(db: Database): string {
  const rows = db.query("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>;
  return rows.map((r) => r.integrity_check).join("; ");
}

/** `PRAGMA quick_check`'s first line ("ok" when sound): the cheaper check, for a copy checked often. */
export function quickCheck(db: Database): string {
  return (db.query("PRAGMA quick_check").get() as { quick_check: string }).quick_check;
}

/** Rows in a table (the name comes from the code, never from input). */
export function rowCount(db: Database, table: string): number {
  return (db.query(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
}

/** Folds the WAL into the main file and empties it, so the file is complete on its own. */
export function checkpointTruncate(db: Database): void {
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}
