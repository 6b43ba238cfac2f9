/**
 * Backups and restores of the one SQLite file.
 *
 * A backup is `VACUUM INTO` on its OWN connection: SQLite runs it inside one read transaction, so
 * the copy is a consistent snapshot even while the server keeps committing (WAL readers never
 * block writers), and the result is a single self-contained file with no -wal side file. The
 * copy is written under a temporary name, checked with `PRAGMA integrity_check`, then renamed.
 *
 * A server holds `<db>.lock` (its PID, the process start time and the boot id) while it runs;
 * restore refuses while a live process holds it, and holds the same lock itself while it swaps
 * files, so a server cannot start in the middle of a restore.
 */
import type { Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { hostname } from "node:os";
import { SCHEMA_VERSION } from "../db/migrate";
import { checkpointTruncate, integrityCheck, openDatabaseFile as openRaw, rowCount, schemaVersionOf, tableNames, vacuumInto } from "../db/backup-file";
import type { Lifecycle } from "../lib/lifecycle";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { runBackupJob } from "./backup-thread";
import { databaseBytes, memoryScratch, pacedCopy } from "./backup-scratch";
import { BackupError, type BackupResult } from "./backup-result";

/** The tables whose row counts a backup reports. */
export const MAIN_TABLES = ["accounts", "api_keys", "forms", "submissions", "contacts", "messages"] as const;

// In their own module so that backup-thread.ts can use them without importing this one (no cycle).
export { BackupError, type BackupResult };

/** integrity_check, schema version and row counts of a database file (opened read-only). */
export function inspectDatabase(path: string): { integrity: string; schemaVersion: number; rows: Record<string, number> } {
  if (!existsSync(path)) throw new BackupError(`${path}: no such file`);
  let db: Database;
  try {
    db = openRaw(path, true);
  } catch (err) {
    throw new BackupError(`${path}: cannot be opened as an SQLite database (${(err as Error).message})`);
  }
  try {
    let integrity: string;
    try {
      integrity = integrityCheck(db);
    } catch (err) {
      throw new BackupError(`${path}: not an SQLite database (${(err as Error).message})`);
    }
    const schemaVersion = schemaVersionOf(db);
    const present = tableNames(db);
    const rows: Record<string, number> = {};
    for (const t of MAIN_TABLES) {
      if (present.has(t)) rows[t] = rowCount(db, t);
    }
    return { integrity, schemaVersion, rows };
  } finally {
    db.close();
  }
}

export interface BackupOptions {
  /**
   * Where `VACUUM INTO` builds the copy; null/absent: beside `outFile`. When it is another
   * directory (the memory-backed scratch of backup-scratch.ts), the checked copy is then written
   * to `outFile` by a paced copy, so the disk never takes the whole backup in one flush.
   */
  buildIn?: string | null;
  /** False for a copy that is streamed and deleted (the admin download): no fsync. Default true. */
  durable?: boolean;
}

/**
 * Consistent online copy of `dbPath` into `outFile` (which must not exist). Safe while a server
 * has the database open and writes to it.
 */
export function backupDatabase(dbPath: string, outFile: string, clock: Clock = Date.now, opts: BackupOptions = {}): BackupResult {
  const started = clock();
  const t0 = performance.now();
  if (!existsSync(dbPath)) throw new BackupError(`${dbPath}: no such database`);
  const out = resolve(outFile);
  if (existsSync(out)) throw new BackupError(`${out} already exists; choose a new file name`);
  mkdirSync(dirname(out), { recursive: true });
  const durable = opts.durable !== false;
  const buildDir = opts.buildIn ? resolve(opts.buildIn) : dirname(out);
  const elsewhere = buildDir !== dirname(out);
  const tmp = elsewhere
    ? join(buildDir, `textwire-backup-${process.pid}-${started}-${Math.random().toString(36).slice(2, 8)}.db`)
    : `${out}.partial-${process.pid}-${started}`;
  const partial = `${out}.partial-${process.pid}-${started}`;
  const src = openRaw(dbPath, false);
  try {
    vacuumInto(src, tmp);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new BackupError(`backup failed: ${(err as Error).message}`);
  } finally {
    src.close();
  }
  try {
    const info = inspectDatabase(tmp);
    if (info.integrity !== "ok") throw new BackupError(`the copy failed its integrity check: ${info.integrity}`);
    if (elsewhere) {
      if (durable) pacedCopy(tmp, partial);
      else copyFileSync(tmp, partial);
      rmSync(tmp, { force: true });
    }
    if (durable) fsyncFile(partial);
    renameSync(partial, out);
    if (durable) fsyncDir(dirname(out));
    return { file: out, bytes: statSync(out).size, integrity: "ok", schemaVersion: info.schemaVersion, rows: info.rows, durationMs: Math.round(performance.now() - t0) };
  } catch (err) {
    rmSync(tmp, { force: true });
    rmSync(partial, { force: true });
    throw err;
  }
}

export function fsyncFile(path: string) {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function fsyncDir(path: string) {
  try {
    const fd = openSync(path, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every platform lets a directory be fsynced; the rename is still atomic.
  }
}

// ---------------------------------------------------------------- the database lock file

export interface LockInfo {
  pid: number;
  /** /proc/<pid>/stat start time (clock ticks since boot): tells a reused PID apart. */
  procStart: string | null;
  bootId: string | null;
  host: string;
  /** "standby": `textwire standby` keeps the file a copy of a replica (src/services/standby.ts). */
  purpose: "serve" | "restore" | "standby";
  since: string;
}

export const lockPathOf = (dbPath: string) => `${dbPath}.lock`;

function readBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
}

function readProcStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime), counted after the ")" that closes the command name.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function readLock(dbPath: string): LockInfo | null {
  try {
    return JSON.parse(readFileSync(lockPathOf(dbPath), "utf8")) as LockInfo;
  } catch {
    return null;
  }
}

/** The holder of the lock when it is a live process (same host, same boot, same process start). */
export function liveLockHolder(dbPath: string): LockInfo | null {
  const lock = readLock(dbPath);
  if (!lock || typeof lock.pid !== "number") return null;
  if (lock.host !== hostname()) return lock; // another machine on a shared disk: assume alive
  const boot = readBootId();
  if (boot && lock.bootId && boot !== lock.bootId) return null; // written before a reboot
  if (!pidAlive(lock.pid)) return null;
  const start = readProcStart(lock.pid);
  if (start && lock.procStart && start !== lock.procStart) return null; // PID reused
  return lock;
}

export class DatabaseLockedError extends Error {
  constructor(
    readonly dbPath: string,
    readonly holder: LockInfo,
  ) {
    super(
      holder.purpose === "restore"
        ? `${dbPath} is being restored (process ${holder.pid}); try again when it is done`
        : holder.purpose === "standby"
          ? `${dbPath} is kept as a standby copy of a replica by \`textwire standby\` (process ${holder.pid}); run \`textwire promote --db ${dbPath}\` to take over`
        : `${dbPath} is in use by a running Textwire server (process ${holder.pid}, since ${holder.since}); stop it first`,
    );
  }
}

/**
 * Takes `<db>.lock`. Refuses when a live process holds it (`allowSameProcess`: the tests run
 * several servers in one process). A stale lock (dead process, reboot, reused PID) is replaced.
 */
export function acquireLock(dbPath: string, purpose: LockInfo["purpose"], opts: { allowSameProcess?: boolean } = {}): () => void {
  const path = lockPathOf(dbPath);
  mkdirSync(dirname(path), { recursive: true });
  const info: LockInfo = {
    pid: process.pid,
    procStart: readProcStart(process.pid),
    bootId: readBootId(),
    host: hostname(),
    purpose,
    since: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(info) + "\n", { flag: "wx" });
      const mine = JSON.stringify(info);
      return () => {
        // Only remove it if it is still ours.
        try {
          if (readFileSync(path, "utf8").trim() === mine) rmSync(path, { force: true });
        } catch {}
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = liveLockHolder(dbPath);
      if (holder && !(opts.allowSameProcess && holder.pid === process.pid && holder.purpose === "serve")) {
        throw new DatabaseLockedError(dbPath, holder);
      }
      rmSync(path, { force: true }); // stale, or ours from an earlier server in this process
    }
  }
  throw new Error(`could not take ${path}`);
}

// ---------------------------------------------------------------- restore

export interface RestoreResult {
  restored: string;
  from: string;
  previous: string | null;
  schemaVersion: number;
  rows: Record<string, number>;
  durationMs: number;
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");

/**
 * Checks `inFile` (integrity, a Textwire schema no newer than ours), refuses while a server holds
 * the database, keeps the current file as `<db>.bak-<timestamp>` and puts a clean copy in place.
 */
export function restoreDatabase(inFile: string, dbPath: string, clock: Clock = Date.now): RestoreResult {
  const t0 = performance.now();
  const from = resolve(inFile);
  const target = resolve(dbPath);
  if (from === target) throw new BackupError("the file to restore is the database itself");
  const info = inspectDatabase(from);
  if (info.integrity !== "ok") throw new BackupError(`${from} failed its integrity check: ${info.integrity}`);
  if (info.schemaVersion > SCHEMA_VERSION) {
    throw new BackupError(`${from} was written by a newer Textwire (schema version ${info.schemaVersion}; this build knows ${SCHEMA_VERSION}); nothing was changed`);
  }
  if (info.schemaVersion < 1 || !("accounts" in info.rows)) throw new BackupError(`${from} is not a Textwire database`);

  const release = acquireLock(target, "restore");
  try {
    const staged = `${target}.restore-${process.pid}`;
    rmSync(staged, { force: true });
    // A clean single-file copy: folds in any -wal the source may carry.
    const src = openRaw(from, true);
    try {
      vacuumInto(src, staged);
    } finally {
      src.close();
    }
    const check = inspectDatabase(staged);
    if (check.integrity !== "ok") {
      rmSync(staged, { force: true });
      throw new BackupError(`the staged copy failed its integrity check: ${check.integrity}`);
    }
    fsyncFile(staged);
    let previous: string | null = null;
    if (existsSync(target)) {
      // Fold the old WAL into the main file so the kept copy is complete on its own.
      try {
        const old = openRaw(target, false);
        try {
          checkpointTruncate(old);
        } finally {
          old.close();
        }
      } catch {
        // An unreadable old file is kept as it is.
      }
      previous = `${target}.bak-${stamp(clock())}`;
      for (let n = 1; existsSync(previous); n++) previous = `${target}.bak-${stamp(clock())}-${n}`;
      renameSync(target, previous);
      for (const side of ["-wal", "-shm"]) {
        if (existsSync(target + side)) renameSync(target + side, previous + side);
      }
    }
    renameSync(staged, target);
    fsyncDir(dirname(target));
    return { restored: target, from, previous, schemaVersion: check.schemaVersion, rows: check.rows, durationMs: Math.round(performance.now() - t0) };
  } finally {
    release();
  }
}

// ---------------------------------------------------------------- scheduled backups

export const SCHEDULED_PREFIX = "textwire-";
/** `--backup-dir` without `--backup-every`: once a day. */
export const DEFAULT_BACKUP_EVERY_MS = 24 * 3_600_000;
export const SCHEDULED_RE = /^textwire-\d{8}T\d{6}(?:\d{3})?Z\.db$/;

export function backupFileName(ms: number): string {
  return `${SCHEDULED_PREFIX}${stamp(ms)}.db`;
}

/** Deletes the oldest scheduled backups in `dir` beyond `keep`; returns what it removed. */
export function pruneBackups(dir: string, keep: number): string[] {
  if (!existsSync(dir)) return [];
  // The timestamp sorts as text once a plain name (the first of its second) reads as ms 000: as
  // written, "…SSZ" sorts after its own second's later "…SSmmmZ".
  const key = (f: string) => f.replace(/(T\d{6})Z\.db$/, "$1000Z.db");
  const files = readdirSync(dir)
    .filter((f) => SCHEDULED_RE.test(f))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const remove = files.slice(0, Math.max(0, files.length - keep));
  for (const f of remove) rmSync(join(dir, f), { force: true });
  return remove;
}

/** One scheduled run: a fresh backup in `dir`, then retention. */
export function runScheduledBackup(dbPath: string, dir: string, keep: number, clock: Clock): { backup: BackupResult; removed: string[] } {
  mkdirSync(dir, { recursive: true });
  let name = backupFileName(clock());
  if (existsSync(join(dir, name))) name = name.replace(/Z\.db$/, `${String(clock() % 1000).padStart(3, "0")}Z.db`);
  // Built in memory when it fits, then written to the backup directory at a pace the disk can
  // share with the webhook's commits (backup-scratch.ts).
  const backup = backupDatabase(dbPath, join(dir, name), clock, { buildIn: memoryScratch(databaseBytes(dbPath)) });
  return { backup, removed: pruneBackups(dir, keep) };
}

/**
 * `--backup-dir` + `--backup-every` + `--backup-keep` as a Lifecycle; the timer never holds the
 * process open. Each run happens on a Worker (backup-thread.ts) so the server keeps answering;
 * a tick while a run is still going is skipped, and stop() waits for a run in progress.
 */
/** Where and how often scheduled backups go (from --backup-dir or the dashboard's setting). */
export interface BackupSchedule {
  dir: string;
  everyMs: number;
  keep: number;
}

/**
 * Scheduled backups on whatever `schedule()` says now: `reload()` re-arms the timer after the
 * setting changed, so a new folder or interval applies without a restart (null: none scheduled).
 */
export function scheduledBackups(opts: { dbPath: string; schedule: () => BackupSchedule | null; clock: Clock; logger: Logger }): Lifecycle & { runNow(): Promise<void>; reload(): void } {
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<void> | null = null;
  let started = false;
  const runNow = (): Promise<void> => {
    if (running) return running;
    const s = opts.schedule();
    if (!s) return Promise.resolve();
    running = (async () => {
      try {
        const { backup, removed } = await runBackupJob({ op: "scheduled", dbPath: opts.dbPath, dir: s.dir, keep: s.keep, now: opts.clock() });
        opts.logger.info("scheduled backup", { file: basename(backup.file), bytes: backup.bytes, ms: backup.durationMs, removed });
      } catch (err) {
        opts.logger.error("scheduled backup failed", { error: (err as Error).message });
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const arm = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
    const s = started ? opts.schedule() : null;
    if (!s) return;
    timer = setInterval(() => void runNow(), s.everyMs);
    (timer as { unref?: () => void }).unref?.();
  };
  return {
    name: "scheduled-backups",
    start() {
      started = true;
      arm();
    },
    async stop() {
      started = false;
      arm();
      if (running) await running;
    },
    runNow,
    reload: arm,
  };
}
