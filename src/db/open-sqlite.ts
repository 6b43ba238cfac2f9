/**
 * `openSqlite` without drizzle: the Worker threads (the intake applier) open their connection with
 * it, and importing drizzle and the schema would cost each thread ~6 MiB of heap for nothing.
 * src/db/open.ts re-exports it with `wrapDb`.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { PAGE_SIZE } from "./page-size";

/** How long a writer waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;
export interface OpenOptions {
  readonly?: boolean;
  create?: boolean;
  /** Page cache in MiB (0 or unset = SQLite's default of 2 MiB); the server's: DEFAULT_SQLITE_CACHE_MB in config.ts. */
  cacheMb?: number;
  /** Where statement and savepoint journals go: "memory" (default) or "file" (SQLite's default). */
  tempStore?: "memory" | "file";
}

/**
 * One way to open the database, with a fixed PRAGMA order (as PocketBase does): busy_timeout
 * first so the rest can wait for locks, then WAL, synchronous=FULL (a commit is on disk before we
 * acknowledge it), foreign keys on; then temp_store=MEMORY — every group-commit job runs in a
 * SAVEPOINT and every multi-row statement keeps a statement journal, which SQLite otherwise writes
 * to temp files (a message insert costs ~80 µs that way, ~30 µs in memory; the journals hold only
 * one batch's undo, a few hundred KiB at most).
 */
export function openSqlite(path: string, opts: OpenOptions = {}): Database {
  if (path !== ":memory:" && !opts.readonly) mkdirSync(dirname(path), { recursive: true });
  const sqlite = opts.readonly
    ? new Database(path, { readonly: true })
    : new Database(path, { create: opts.create ?? true, readwrite: true, strict: true });
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!opts.readonly) {
    // A new, empty file takes the page size before its first table and before WAL mode (after
    // either it is fixed until a rewrite: src/db/page-size.ts); on any other file this is a no-op.
    if ((sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count === 0) sqlite.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = FULL");
  }
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec(`PRAGMA temp_store = ${opts.tempStore === "file" ? "DEFAULT" : "MEMORY"}`);
  if (opts.cacheMb) sqlite.exec(`PRAGMA cache_size = ${-Math.round(opts.cacheMb * 1024)}`);
  if (!opts.readonly) beginImmediately(sqlite);
  return sqlite;
}

/**
 * Every transaction on a read-write connection begins IMMEDIATE (it takes the write lock first,
 * waiting up to busy_timeout), including drizzle's and `.deferred()` ones. A DEFERRED transaction
 * that reads and then writes fails at once with SQLITE_BUSY_SNAPSHOT — no busy wait — when another
 * connection committed or restarted the WAL in between (the checkpoint thread, the backup thread,
 * a CLI command). Our transactions are short and nearly all write, so taking the lock up front costs
 * nothing; read-only snapshots (exports) use their own `BEGIN`.
 */
function beginImmediately(sqlite: Database): void {
  const native = sqlite.transaction.bind(sqlite);
  sqlite.transaction = ((fn: (...args: any[]) => any) => {
    const tx = native(fn);
    const run = (...args: any[]) => tx.immediate(...args);
    return Object.assign(run, { deferred: run, immediate: run, exclusive: tx.exclusive });
  }) as Database["transaction"];
}
