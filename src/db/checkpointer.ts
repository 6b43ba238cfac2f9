/**
 * WAL checkpoints off the request path. SQLite's automatic checkpoint runs inside the COMMIT that
 * pushes the WAL past 1000 pages: that commit — and every request of its group-commit batch —
 * waits while pages are copied into the database file and it is fsynced. Here the server's writer
 * connection has `wal_autocheckpoint = 0` and a Worker with its own connection checkpoints on a
 * timer (src/db/checkpoint-worker.ts): PASSIVE while writes come in; when the WAL outgrows
 * WAL_LIMIT_MB it closes the write gate (src/db/write-gate.ts) so the group commit and imports
 * hold their next transaction (asynchronously: this thread keeps answering requests) until every
 * frame is copied, and the next transaction starts the WAL over — it cannot grow without bound
 * under sustained load, and nothing waits inside SQLite. When idle it asks this thread to TRUNCATE
 * the WAL on the writer's own connection. Only while a backup's snapshot is open can the WAL pass
 * the limit: the pages that snapshot reads cannot be overwritten until it ends.
 *
 * Should the Worker fail, the writer connection goes back to SQLite's automatic checkpoints.
 *
 * While Litestream replicates the database (src/services/replication.ts) the checkpoints follow its
 * rules (docs/api-decisions.md, "Continuous replication with Litestream"): a WAL truncated or
 * restarted behind its back makes it start a new generation — a full snapshot to the replica — so
 * this thread then only runs PASSIVE (which never changes the WAL file), never asks for the idle
 * TRUNCATE nor forces a RESTART, and Litestream's own checkpoint restarts the WAL. The write gate
 * keeps its bound: over the limit it holds the writers until Litestream's next checkpoint has
 * started the WAL over (or REPLICA_GATE_GIVE_UP_MS passed).
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../lib/log";
import { BUSY_TIMEOUT_MS } from "./open";
import { FORCE_FACTOR, type WriteGate } from "./write-gate";

/**
 * When a pass is due (docs/api-decisions.md, "A submission costs kilobytes, not a quarter
 * megabyte: cut what each write puts on the disk"): once the WAL holds CHECKPOINT_AFTER_BYTES of
 * frames not yet copied (at least CHECKPOINT_AFTER_PAGES, SQLite's own automatic checkpoint), or when
 * nothing was written for CHECKPOINT_IDLE_MS. A pass every tick copied each commit's pages into
 * the database file right behind it, so a page every commit touches (a rollup, the intake's last
 * leaf, an index's right edge) was written twice per commit; now it is written once per pass.
 */
export const CHECKPOINT_AFTER_PAGES = 1_000;
/**
 * The same threshold in bytes of WAL, so that it holds whatever the page size: 16 MiB (4,000 pages
 * of 4 KiB). A page that many commits rewrite (the right-hand leaf of each time-ordered index, a
 * form's leaves, rollups, page 1) is copied once per pass: at a shop's busy rate a pass now covers
 * ~400 submissions instead of ~100 (docs/api-decisions.md, "Disk bytes, round two"). Well under the
 * write gate's WAL_LIMIT_MB; a reader looks a page up in the WAL index's hash tables (one per 4,096
 * frames), so at this length one or two.
 */
export const CHECKPOINT_AFTER_BYTES = 16 * 1_048_576;
/**
 * A WAL with frames not yet copied is checkpointed (and then truncated) once nothing was written
 * for this long (`--checkpoint-idle-ms`): 5 minutes, so that at a quiet shop's rate (a submission
 * every few seconds to minutes) one pass copies the pages of many submissions, each page once.
 * With 1 s every submission got a pass of its own, and the pages every submission touches (the
 * indexes' right edges, rollups, counters, page 1: dozens of 1 KiB pages, each its own 4 KiB
 * block) were copied again for each: 201 KiB of the 319 KiB a submission put on the disk at one
 * every 2 s (docs/api-decisions.md, "Disk bytes, round four"). A quiet server's `-wal` still goes
 * back to 0 bytes, 5 minutes after its last write; readers and backups see the same data either way.
 */
export const CHECKPOINT_IDLE_MS = 300_000;
/** Checkpoint tick. */
export const CHECKPOINT_EVERY_MS = 100;
/** Above this the checkpointer asks writers to wait (the write gate) until the WAL is copied and restarted. */
export const WAL_LIMIT_MB = 64;
/** SQLite's default automatic checkpoint (pages), used inline and as the fallback. */
const AUTOCHECKPOINT_PAGES = 1000;
const REPLY_TIMEOUT_MS = 5_000;

export interface CheckpointStats {
  passive: number;
  truncate: number;
  /** Gates that opened because the WAL was started over by someone else (Litestream's checkpoint). */
  restartedByOther: number;
  /** Times the write gate closed over the limit and opened with every frame copied, and the ms it was closed in all. */
  gated: number;
  gatedMs: number;
  /** RESTARTs made (on the checkpoint thread) because the WAL was far over the limit anyway. */
  forced: number;
  /** TRUNCATEs and RESTARTs that found a reader or the writer busy (tried again next tick). */
  busy: number;
  largestWalPages: number;
}

export type CheckpointRequest =
  | { op: "start"; dbPath: string; everyMs: number; limitPages: number; afterPages: number; idleMs: number; gate?: SharedArrayBuffer }
  | { op: "stats" }
  /** Litestream started or stopped replicating this database: checkpoints follow its rules or ours. */
  | { op: "replication"; on: boolean }
  | { op: "stop" };
export type CheckpointReply =
  | { op: "started" }
  | { op: "failed"; message: string }
  | { op: "stats"; stats: CheckpointStats }
  | { op: "stopped"; stats: CheckpointStats }
  /** The WAL is fully copied and idle: the writer's thread truncates it. */
  | { op: "truncate" }
  /** The write gate is open again: waiting writers go on. */
  | { op: "open" };

/** Compiled binary: the worker by its path from src/ under /$bunfs/root/; from source, next to this file. */
const WORKER_ENTRY = import.meta.url.includes("/$bunfs/") ? "./db/checkpoint-worker.ts" : new URL("./checkpoint-worker.ts", import.meta.url).href;

export class Checkpointer {
  readonly name = "checkpointer";
  private worker: Worker | undefined;
  private waiting = new Map<string, (reply: CheckpointReply) => void>();
  /** The last figures the worker reported (at stop, or on `stats()`). */
  lastStats: CheckpointStats | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly dbPath: string,
    private readonly logger: Logger,
    private readonly opts: { everyMs?: number; limitMb?: number; gate?: WriteGate; idleMs?: number } = {},
  ) {}

  private starting: Promise<CheckpointReply> | undefined;

  /** Starts the thread (it loads while the queue is rebuilt); start() waits for its answer. */
  startEarly(): void {
    if (this.dbPath === ":memory:" || this.worker !== undefined) return;
    const pageSize = (this.sqlite.query("PRAGMA page_size").get() as { page_size: number }).page_size;
    const limitBytes = (this.opts.limitMb ?? WAL_LIMIT_MB) * 1_048_576;
    this.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
    // When the writer restarts the WAL it also cuts the file back to this size.
    this.sqlite.exec(`PRAGMA journal_size_limit = ${limitBytes}`);
    const worker = new Worker(WORKER_ENTRY);
    this.worker = worker;
    worker.onmessage = (event: MessageEvent<CheckpointReply>) => {
      const reply = event.data;
      if (reply.op === "truncate") return this.truncate();
      if (reply.op === "open") return this.opts.gate?.opened();
      if (reply.op === "stats" || reply.op === "stopped") this.lastStats = this.merged(reply.stats);
      const done = this.waiting.get(reply.op === "failed" ? "started" : reply.op);
      this.waiting.delete(reply.op === "failed" ? "started" : reply.op);
      done?.(reply);
    };
    worker.onerror = (event: ErrorEvent) => this.fallBack(`checkpoint thread failed: ${event.message}`);
    // No timeout yet: a long synchronous queue rebuild must not count against the thread.
    this.starting = new Promise((resolve) => this.waiting.set("started", resolve));
    worker.postMessage({ op: "start", dbPath: this.dbPath, everyMs: this.opts.everyMs ?? CHECKPOINT_EVERY_MS, limitPages: Math.floor(limitBytes / pageSize), afterPages: Math.max(CHECKPOINT_AFTER_PAGES, Math.floor(CHECKPOINT_AFTER_BYTES / pageSize)), idleMs: this.opts.idleMs ?? CHECKPOINT_IDLE_MS, gate: this.opts.gate?.shared } satisfies CheckpointRequest);
    if (this.replicating) worker.postMessage({ op: "replication", on: true } satisfies CheckpointRequest);
  }

  async start(): Promise<void> {
    this.startEarly();
    const starting = this.starting;
    if (starting === undefined) return;
    this.starting = undefined;
    const reply = await this.within("started", starting);
    if (reply?.op !== "started") this.fallBack(reply?.op === "failed" ? reply.message : "checkpoint thread did not start");
  }

  /** Idle truncations made on the writer's connection (the worker counts the rest). */
  private readonly restarts = { truncate: 0, busy: 0 };

  /**
   * TRUNCATE of an idle WAL on the writer's own connection, between its transactions: done from
   * another connection it would rewrite the WAL header under the writer, and a writer transaction
   * that read before that and writes after it fails at once with SQLITE_BUSY_SNAPSHOT (seen as
   * "database is locked" when an import started after an idle moment). The worker's PASSIVE has
   * already copied every page, so this is a file truncate (about a millisecond); with no busy wait,
   * a reader still on the WAL (a backup's snapshot) just means "next time".
   */
  private truncate() {
    const db = this.sqlite;
    // Litestream started between the thread's tick and this message: its rules apply.
    if (this.replicating) return;
    // The reply may arrive after the connection was closed (a stop, or a test closing it): then
    // there is nothing to truncate, and nothing may throw out of the Worker's message handler.
    try {
      if (db.inTransaction) return;
    } catch {
      return;
    }
    try {
      db.exec("PRAGMA busy_timeout = 0");
      const r = db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
      if (r.busy) this.restarts.busy++;
      else this.restarts.truncate++;
    } catch {
      this.restarts.busy++;
    } finally {
      try {
        db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      } catch {}
    }
  }

  /** Whether Litestream replicates the database now (sent to the thread, and kept for a thread started later). */
  private replicating = false;

  /** Litestream's own RESTART threshold in pages: the same last resort as this thread's (FORCE_FACTOR × the limit). */
  static litestreamMaxPages(limitMb = WAL_LIMIT_MB, pageSize = 4096): number {
    return Math.floor((limitMb * 1_048_576 * FORCE_FACTOR) / pageSize);
  }

  /** Litestream runs (or stopped): the thread's checkpoints follow its rules (see the module comment). */
  setReplication(on: boolean): void {
    this.replicating = on;
    this.worker?.postMessage({ op: "replication", on } satisfies CheckpointRequest);
  }

  /** The checkpoint counters (undefined when the worker is not running). */
  async stats(): Promise<CheckpointStats | undefined> {
    if (!this.worker) return undefined;
    const r = await this.ask("stats", { op: "stats" });
    return r?.op === "stats" ? this.merged(r.stats) : undefined;
  }

  private merged(s: CheckpointStats): CheckpointStats {
    return { ...s, truncate: this.restarts.truncate, busy: s.busy + this.restarts.busy };
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.ask("stopped", { op: "stop" });
    worker.terminate();
    this.worker = undefined;
    this.opts.gate?.opened();
  }

  private ask(answer: string, msg: CheckpointRequest): Promise<CheckpointReply | undefined> {
    const reply = new Promise<CheckpointReply>((resolve) => this.waiting.set(answer, resolve));
    this.worker!.postMessage(msg);
    return this.within(answer, reply);
  }

  /** `reply`, or undefined (and no longer waited for) if it has not come within REPLY_TIMEOUT_MS. */
  private within(answer: string, reply: Promise<CheckpointReply>): Promise<CheckpointReply | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(answer);
        resolve(undefined);
      }, REPLY_TIMEOUT_MS);
      void reply.then((r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
  }

  /** The thread is gone: SQLite's automatic checkpoints again, so the WAL stays bounded. */
  private fallBack(reason: string) {
    this.logger.error("background checkpoints off; SQLite checkpoints inside commits again", { reason });
    try {
      this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    } catch {}
    this.worker?.terminate();
    this.worker = undefined;
    this.opts.gate?.opened();
    for (const done of this.waiting.values()) done({ op: "failed", message: reason });
    this.waiting.clear();
  }
}
