import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** How long a writer waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/**
 * One way to open the database, with a fixed PRAGMA order (as PocketBase does): busy_timeout
 * first so the rest can wait for locks, then WAL, synchronous=FULL (a commit is on disk before we
 * acknowledge it), foreign keys on.
 */
export function openSqlite(path: string, opts: { readonly?: boolean; create?: boolean } = {}): Database {
  if (path !== ":memory:" && !opts.readonly) mkdirSync(dirname(path), { recursive: true });
  const sqlite = opts.readonly
    ? new Database(path, { readonly: true })
    : new Database(path, { create: opts.create ?? true, readwrite: true, strict: true });
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!opts.readonly) {
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = FULL");
  }
  sqlite.exec("PRAGMA foreign_keys = ON");
  return sqlite;
}

export function wrapDb(sqlite: Database): Db {
  return drizzle(sqlite, { schema }) as Db;
}
