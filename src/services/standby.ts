/**
 * Getting the database back from a replica (docs/operations.md, "The disk died"; decisions in
 * docs/api-decisions.md, "Continuous replication with Litestream"):
 *
 * - restoreFromReplica: Litestream's restore (latest, or as of a moment) into a staged file, then
 *   Textwire's own restore (integrity check, schema no newer than this build, refusal while a
 *   server holds the database, the replaced file kept as .bak-…), then the derived-data check of
 *   `textwire doctor --check`.
 * - runStandby: keeps a copy up to date on a second machine. Litestream 0.3 has no "follow" mode
 *   (a restore is always a whole new file), so each round asks the replica whether anything new
 *   arrived (`litestream wal`, one listing) and if so restores to a temporary file and swaps it in
 *   with a rename: the copy is always whole, never half-written.
 * - promote: stops the standby (SIGTERM to the process holding the lock), makes a last restore of
 *   everything the replica has, and hands over to `textwire serve`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Database } from "bun:sqlite";
import { displayReplica, parseReplicaUrl, type ReplicaTarget } from "../domain/replica-url";
import { SCHEMA_VERSION } from "../db/migrate";
import { Checkpointer } from "../db/checkpointer";
import { acquireLock, DatabaseLockedError, fsyncDir, fsyncFile, liveLockHolder, restoreDatabase, type RestoreResult } from "./backups";
import { checkDerived } from "./doctor";
import { runLitestream, writeLitestreamConfig } from "./litestream";
import { withDb } from "../db/open";
import type { Logger } from "../lib/log";
import { quickCheck } from "../db/backup-file";
import { schemaVersionOf } from "../db/database-info";

export class ReplicaRestoreError extends Error {}

/** How long one Litestream restore may take before it is given up (a big database over a slow link). */
export const RESTORE_TIMEOUT_MS = 60 * 60_000;
/** Default pause between two standby rounds. */
export const STANDBY_EVERY_MS = 5_000;

/** Litestream's restore of `target` into `outFile` (which must not exist). */
export async function litestreamRestore(target: ReplicaTarget, outFile: string, timestamp?: string): Promise<void> {
  const cfg = writeLitestreamConfig({ dbPath: outFile, target, maxCheckpointPages: Checkpointer.litestreamMaxPages() });
  try {
    const args = ["restore", "-no-expand-env", "-config", cfg.file, "-o", outFile];
    if (timestamp) args.push("-timestamp", timestamp);
    args.push(outFile);
    const r = await runLitestream(args, { timeoutMs: RESTORE_TIMEOUT_MS });
    if (r.code !== 0 || !existsSync(outFile)) throw new ReplicaRestoreError(explain(target, r.stderr || r.stdout, timestamp));
  } finally {
    cfg.remove();
  }
}

/** Litestream's error output, said in a way an operator can act on. */
function explain(target: ReplicaTarget, text: string, timestamp?: string): string {
  const where = displayReplica(target);
  const last = text.trim().split("\n").filter(Boolean).pop() ?? "";
  if (/no matching backups|no generations|no snapshots available|no backups found/i.test(text)) {
    return timestamp
      ? `The replica at ${where} holds no copy as early as ${timestamp} (a restore can go back as far as its oldest snapshot).`
      : `The replica at ${where} holds no copy of a database: check the address (the folder, bucket and path the server replicates to).`;
  }
  if (/no such host|connection refused|i\/o timeout|dial tcp|handshake|unable to authenticate|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|NoCredentialProviders|permission denied/i.test(text)) {
    return `The replica at ${where} could not be read: ${last.replace(/^.*?msg=/, "")}`;
  }
  return `Litestream could not restore from ${where}: ${last || "it gave no reason"}`;
}

export interface ReplicaRestoreResult extends RestoreResult {
  replica: string;
  asOf: string;
  /** `doctor --check`'s differences per structure (all 0 when the derived data matches). */
  doctor: { ok: boolean; counts: Record<string, number>; differences: Array<{ structure: string; detail: string }> };
}

/** `textwire restore --from-replica`: see the module comment. */
export async function restoreFromReplica(url: string, dbPath: string, opts: { timestamp?: string; now?: () => number } = {}): Promise<ReplicaRestoreResult> {
  const target = parseReplicaUrl(url);
  const db = resolve(dbPath);
  // Refused before minutes of download, and again (atomically) by restoreDatabase.
  const holder = liveLockHolder(db);
  if (holder) throw new DatabaseLockedError(db, holder);
  mkdirSync(dirname(db), { recursive: true });
  const staged = `${db}.from-replica-${process.pid}`;
  removeWithSides(staged);
  try {
    await litestreamRestore(target, staged, opts.timestamp);
    const r = restoreDatabase(staged, db, opts.now);
    const doctor = withDb(db, (sqlite) => {
      const c = checkDerived(sqlite);
      return { ok: Object.values(c.counts).every((n) => n === 0), counts: c.counts, differences: c.differences };
    });
    return { ...r, from: displayReplica(target), replica: displayReplica(target), asOf: opts.timestamp ?? "latest", doctor };
  } finally {
    removeWithSides(staged);
  }
}


function removeWithSides(path: string) {
  for (const side of ["", "-wal", "-shm"]) rmSync(path + side, { force: true });
}

// ---------------------------------------------------------------- standby

/** `<db>.standby.json`: what `textwire promote` needs (the address may hold a password: 0600). */
export interface StandbyState {
  url: string;
  pid: number;
  since: string;
  lastRestoreAt: string | null;
  lastRestoreMs: number | null;
  rounds: number;
  restores: number;
}

export const standbyStatePath = (dbPath: string) => `${resolve(dbPath)}.standby.json`;

export function readStandbyState(dbPath: string): StandbyState | null {
  try {
    return JSON.parse(readFileSync(standbyStatePath(dbPath), "utf8")) as StandbyState;
  } catch {
    return null;
  }
}

function writeStandbyState(dbPath: string, s: StandbyState) {
  const file = standbyStatePath(dbPath);
  writeFileSync(file + ".tmp", JSON.stringify(s) + "\n", { mode: 0o600 });
  renameSync(file + ".tmp", file);
}

/** A fingerprint of what the replica holds (its WAL segment listing): a round with the same one has nothing new. */
async function replicaFingerprint(target: ReplicaTarget, dbPath: string): Promise<string | null> {
  const cfg = writeLitestreamConfig({ dbPath, target, maxCheckpointPages: Checkpointer.litestreamMaxPages() });
  try {
    const r = await runLitestream(["wal", "-no-expand-env", "-config", cfg.file, dbPath], { timeoutMs: 60_000 });
    if (r.code !== 0) return null;
    return createHash("sha256").update(r.stdout).digest("hex");
  } finally {
    cfg.remove();
  }
}

/** Quick structural check of a restored copy before it replaces the standby's file. */
function checkCopy(path: string): void {
  const db = new Database(path, { readonly: true });
  try {
    const quick = quickCheck(db);
    if (quick !== "ok") throw new ReplicaRestoreError(`the restored copy failed its check: ${quick}`);
    const version = schemaVersionOf(db);
    if (version > SCHEMA_VERSION) throw new ReplicaRestoreError(`the replica was written by a newer Textwire (schema ${version}; this build knows ${SCHEMA_VERSION}): upgrade this machine's Textwire`);
    if (version < 1) throw new ReplicaRestoreError("the replica is not a Textwire database");
  } finally {
    db.close();
  }
}

export interface StandbyHandle {
  /** Ends the loop after the round in progress; resolves when the lock is released. */
  stop(): Promise<void>;
  /** Resolves when the loop has ended. */
  done: Promise<void>;
}

/**
 * `textwire standby`: takes the database's lock (a server or a restore on it is refused while the
 * standby runs), then every `everyMs` restores the replica's newest state if it changed and swaps
 * it in. A failed round is logged and tried again next time.
 */
export function runStandby(url: string, dbPath: string, opts: { everyMs?: number; logger: Logger; now?: () => number }): StandbyHandle {
  const target = parseReplicaUrl(url);
  const db = resolve(dbPath);
  const now = opts.now ?? Date.now;
  mkdirSync(dirname(db), { recursive: true });
  const release = acquireLock(db, "standby");
  const state: StandbyState = { url, pid: process.pid, since: new Date(now()).toISOString(), lastRestoreAt: null, lastRestoreMs: null, rounds: 0, restores: 0 };
  writeStandbyState(db, state);
  const everyMs = opts.everyMs ?? STANDBY_EVERY_MS;
  let stopping = false;
  let wake: (() => void) | undefined;
  let lastPrint: string | null = null;
  const next = `${db}.standby-next`;
  const round = async () => {
    state.rounds++;
    const print = await replicaFingerprint(target, db);
    if (print !== null && print === lastPrint && existsSync(db)) return;
    const t0 = performance.now();
    removeWithSides(next);
    try {
      await litestreamRestore(target, next);
      checkCopy(next);
      fsyncFile(next);
      // Nobody has the standby's copy open (the lock keeps servers and restores out), so no -wal
      // or -shm of the old copy may be left to be read against the new one.
      for (const side of ["-wal", "-shm"]) rmSync(db + side, { force: true });
      renameSync(next, db);
      fsyncDir(dirname(db));
    } finally {
      removeWithSides(next);
    }
    lastPrint = print;
    state.restores++;
    state.lastRestoreAt = new Date(now()).toISOString();
    state.lastRestoreMs = Math.round(performance.now() - t0);
    writeStandbyState(db, state);
    opts.logger.info("standby: restored the replica's newest state", { from: displayReplica(target), ms: state.lastRestoreMs });
  };
  const done = (async () => {
    opts.logger.info("standby: keeping a copy of the replica", { from: displayReplica(target), db, everySeconds: everyMs / 1000 });
    try {
      while (!stopping) {
        try {
          await round();
        } catch (err) {
          opts.logger.error("standby: this round's restore failed; trying again", { error: (err as Error).message });
        }
        if (stopping) break;
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, everyMs);
        });
      }
    } finally {
      release();
    }
  })();
  return {
    done,
    async stop() {
      stopping = true;
      wake?.();
      await done;
    },
  };
}

/** Ends a standby running on `dbPath` (SIGTERM to the process holding its lock) and waits for its lock. */
export async function stopStandby(dbPath: string, timeoutMs = 120_000): Promise<"stopped" | "not-running"> {
  const db = resolve(dbPath);
  const holder = liveLockHolder(db);
  if (!holder) return "not-running";
  if (holder.purpose !== "standby") throw new DatabaseLockedError(db, holder);
  process.kill(holder.pid, "SIGTERM");
  const deadline = Date.now() + timeoutMs;
  while (liveLockHolder(db)) {
    if (Date.now() > deadline) throw new ReplicaRestoreError(`the standby (process ${holder.pid}) did not stop within ${timeoutMs / 1000} s`);
    await Bun.sleep(100);
  }
  return "stopped";
}

/** `textwire promote` before serving: the standby stopped, a last restore of everything on the replica. */
export async function promoteStandby(dbPath: string, now?: () => number): Promise<ReplicaRestoreResult & { standby: "stopped" | "not-running" }> {
  const state = readStandbyState(dbPath);
  if (!state) throw new ReplicaRestoreError(`there is no standby on ${resolve(dbPath)} (start one with: textwire standby --from-replica URL --db ${dbPath})`);
  const standby = await stopStandby(dbPath);
  const r = await restoreFromReplica(state.url, dbPath, { now });
  rmSync(standbyStatePath(dbPath), { force: true });
  return { ...r, standby };
}
