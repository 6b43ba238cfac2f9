import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { Database } from "bun:sqlite";
import * as schema from "./schema";

export { BUSY_TIMEOUT_MS, openSqlite, type OpenOptions } from "./open-sqlite";

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export function wrapDb(sqlite: Database): Db {
  return drizzle(sqlite, { schema }) as Db;
}
