/**
 * The write-lock handshake between the main thread and the applier Worker: two connections of
 * one database must not overlap their write transactions, because a deferred transaction that
 * has read and then writes gets SQLITE_BUSY at once (no busy wait) when the other connection
 * holds the write lock or committed meanwhile. The main thread goes first: the applier ends its
 * batch at its next chunk when the main thread wants the lock (services/intake/worker.ts).
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../../lib/log";

/** Shared slots with the applier Worker (BigInt64): its high-water mark, and the write-lock handshake. */
export const SLOT_APPLIED = 0;
export const SLOT_MAIN_WANTS = 1;
export const SLOT_APPLIER_HOLDS = 2;
/** The highest intake seq known to be on disk: the applier builds nothing from an entry past it. */
export const SLOT_DURABLE = 3;
const SHARED_SLOTS = 4;

export class ApplierLock {
  /** Shared with the applier Worker: its high-water mark as it commits, and the handshake slots. */
  readonly shared = new BigInt64Array(new SharedArrayBuffer(8 * SHARED_SLOTS));
  /** Nesting of main-thread write transactions holding the applier off (see `holdApplierOff`). */
  holdDepth = 0;
  /** Group-commit flushes waiting (asynchronously) for the applier's turn to end. */
  private turnWaits = 0;
  /** The last such wait took the whole bound: the next `holdApplierOff` does not wait again. */
  private turnWaitTimedOut = false;

  constructor(
    private readonly logger: Logger,
    /** Whether an applier Worker runs (none: nothing to wait for). */
    private readonly hasWorker: () => boolean,
    /** The longest the main thread waits for the applier's turn to end (ms). */
    private readonly maxWaitMs: number,
  ) {}

  /**
   * A main-thread transaction is about to run: the applier ends its batch at the next row,
   * commits, and stays off until `letApplierOn`.
   */
  holdApplierOff(): void {
    if (this.holdDepth++ > 0) return;
    Atomics.store(this.shared, SLOT_MAIN_WANTS, 1n);
    if (Atomics.load(this.shared, SLOT_APPLIER_HOLDS) === 0n) return;
    if (this.turnWaitTimedOut) {
      // `applierTurnEnded` already waited the whole bound for this flush.
      this.turnWaitTimedOut = false;
      return;
    }
    // The applier ends its turn at its next chunk (ms). A thread stuck inside its turn must not
    // stop the server: after the barrier's bound this transaction goes ahead, and SQLite's
    // busy_timeout decides (a 503 at worst, never a hang).
    const end = performance.now() + this.maxWaitMs;
    while (Atomics.load(this.shared, SLOT_APPLIER_HOLDS) !== 0n) {
      const left = end - performance.now();
      if (left <= 0) {
        this.warnApplierHeld();
        return;
      }
      Atomics.wait(this.shared, SLOT_APPLIER_HOLDS, 1n, Math.min(100, left));
    }
  }

  /**
   * The group commit's wait for the applier, without blocking this thread: null when the applier
   * is not in a turn; else the applier is asked to end its turn at its next chunk and start no
   * new one, and the promise resolves once it has (at most the barrier's bound). The flush that
   * follows takes the lock through `holdApplierOff` as any transaction does.
   */
  applierTurnEnded(): Promise<void> | null {
    if (!this.hasWorker() || this.holdDepth > 0 || Atomics.load(this.shared, SLOT_APPLIER_HOLDS) === 0n) return null;
    Atomics.store(this.shared, SLOT_MAIN_WANTS, 1n);
    this.turnWaits++;
    const r = Atomics.waitAsync(this.shared, SLOT_APPLIER_HOLDS, 1n, this.maxWaitMs);
    const done = (outcome: string) => {
      this.turnWaits--;
      if (outcome === "timed-out") {
        this.turnWaitTimedOut = true;
        this.warnApplierHeld();
      }
      // The flush runs right after this (same turn of the event loop) and lets go when done; if
      // it had nothing left to write, the applier is let on here.
      setImmediate(() => {
        if (this.turnWaits === 0 && this.holdDepth === 0) this.releaseLock();
      });
    };
    return r.async ? r.value.then(done) : (done(r.value), Promise.resolve());
  }

  /** The applier kept its turn past the barrier's bound: the main thread goes ahead (SQLite's busy_timeout decides). */
  private warnApplierHeld(): void {
    this.logger.warn("submission applier did not let go of the database in time; going ahead", { waitedMs: this.maxWaitMs });
  }

  letApplierOn(): void {
    if (this.holdDepth === 0 || --this.holdDepth > 0) return;
    // A flush waiting for the applier's turn to end still wants the lock next.
    if (this.turnWaits > 0) return;
    this.releaseLock();
  }

  private releaseLock(): void {
    Atomics.store(this.shared, SLOT_MAIN_WANTS, 0n);
    Atomics.notify(this.shared, SLOT_MAIN_WANTS);
  }

  /** A dead applier Worker held its turn: the main thread's transactions must not wait for it. */
  applierDied(): void {
    Atomics.store(this.shared, SLOT_APPLIER_HOLDS, 0n);
    Atomics.notify(this.shared, SLOT_APPLIER_HOLDS);
  }

  /**
   * Every `sqlite.transaction(...)` of the main connection holds the applier off while it runs
   * (services open their transactions that way; the group commit tells `writerWantsLock`).
   */
  guardTransactions(sqlite: Database): void {
    const original = sqlite.transaction.bind(sqlite);
    const lock = this;
    const hold = <F extends (...args: any[]) => any>(run: F): F =>
      function (this: unknown, ...args: any[]) {
        lock.holdApplierOff();
        try {
          return run.apply(this, args);
        } finally {
          lock.letApplierOn();
        }
      } as F;
    (sqlite as { transaction: typeof sqlite.transaction }).transaction = ((fn: (...args: any[]) => any) => {
      const t = original(fn);
      const guarded = hold(t) as typeof t;
      guarded.deferred = hold(t.deferred);
      guarded.immediate = hold(t.immediate);
      guarded.exclusive = hold(t.exclusive);
      return guarded;
    }) as typeof sqlite.transaction;
  }
}
