/**
 * Facts about a database as a whole, read by the boot, /health and the CLI: the migration it is
 * at, which tables it has, and where the message sequence stands.
 */
import type { Database } from "bun:sqlite";

/** The migration the file is at (PRAGMA user_version). */
export function schemaVersionOf(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

export function tableNames(db: Database): Set<string> {
  return new Set((db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
}

export function hasTable(db: Database, name: string): boolean {
  return db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1").get(name) !== null;
}

export { largestMessageSeq } from "./stores/messages";
