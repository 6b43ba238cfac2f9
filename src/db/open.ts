import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { Database } from "bun:sqlite";
import * as schema from "./schema";
import { openSqlite } from "./open-sqlite";
import { migrate } from "./migrate";

export { BUSY_TIMEOUT_MS, openSqlite, type OpenOptions } from "./open-sqlite";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export function wrapDb(sqlite: Database): Db {
  return drizzle(sqlite, { schema }) as Db;
}

/** Opens and migrates the database for one job (a CLI command, a standby round), then closes it. */
export function withDb<T>(path: string, fn: (sqlite: Database) => T): T {
  const sqlite = openSqlite(path);
  try {
    migrate(sqlite);
    return fn(sqlite);
  } finally {
    sqlite.close();
  }
}
