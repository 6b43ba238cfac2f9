/**
 * The database file's page size (docs/api-decisions.md, "Disk bytes, round two"). Every WAL frame
 * is a whole page, and a submission's rows land in a dozen index leaves wherever their keys fall:
 * with smaller pages each of those leaves costs the disk less. A new database is created with
 * PAGE_SIZE (src/db/open-sqlite.ts); an existing one keeps its size until `textwire migrate`
 * rewrites it (rewritePageSize), because that is a full copy of the file, done once, with the
 * server stopped.
 *
 * No drizzle: open-sqlite.ts (imported by the Worker threads) uses PAGE_SIZE.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Bytes per page of a new database: 1 KiB since round four (docs/api-decisions.md, "Disk bytes,
 * round four"); 2 KiB before, 4 KiB (SQLite's default) before that. A submission's rows land in a
 * dozen random index leaves, each a whole frame in the WAL.
 */
export const PAGE_SIZE = 1024;

export function pageSizeOf(db: Database): number {
  return (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
}

export class PageSizeBusyError extends Error {}

/**
 * Rewrites the database at `path` with `size`-byte pages, if it has another size: a `VACUUM INTO` a
 * file beside it (with the new page size), synced, then renamed over the original. A kill at any
 * moment leaves either the original file, whole, or the rewritten one (the rename is atomic); a
 * half-written copy from an earlier kill is removed first. The database must not be open anywhere
 * else: its journal is switched out of WAL (which SQLite refuses while another connection has it
 * open: PageSizeBusyError) and it stays locked until the rename. Returns the old size, or null when
 * there was nothing to do.
 */
export function rewritePageSize(path: string, log: (line: string) => void, size = PAGE_SIZE): number | null {
  if (path === ":memory:" || !existsSync(path)) return null;
  const copy = `${path}.page-size-${size}`;
  rmSync(copy, { force: true });
  const db = new Database(path, { readwrite: true, create: false });
  let old: number;
  try {
    db.exec("PRAGMA busy_timeout = 2000");
    old = pageSizeOf(db);
    if (old === size) return null;
    // Out of WAL mode: the WAL is copied in and removed, and only this connection may have the file.
    let mode = "";
    try {
      mode = (db.query("PRAGMA journal_mode = DELETE").get() as { journal_mode: string }).journal_mode;
    } catch (err) {
      if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
    }
    if (mode !== "delete") throw new PageSizeBusyError("the database is open in another program (is the server running?): stop it, then run this again");
    // Held until close: nobody opens the file while it is copied.
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    log(`Rewriting the database with ${size / 1024} KiB pages (${old / 1024} KiB now), once: about ${Math.ceil(statSync(path).size / 1_048_576)} MiB to copy; less is written to the disk for each submission afterwards.`);
    db.exec(`PRAGMA page_size = ${size}`);
    db.exec(`VACUUM INTO '${copy.replace(/'/g, "''")}'`);
    const check = new Database(copy, { readonly: true });
    try {
      const ok = (check.query("PRAGMA quick_check").get() as { quick_check: string }).quick_check;
      if (pageSizeOf(check) !== size || ok !== "ok") throw new Error(`the rewritten copy is not sound (${ok}); the database was left as it was`);
    } finally {
      check.close();
    }
    const fd = openSync(copy, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    // Back to WAL when it was switched (a no-op otherwise, or when another connection has the file).
    try {
      db.exec("PRAGMA journal_mode = WAL");
    } catch {}
    db.close(true);
    rmSync(copy, { force: true });
    throw err;
  }
  db.close(true);
  renameSync(copy, path);
  // The old file's WAL index, if one was left: the renamed file starts without a WAL.
  for (const f of [`${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  const dir = openSync(dirname(path), "r");
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
  log(`The database now has ${size / 1024} KiB pages.`);
  return old;
}
