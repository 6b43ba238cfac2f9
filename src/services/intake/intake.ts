/**
 * The webhook's append-only commit path, main-thread side.
 *
 *   request ──► group commit: intake row (+ idempotency row) ──► 200
 *                     │ wake (postMessage)
 *                     ▼
 *   applier Worker (own connection): contacts, messages, submissions, FTS, counts, events
 *                     │ batch report (high-water mark)
 *                     ▼
 *   main thread: read barrier released, overlay pruned, phones woken, event dispatcher woken
 *
 * Between a 200 and its apply, the request path's rules (the contact by phone, the duplicate
 * window, the per-recipient and daily limits) see the submission through an in-memory overlay of
 * the unapplied entries. Inside a group-commit job the overlay is read together with
 * intake_applied.seq (same snapshot), so an entry is counted either from SQLite or from the
 * overlay, never both and never neither.
 *
 * The read barrier: an API request that may read what the webhook wrote waits until the applier
 * has passed the newest acknowledged intake seq (`barrier()`; null when it already has).
 *
 * This module supervises the applier Worker (start, restart, stop) and holds the barrier; the
 * overlay is services/intake/overlay.ts, the write-lock handshake services/intake/applier-lock.ts,
 * the applier's work services/intake/applier.ts and its thread services/intake/worker.ts.
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../../lib/log";
import { IntakeApplier, type BatchResult } from "./applier";
import { EventOutbox, registerOutbox } from "../events";
import type { ApplierCommand, ApplierReport } from "./worker";
import { IntakeOverlay, type PendingEntry } from "./overlay";
import { ApplierLock, SLOT_APPLIED, SLOT_DURABLE } from "./applier-lock";

export type { PendingEntry } from "./overlay";

/** In the compiled binary the worker is a second entry point (scripts/build.ts), found by its path from src/. */
const WORKER_ENTRY = import.meta.url.includes("/$bunfs/") ? "./services/intake/worker.ts" : new URL("./worker.ts", import.meta.url).href;

/** Applier lags kept for the metrics' percentiles. */
const LAG_SAMPLES = 4_096;

/**
 * Longest an API request waits at the read barrier before it is answered 503 with Retry-After
 * (ms). A healthy applier at full webhook load stays far below it (its lag p99 target is 200 ms);
 * only a wedged or dead applier reaches it, and then the request fails fast instead of hanging.
 */
export const BARRIER_MAX_WAIT_MS = 2_000;

/** A dead applier Worker is started again at once; if it died again within this long, after RESTART_BACKOFF_MS. */
const RESTART_WINDOW_MS = 5_000;
const RESTART_BACKOFF_MS = 1_000;

export class SubmissionIntake {
  readonly name = "intake-applier";
  /** Highest intake seq handed out (committed or not). */
  private lastSeq: number;
  /** Highest seq whose commit was acknowledged. */
  private acked: number;
  /** Highest seq the applier has applied (as reported). */
  private applied: number;
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  /** Requests at the read barrier, oldest first (each with its deadline, performance.now() ms). */
  private waiters: Array<{ seq: number; deadline: number; resolve: (caughtUp: boolean) => void }> = [];
  private waiterTimer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() of the last restart of a dead applier (a restart loop is slowed down). */
  private lastRestartAt = -Infinity;
  /** Restarts of a dead applier Worker since boot. */
  restarts = 0;
  private stopWaiter: (() => void) | undefined;
  private wakeQueued = false;
  /** Acknowledged, unapplied entries as the request path's rules read them. */
  private readonly overlay = new IntakeOverlay();
  /** Acknowledgement time per seq, until applied (applier lag). */
  private readonly ackedAt = new Map<number, number>();
  private readonly lags = new Float64Array(LAG_SAMPLES);
  /** The write-lock handshake with the applier; its shared slots carry the applier's high-water mark as it commits (`settleSync` waits on it). */
  private readonly lock: ApplierLock;
  private readonly shared: BigInt64Array;
  private lagCount = 0;
  /** Told the accounts that got queued messages, once they are applied (phones are woken). */
  private readonly appliedListeners: Array<(accounts: string[], emitted: boolean) => void> = [];
  readonly stats = { batches: 0, rows: 0, skipped: 0, applyMs: 0 };

  /**
   * `dbPath` ":memory:" (no second connection possible) applies inline: in the request's own
   * write job, as before this design.
   */
  constructor(
    sqlite: Database,
    private readonly dbPath: string,
    private readonly logger: Logger,
    /** Page cache of the applier's connection, in MiB (the server's --sqlite-cache-mb). */
    private readonly cacheMb = 0,
    /** The checkpoint thread's write gate (src/db/write-gate.ts): the applier holds its batches while it is closed. */
    private readonly writeGate?: SharedArrayBuffer,
  ) {
    this.lock = new ApplierLock(logger, () => this.worker !== undefined, BARRIER_MAX_WAIT_MS);
    this.shared = this.lock.shared;
    const applier = new IntakeApplier(sqlite);
    this.applied = applier.store.appliedSeq();
    this.lastSeq = applier.store.lastSeq();
    this.acked = this.lastSeq;
    Atomics.store(this.shared, SLOT_APPLIED, BigInt(this.applied));
    // What the file holds at boot is on disk.
    Atomics.store(this.shared, SLOT_DURABLE, BigInt(this.lastSeq));
    this.inlineApplier = dbPath === ":memory:" || dbPath === "" ? applier : undefined;
  }

  /** Set when there is no applier Worker (an in-memory database). */
  readonly inlineApplier: IntakeApplier | undefined;

  /**
   * Boot: applies whatever a stop or a crash left in the intake, before anything reads the
   * messages (the queue rebuild, the message seq). Progress on the log.
   */
  static drain(sqlite: Database, logger: Logger): number {
    const applier = new IntakeApplier(sqlite);
    const left = applier.store.pending();
    if (left === 0) return 0;
    logger.info("applying the submission intake left by the last run", { rows: left });
    // Its events go out like the applier's (the server's own outbox replaces this one after boot).
    const outbox = new EventOutbox(sqlite);
    registerOutbox(sqlite, outbox);
    outbox.reload();
    applier.eventsWanted = (accountId, type) => outbox.wants(accountId, type);
    const n = applier.drain((r) => {
      for (const s of r.skipped) logger.warn("intake entry not applied: its form or account is gone", { seq: s.seq, error: s.error });
    });
    logger.info("submission intake applied", { rows: n });
    return n;
  }

  /** Subscribes to applied submissions: the accounts that got queued messages, and whether events were written. */
  onApplied(listener: (accounts: string[], emitted: boolean) => void): void {
    this.appliedListeners.push(listener);
  }

  nextSeq(): number {
    return ++this.lastSeq;
  }

  // ---- overlay (request path, inside its write job) -------------------------------------------

  /** Adds an entry the running job is about to commit. */
  add(e: PendingEntry): void {
    this.overlay.add(e);
  }

  /** Takes back the entries of a job whose COMMIT failed. */
  remove(seq: number): void {
    this.overlay.remove(seq);
  }

  /** Unapplied entries for this account's phone number past `appliedSeq` (read in the same snapshot). */
  forPhone(accountId: string, phone: string, appliedSeq: number): PendingEntry[] {
    return this.overlay.forPhone(accountId, phone, appliedSeq);
  }

  /** Unapplied queued messages of a form scheduled in [from, to). */
  countScheduled(formId: string, from: number, to: number, appliedSeq: number): number {
    return this.overlay.countScheduled(formId, from, to, appliedSeq);
  }

  /** Unapplied messages counted by the monthly quota (created in the month starting `monthStart`). */
  pendingMessages(accountId: string, monthStart: number, appliedSeq: number): number {
    return this.overlay.pendingMessages(accountId, monthStart, appliedSeq);
  }

  // ---- commit, apply, barrier -----------------------------------------------------------------

  /** The job holding `seq` committed: the applier is woken (once per turn of the event loop). */
  committed(seq: number): void {
    if (seq > this.acked) {
      this.acked = seq;
      // Called once the commit is on disk (the writer's flush): the applier may use it now.
      Atomics.store(this.shared, SLOT_DURABLE, BigInt(seq));
    }
    this.ackedAt.set(seq, performance.now());
    if (this.inlineApplier) {
      this.reportApplied({ applied: 1, seq, accounts: [], skipped: [] }, false);
      return;
    }
    if (!this.wakeQueued) {
      this.wakeQueued = true;
      queueMicrotask(() => {
        this.wakeQueued = false;
        this.worker?.postMessage({ op: "wake" } satisfies ApplierCommand);
      });
    }
  }

  /**
   * Null when every acknowledged submission is applied; else a promise that resolves true once
   * the applier has passed the newest one acknowledged now, or false after `maxWaitMs` (the
   * applier is wedged or restarting: the caller answers 503 rather than hang).
   */
  barrier(maxWaitMs = BARRIER_MAX_WAIT_MS): Promise<boolean> | null {
    if (this.applied >= this.acked) return null;
    const seq = this.acked;
    this.flush();
    return new Promise((resolve) => {
      this.waiters.push({ seq, deadline: performance.now() + maxWaitMs, resolve });
      this.armWaiterTimer();
    });
  }

  /** One timer for all waiters: it fires at the earliest deadline and lets the expired ones go. */
  private armWaiterTimer(): void {
    if (this.waiterTimer !== undefined || this.waiters.length === 0) return;
    let first = Infinity;
    for (const w of this.waiters) if (w.deadline < first) first = w.deadline;
    this.waiterTimer = setTimeout(() => {
      this.waiterTimer = undefined;
      const now = performance.now();
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.deadline <= now ? w.resolve(false) : still.push(w));
      this.waiters = still;
      this.armWaiterTimer();
    }, Math.max(0, first - performance.now()));
  }

  /**
   * The barrier for code that reads SQLite synchronously on this thread without a request (the
   * in-process test suite reads the database behind the API): blocks until the applier has
   * committed the newest acknowledged seq, at most `timeoutMs`. True when it has.
   */
  settleSync(timeoutMs = 10_000): boolean {
    // Inside a main-thread transaction the applier is held off: waiting would only time out.
    if (this.applied >= this.acked || !this.worker || this.lock.holdDepth > 0) return this.applied >= this.acked;
    const target = BigInt(this.acked);
    this.flush();
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const seen = Atomics.load(this.shared, SLOT_APPLIED);
      if (seen >= target) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.shared, SLOT_APPLIED, seen, left);
    }
  }

  /** The applier applies what is on disk now, not after its delay (a resubmission of an unapplied number). */
  applyNow(): void {
    this.flush();
  }

  /** Someone waits for the applier: it applies what is on disk now instead of after its delay (once per acknowledged seq). */
  private flush(): void {
    if (this.flushedFor >= this.acked) return;
    this.flushedFor = this.acked;
    this.worker?.postMessage({ op: "flush", seq: this.acked } satisfies ApplierCommand);
  }
  private flushedFor = 0;

  /**
   * The group commit is about to ask for the write lock (true) or let go of it (false): the
   * applier ends its batch at the next row and waits, so a request never waits for a whole batch.
   */
  writerWantsLock(wanted: boolean): void {
    if (wanted) this.holdApplierOff();
    else this.letApplierOn();
  }

  /** A main-thread transaction is about to run: the applier ends its batch and stays off (services/intake/applier-lock.ts). */
  holdApplierOff(): void {
    this.lock.holdApplierOff();
  }

  /** The group commit's wait for the applier's turn to end, without blocking (null: not in a turn). */
  applierTurnEnded(): Promise<void> | null {
    return this.lock.applierTurnEnded();
  }

  letApplierOn(): void {
    this.lock.letApplierOn();
  }

  /** Every `sqlite.transaction(...)` of the main connection holds the applier off while it runs. */
  guardTransactions(sqlite: Database): void {
    this.lock.guardTransactions(sqlite);
  }

  /** Acknowledged submissions not yet applied. */
  lag(): number {
    return this.overlay.size();
  }

  /** How long the oldest acknowledged, unapplied submission has waited (ms; 0 when none). */
  oldestPendingMs(): number {
    for (const at of this.ackedAt.values()) return Math.max(0, performance.now() - at);
    return 0;
  }

  /**
   * /health's view of the applier: "ok", or "behind" when an acknowledged submission has waited
   * longer than the read barrier's bound (API requests are being answered 503 meanwhile).
   */
  health(): { pending: number; oldestPendingMs: number; lagP99Ms: number; applier: "ok" | "behind" } {
    const oldest = this.oldestPendingMs();
    return {
      pending: this.lag(),
      oldestPendingMs: Math.round(oldest),
      lagP99Ms: Math.round(this.lagPercentiles().p99 * 10) / 10,
      applier: oldest > BARRIER_MAX_WAIT_MS ? "behind" : "ok",
    };
  }

  /** Applier lag percentiles (ms from acknowledgement to applied), over the last samples. */
  lagPercentiles(): { p50: number; p99: number; max: number; samples: number } {
    const n = Math.min(this.lagCount, LAG_SAMPLES);
    if (n === 0) return { p50: 0, p99: 0, max: 0, samples: 0 };
    const s = Array.from(this.lags.subarray(0, n)).sort((a, b) => a - b);
    return { p50: s[Math.floor(n * 0.5)], p99: s[Math.min(n - 1, Math.floor(n * 0.99))], max: s[n - 1], samples: n };
  }

  private reportApplied(r: BatchResult, emitted: boolean): void {
    if (r.seq <= this.applied) return;
    const now = performance.now();
    for (const [seq, at] of this.ackedAt) {
      if (seq > r.seq) continue;
      this.lags[this.lagCount++ % LAG_SAMPLES] = now - at;
      this.ackedAt.delete(seq);
    }
    this.applied = r.seq;
    this.overlay.prune(r.seq);
    if (this.waiters.length > 0) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (w.seq <= this.applied ? w.resolve(true) : still.push(w));
      this.waiters = still;
      if (still.length === 0 && this.waiterTimer !== undefined) {
        clearTimeout(this.waiterTimer);
        this.waiterTimer = undefined;
      }
    }
    for (const s of r.skipped) this.logger.warn("intake entry not applied: its form or account is gone", { seq: s.seq, error: s.error });
    if (r.accounts.length > 0 || emitted) for (const l of this.appliedListeners) l(r.accounts, emitted);
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** The applier thread loads while the queue is rebuilt; it has nothing to apply yet (boot drained the intake, nothing listens). */
  startEarly(): void {
    if (this.inlineApplier || this.worker !== undefined) return;
    this.spawn();
  }

  start(): Promise<void> | void {
    if (this.inlineApplier) return;
    this.startEarly();
    return this.ready;
  }

  private spawn(): void {
    const worker = new Worker(WORKER_ENTRY);
    this.worker = worker;
    this.ready = new Promise((resolve) => {
      worker.onmessage = (event: MessageEvent<ApplierReport>) => {
        const m = event.data;
        if (m.op === "ready") resolve();
        else if (m.op === "batch") {
          this.stats.batches++;
          this.stats.rows += m.result.applied;
          this.stats.skipped += m.result.skipped.length;
          this.stats.applyMs += m.ms;
          this.reportApplied(m.result, m.emitted);
        } else if (m.op === "error") this.logger.error("submission applier batch failed; retrying", { error: m.message });
        else if (m.op === "stopped") this.stopWaiter?.();
      };
    });
    // The thread died (an uncaught error, or it exited): what it had not applied is still in the
    // intake, past its high-water mark; a new one carries on from there.
    worker.onerror = (event: ErrorEvent) => this.restart(worker, event.message || "uncaught error");
    worker.addEventListener("close", () => this.restart(worker, "the thread exited"));
    worker.postMessage({ op: "open", dbPath: this.dbPath, cacheMb: this.cacheMb, gate: this.writeGate, applied: this.shared.buffer as SharedArrayBuffer } satisfies ApplierCommand);
  }

  /** Starts a new applier Worker in place of `dead` (once per dead Worker; not while stopping). */
  private restart(dead: Worker, why: string): void {
    if (this.worker !== dead || this.stopping) return;
    this.worker = undefined;
    try {
      dead.terminate();
    } catch {}
    // A thread that died in its turn must not hold the main thread's transactions off.
    this.lock.applierDied();
    const now = performance.now();
    const delay = now - this.lastRestartAt < RESTART_WINDOW_MS ? RESTART_BACKOFF_MS : 0;
    this.lastRestartAt = now + delay;
    this.restarts++;
    this.logger.error("submission applier stopped unexpectedly; restarting it (it resumes after the last applied submission)", {
      error: why,
      pending: this.lag(),
      restartInMs: delay,
    });
    setTimeout(() => {
      if (this.stopping || this.worker !== undefined) return;
      this.spawn();
    }, delay);
  }

  /**
   * Test hooks: block the applier thread for `ms` (a wedged applier: its event loop stuck), or
   * make it exit as a crash would. Nothing calls them outside the tests.
   */
  wedgeApplierForTest(ms: number): void {
    this.worker?.postMessage({ op: "wedge", ms } satisfies ApplierCommand);
  }

  crashApplierForTest(): void {
    this.worker?.postMessage({ op: "crash" } satisfies ApplierCommand);
  }

  private stopping = false;

  /** Applies what is left (after the writer's last flush), then ends the thread. */
  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      this.stopWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
      // The writer stopped first and flushed everything: all of the intake is on disk.
      Atomics.store(this.shared, SLOT_DURABLE, BigInt(Math.max(this.lastSeq, this.acked)));
      worker.postMessage({ op: "stop" } satisfies ApplierCommand);
    });
    worker.terminate();
    this.worker = undefined;
    // Anyone still waiting is let through: the server is stopping.
    for (const w of this.waiters) w.resolve(true);
    this.waiters = [];
    if (this.waiterTimer !== undefined) clearTimeout(this.waiterTimer);
    this.waiterTimer = undefined;
  }
}

