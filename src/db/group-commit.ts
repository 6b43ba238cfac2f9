import type { Database, Statement } from "bun:sqlite";
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
   * applier, on another connection, yields the lock to requests: services/intake.ts).
   */
  readonly lockListeners: Array<(wanted: boolean) => void> = [];
  /** Transactions committed and jobs run (for tests and metrics). */
  readonly stats = { batches: 0, jobs: 0, largestBatch: 0, flushMs: 0, commitMs: 0 };
  /** Derived counts of the batch's message inserts: summed, written once before COMMIT. */
  private readonly derived: DerivedCounts;
  /** Stage sums (--stage-timing): each job's run() and each COMMIT. */
  timing: StageTiming | null = null;

  /** A flush is waiting for the write gate to open. */
  private held = false;

  constructor(
    private readonly sqlite: Database,
    private readonly logger?: Logger,
    private readonly gate?: WriteGate,
  ) {
    this.derived = derivedCounts(sqlite);
    this.begin = sqlite.prepare("BEGIN IMMEDIATE");
    this.commit = sqlite.prepare("COMMIT");
    this.rollback = sqlite.prepare("ROLLBACK");
    this.savepoint = sqlite.prepare("SAVEPOINT job");
    this.release = sqlite.prepare("RELEASE job");
    this.rollbackTo = sqlite.prepare("ROLLBACK TO job");
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
          this.flush(true);
        });
      }
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
      this.begin.run();
    } catch (err) {
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
      const c1 = performance.now();
      this.stats.commitMs += c1 - c0;
      if (timing) timing.add("commit", c1 - c0);
    } catch (err) {
      this.logger?.error("group commit failed", { error: String(err), jobs: batch.length });
      this.derived.discard();
      try {
        this.rollback.run();
      } catch {}
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
    for (let i = 0; i < batch.length; i++) {
      const r = results[i];
      if (r.ok) batch[i].resolve(r.value);
      else batch[i].reject(r.value);
    }
  }

  start(): void {
    this.closed = false;
  }

  /** Flushes what is pending and refuses new jobs. */
  stop(): void {
    this.flush(true);
    this.closed = true;
  }
}
