import type { Database, Statement } from "bun:sqlite";
import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";
import type { Logger } from "../lib/log";
import { derivedCounts, type DerivedCounts } from "./derived-counts";
import type { StageTiming } from "../lib/stage-timing";
import type { WriteGate } from "./write-gate";

/**
 * Group commit: many requests' writes in ONE transaction, so one fsync (synchronous=FULL)
 * acknowledges them all.
 *
 * A request hands in a synchronous job and awaits its promise. The first job of a batch schedules
 * a flush with `setImmediate` (a microtask would run before the other requests of the same event
 * loop turn could join). The flush runs every pending job inside `BEGIN IMMEDIATE … COMMIT`, each
 * in its own SAVEPOINT: a job that throws (a constraint, a vanished form) is rolled back and
 * rejected alone, the rest of the batch commits. Promises settle only after COMMIT returned, so a
 * caller that answers 200 on resolution never acknowledges a write that is not on disk.
 *
 * A job may also change in-memory state (the queue) while it runs — the flush is synchronous, so
 * nothing else can observe that state before the COMMIT — and gives an `undo` for the rare case
 * where the COMMIT itself fails.
 *
 * While the checkpoint thread has the write gate closed (src/db/write-gate.ts) a flush waits for
 * it — asynchronously, so the thread goes on reading and answering — and then runs everything
 * that came in meanwhile in one batch.
 *
 * The fsync off the main thread (`sync: "background"`, the server's default on a file): a batch
 * commits with synchronous=NORMAL (the WAL frames are written, not yet flushed), which ends the
 * transaction and frees the write lock at once; then one `fdatasync` of the -wal file runs on a
 * pool thread, and the batch's promises settle when it returns — nothing is acknowledged before
 * it is on disk, as with synchronous=FULL. Meanwhile the main thread reads the next requests and
 * the next batch (or the applier) can write; batches committed while a flush is in flight share
 * the next one. A failed fdatasync rejects its batches (SQLITE_IOERR_FSYNC: 503, not saved) and
 * calls `onSyncFailure` (the server stops).
 * Only the commit's own wait moves: every other write on this connection still commits with
 * synchronous=FULL. `durable()` waits until everything committed so far is flushed (for work
 * that acts outside the database, e.g. sending an event). A power cut can only lose frames
 * nobody was told are saved, and WAL frames are checksummed in a chain: nothing written after a
 * lost frame (the applier's rows of that entry) survives it.
 */
export interface WriteJob<T> {
  run(): T;
  /** Reverts in-memory effects of a successful run() when the batch's COMMIT fails. */
  undo?(result: T): void;
}

interface Pending {
  job: WriteJob<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class WriterClosedError extends Error {
  constructor() {
    super("the database writer is shut down");
  }
}

/** The -wal file's fdatasync failed: the batches it covered are not acknowledged. */
export class SyncFailedError extends Error {
  readonly code = "SQLITE_IOERR_FSYNC";
  constructor(cause: unknown) {
    super(`could not flush the database's write-ahead log to disk: ${String((cause as Error)?.message ?? cause)}`);
  }
}

/**
 * How a batch's COMMIT reaches the disk: "inline" (synchronous=FULL, the fsync inside COMMIT on
 * the main thread) or "background" (see above). `flushWal` is the background flush (tests give
 * their own to hold or fail it); by default an fdatasync of `<file>-wal` on a pool thread.
 */
export interface CommitSync {
  mode: "inline" | "background";
  flushWal?: (done: (err: unknown) => void) => void;
}

/** Most jobs one transaction takes; the rest wait for the next flush (keeps each stall short). */
export const MAX_BATCH = 2_000;

export class GroupCommitWriter {
  readonly name = "group-commit-writer";
  private pending: Pending[] = [];
  /** Jobs that wait for a batch someone else causes (see `ride`). */
  private riders: Pending[] = [];
  private riderTimer: ReturnType<typeof setTimeout> | undefined;
  private scheduled = false;
  private closed = false;
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly release: Statement;
  private readonly rollbackTo: Statement;
  /**
   * Told true just before a flush asks for the write lock and false once it let go (the intake
   * applier, on another connection, yields the lock to requests: services/intake/applier-lock.ts).
   */
  readonly lockListeners: Array<(wanted: boolean) => void> = [];
  /** Transactions committed and jobs run (for tests and metrics). */
  readonly stats = { batches: 0, jobs: 0, largestBatch: 0, flushMs: 0, commitMs: 0, syncs: 0 };
  /** Derived counts of the batch's message inserts: summed, written once before COMMIT. */
  private readonly derived: DerivedCounts;
  /** Stage sums (--stage-timing): each job's run() and each COMMIT. */
  timing: StageTiming | null = null;

  /** A flush is waiting for the write gate to open. */
  private held = false;
  /**
   * Null when the write lock's other user (the intake applier) is not in a turn; else a promise
   * that settles when its turn ended, during which it starts no new one (given at construction).
   */
  beforeLock: (() => Promise<void> | null) | undefined;
  /** A flush is waiting for `beforeLock`. */
  private lockWaiting = false;
  /**
   * After a failed flush (the server stops: after an fsync error the kernel may have dropped the
   * pages, so a later flush could "succeed" over a hole in the log and lose what it acknowledges).
   */
  onSyncFailure: ((err: SyncFailedError) => void) | undefined;

  /** Background sync: the flush of the -wal file, and what waits for it. */
  private readonly flushWal: ((done: (err: unknown) => void) => void) | undefined;
  private walFd: number | undefined;
  private readonly onFile: boolean;
  private flushing = false;
  /** Settles of batches committed since the flush in flight started (they need the next one). */
  private unflushed: Array<(err: unknown) => void> = [];
  /** Background sync: the batch commits with synchronous=NORMAL (see `runBatch`). */
  private readonly relaxed: boolean = false;

  constructor(
    private readonly sqlite: Database,
    private readonly logger?: Logger,
    private readonly gate?: WriteGate,
    sync: CommitSync = { mode: "inline" },
    /** The other writer's handshake (the intake applier), the stop on a failed sync, stage sums. */
    hooks: { lockListener?: (wanted: boolean) => void; beforeLock?: () => Promise<void> | null; onSyncFailure?: (err: SyncFailedError) => void; timing?: StageTiming | null } = {},
  ) {
    if (hooks.lockListener) this.lockListeners.push(hooks.lockListener);
    this.beforeLock = hooks.beforeLock;
    this.onSyncFailure = hooks.onSyncFailure;
    this.timing = hooks.timing ?? null;
    this.derived = derivedCounts(sqlite);
    this.begin = sqlite.prepare("BEGIN IMMEDIATE");
    this.commit = sqlite.prepare("COMMIT");
    this.rollback = sqlite.prepare("ROLLBACK");
    this.savepoint = sqlite.prepare("SAVEPOINT job");
    this.release = sqlite.prepare("RELEASE job");
    this.rollbackTo = sqlite.prepare("ROLLBACK TO job");
    this.onFile = sqlite.filename !== "" && sqlite.filename !== ":memory:";
    if (sync.mode === "background" && (this.onFile || sync.flushWal)) {
      this.flushWal = sync.flushWal ?? ((done) => fdatasync(this.walFile(), done));
      this.relaxed = true;
    }
  }

  /** The -wal file (it exists once a batch committed; the connection keeps it for its life). */
  private walFile(): number {
    if (this.walFd === undefined) this.walFd = openSync(this.sqlite.filename + "-wal", "r+");
    return this.walFd;
  }

  /** Starts a flush of the -wal file for the batches committed since the last one started. */
  private startFlush(): void {
    if (this.flushing || this.unflushed.length === 0) return;
    const settles = this.unflushed;
    this.unflushed = [];
    this.flushing = true;
    const done = (err: unknown) => {
      this.flushing = false;
      this.stats.syncs++;
      const failure = err ? new SyncFailedError(err) : undefined;
      if (failure) this.logger?.error("could not flush the database to disk; the writes it covered are not acknowledged", { error: failure.message, batches: settles.length });
      for (const settle of settles) settle(failure);
      if (failure) this.onSyncFailure?.(failure);
      this.startFlush();
      this.closeWal();
    };
    try {
      this.flushWal!(done);
    } catch (err) {
      done(err);
    }
  }

  /**
   * Resolves once everything committed so far is on disk (at once with the inline sync, or when
   * nothing waits for a flush). Never rejects: a failed flush is reported to its own batches.
   */
  durable(): Promise<void> {
    if (!this.flushWal || (!this.flushing && this.unflushed.length === 0)) return Promise.resolve();
    return new Promise((resolve) => {
      this.unflushed.push(() => resolve());
      this.startFlush();
    });
  }

  submit<T>(job: WriteJob<T>): Promise<T> {
    if (this.closed) return Promise.reject(new WriterClosedError());
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ job: job as WriteJob<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Background work (the event dispatcher's bookkeeping): the job joins the next batch that
   * commits anyway, so it costs no fsync of its own while requests are writing; when none comes
   * within `maxWaitMs` it is flushed on its own.
   */
  ride<T>(job: WriteJob<T>, maxWaitMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new WriterClosedError());
    return new Promise<T>((resolve, reject) => {
      this.riders.push({ job: job as WriteJob<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (this.riderTimer === undefined) {
        this.riderTimer = setTimeout(() => {
          this.riderTimer = undefined;
          if (this.riders.length > 0 && !this.scheduled) {
            this.scheduled = true;
            setImmediate(() => this.flush());
          }
        }, maxWaitMs);
        (this.riderTimer as { unref?: () => void }).unref?.();
      }
    });
  }

  /** Runs everything pending now (synchronously), or once the write gate opens (unless `force`). */
  flush(force = false): void {
    if (!force && this.gate?.closed) {
      this.scheduled = true;
      if (!this.held) {
        this.held = true;
        // Once the wait ends — the gate opened, or its bound passed — the batch goes, even if
        // the gate is (still, or again) closed: a writer waits at most one bound per batch.
        void this.gate.wait().then(() => {
          this.held = false;
          this.flushNow(false);
        });
      }
      return;
    }
    this.flushNow(force);
  }

  /**
   * Runs the batch, first waiting — asynchronously, unless `sync` — for the other writer's turn
   * to end (`beforeLock`): meanwhile this thread goes on reading requests, which join the batch.
   */
  private flushNow(sync: boolean): void {
    if (!sync && this.beforeLock) {
      if (this.lockWaiting) return; // the wait in flight flushes when it ends
      const wait = this.beforeLock();
      if (wait) {
        this.scheduled = true;
        this.lockWaiting = true;
        void wait.then(() => {
          this.lockWaiting = false;
          this.flushNow(true);
        });
        return;
      }
    }
    if (this.pending.length === 0 && this.riders.length === 0) {
      this.scheduled = false;
      return;
    }
    this.scheduled = false;
    if (this.riders.length > 0) {
      // Riders go last: the requests' jobs keep their order and the batch's first place.
      this.pending.push(...this.riders);
      this.riders = [];
      clearTimeout(this.riderTimer);
      this.riderTimer = undefined;
    }
    const t0 = performance.now();
    for (const l of this.lockListeners) l(true);
    while (this.pending.length > 0) {
      const batch = this.pending.length > MAX_BATCH ? this.pending.splice(0, MAX_BATCH) : this.pending;
      if (batch === this.pending) this.pending = [];
      this.runBatch(batch);
    }
    for (const l of this.lockListeners) l(false);
    this.stats.flushMs += performance.now() - t0;
  }

  private runBatch(batch: Pending[]): void {
    const results: Array<{ ok: boolean; value: unknown }> = new Array(batch.length);
    try {
      // Set outside the transaction (SQLite refuses a change inside one), back to FULL after it.
      // exec, not a kept statement: a PRAGMA acts when it is compiled, so re-running one does not.
      if (this.relaxed) this.sqlite.exec("PRAGMA synchronous = NORMAL");
      this.begin.run();
    } catch (err) {
      this.restoreFull();
      for (const p of batch) p.reject(err);
      return;
    }
    this.derived.beginBatch();
    const timing = this.timing;
    const j0 = timing ? performance.now() : 0;
    for (let i = 0; i < batch.length; i++) {
      this.savepoint.run();
      const mark = this.derived.mark();
      try {
        const value = batch[i].job.run();
        this.release.run();
        results[i] = { ok: true, value };
      } catch (err) {
        this.derived.rollbackTo(mark);
        try {
          this.rollbackTo.run();
          this.release.run();
        } catch {}
        results[i] = { ok: false, value: err };
      }
    }
    const c0 = performance.now();
    if (timing) timing.add("writeJob", c0 - j0);
    try {
      this.derived.flush();
      this.commit.run();
      this.restoreFull();
      const c1 = performance.now();
      this.stats.commitMs += c1 - c0;
      if (timing) timing.add("commit", c1 - c0);
    } catch (err) {
      this.logger?.error("group commit failed", { error: String(err), jobs: batch.length });
      this.derived.discard();
      try {
        this.rollback.run();
      } catch {}
      this.restoreFull();
      for (let i = 0; i < batch.length; i++) {
        const r = results[i];
        if (r.ok) {
          try {
            batch[i].job.undo?.(r.value);
          } catch {}
        }
        batch[i].reject(err);
      }
      return;
    }
    this.stats.batches++;
    this.stats.jobs += batch.length;
    if (batch.length > this.stats.largestBatch) this.stats.largestBatch = batch.length;
    const settle = (failure: unknown) => {
      for (let i = 0; i < batch.length; i++) {
        const r = results[i];
        if (failure) {
          // Not on disk: undone in memory too, like a failed COMMIT (the rows may still be read
          // until the process stops; no client was told they are saved).
          if (r.ok) {
            try {
              batch[i].job.undo?.(r.value);
            } catch {}
          }
          batch[i].reject(failure);
        } else if (r.ok) batch[i].resolve(r.value);
        else batch[i].reject(r.value);
      }
    };
    if (this.flushWal) {
      this.unflushed.push(settle);
      this.startFlush();
    } else settle(undefined);
  }

  /** Back to synchronous=FULL for every write outside a batch (a no-op with the inline sync). */
  private restoreFull(): void {
    if (!this.relaxed) return;
    try {
      this.sqlite.exec("PRAGMA synchronous = FULL");
    } catch {}
  }

  start(): void {
    this.closed = false;
  }

  /** Flushes what is pending (to disk, synchronously) and refuses new jobs. */
  stop(): void {
    this.flush(true);
    this.closed = true;
    if (this.walFd !== undefined || this.unflushed.length > 0) {
      // A flush still in flight settles its own batches; what came after it is flushed here.
      const settles = this.unflushed;
      this.unflushed = [];
      let failure: unknown;
      // Also when only a flush is in flight: everything committed is on disk when stop() returns.
      if (settles.length > 0 || this.flushing) {
        try {
          if (this.walFd === undefined && this.onFile) this.walFile();
          if (this.walFd !== undefined) fdatasyncSync(this.walFd);
        } catch (err) {
          failure = new SyncFailedError(err);
        }
      }
      for (const settle of settles) settle(failure);
      this.closeWal();
    }
  }

  /** After stop, once no flush is in flight: the -wal file's descriptor is closed. */
  private closeWal(): void {
    if (!this.closed || this.flushing || this.walFd === undefined) return;
    try {
      closeSync(this.walFd);
    } catch {}
    this.walFd = undefined;
  }
}
