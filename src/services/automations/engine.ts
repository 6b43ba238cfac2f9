/**
 * The automations engine (docs/api-decisions.md, "Automations"): the inbox a trigger on
 * submissions fills turned into runs, the runs a cause marked stopped, the runs whose steps have
 * all gone out completed — each a bounded chunk per transaction, on a timer and when a change is
 * announced. The run rules themselves are runs.ts's.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../../lib/clock";
import { iso } from "../../lib/clock";
import type { Logger } from "../../lib/log";
import { emitEvent } from "../events";
import {
  anyStopping,
  completableRuns,
  deleteInboxRow,
  findAutomationById,
  finishRun,
  inboxBatch,
  inboxEmpty,
  markRunStopping,
  repliedSince,
  runContact,
  runOfSubmission,
  stoppingRuns,
  submissionValues,
} from "../../db/stores/automations";
import { merge, outcome, type Outcome, type RunContext, type Runs } from "./runs";
import { runView } from "./views";

/** Inbox rows per transaction. */
const INBOX_CHUNK = 100;
/** Runs stopped or completed per transaction. */
const FINISH_CHUNK = 200;
/** The engine's backstop timer: inbox, stops, completions (unfinished starts: starts.ts). */
export const AUTOMATION_SWEEP_MS = 2_000;

export class AutomationEngine {
  private draining = false;
  private stopping = false;
  private completing = false;
  /** Where the last page of completeDue ended (null: at the start). */
  private completeCursor: { endsAt: string; id: string } | null = null;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private completeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly runs: Runs,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.sweep();
    this.timer = setInterval(() => this.sweep(), AUTOMATION_SWEEP_MS);
    this.timer.unref?.();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.completeTimer);
  }

  /** Everything that may be waiting: submissions to start, runs to stop, runs to complete. */
  sweep(): void {
    if (this.stopped) return;
    try {
      this.drainInbox();
      this.processStops();
      this.completeDue();
    } catch (err) {
      this.logger.error("automations: a sweep failed; it is retried", { error: String(err) });
    }
  }

  /**
   * processStops after a change already committed (another service's, or this one's update):
   * never thrown into the caller; logged, and the sweep retries.
   */
  stopsSafely(): void {
    try {
      this.processStops();
    } catch (err) {
      this.logger.error("automations: stopping runs failed; the sweep retries it", { error: String(err) });
    }
  }

  /** Before a read: what the applier applied starts its runs, and marked stops are done. */
  catchUp(): void {
    try {
      this.drainInbox();
      this.processStops();
    } catch (err) {
      // The read still answers; the sweep retries the work.
      this.logger.error("automations: catching up before a read failed; the sweep retries it", { error: String(err) });
    }
  }

  /** Turns the inbox's submissions into runs: a transaction per INBOX_CHUNK rows, one per turn of the event loop. */
  drainInbox(): void {
    if (this.draining || inboxEmpty(this.sqlite)) return;
    this.draining = true;
    let more = false;
    try {
      const out = outcome();
      let n = 0;
      try {
        n = this.sqlite.transaction(() => {
          const rows = inboxBatch(this.sqlite, INBOX_CHUNK);
          const now = this.clock();
          const contexts = new Map<string, RunContext | null>();
          for (const r of rows) {
            // One row that cannot be started (a bug, a vanished form) must not hold up the rest.
            const rowOut = outcome();
            try {
              this.sqlite.transaction(() => this.startFromSubmission(r, contexts, now, rowOut))();
              merge(out, rowOut);
            } catch (err) {
              this.runs.unreserve(rowOut);
              // The database's state (busy, a disk error) is not the row's fault: the whole
              // batch rolls back and the row is tried again.
              if (/^SQLITE_(BUSY|LOCKED|IOERR|FULL|NOMEM)/.test(String((err as { code?: unknown })?.code ?? ""))) throw err;
              this.logger.error("automations: a submission could not start its run; skipped", { automationId: r.automationId, submissionId: r.submissionId, error: String(err) });
            }
            deleteInboxRow(this.sqlite, r.seq);
          }
          return rows.length;
        })();
      } catch (err) {
        this.runs.unreserve(out);
        throw err;
      }
      this.runs.afterCommit(out);
      more = n === INBOX_CHUNK;
    } finally {
      this.draining = false;
    }
    if (more) this.later(() => this.drainInbox());
  }

  private startFromSubmission(r: { automationId: string; submissionId: string; contactId: string; accountId: string; createdAt: string }, contexts: Map<string, RunContext | null>, now: number, out: Outcome): void {
    let ctx = contexts.get(r.automationId);
    if (ctx === undefined) {
      const a = findAutomationById(this.sqlite, r.automationId);
      ctx = a && a.isActive && a.deletedAt === null ? this.runs.context(a) : null;
      contexts.set(r.automationId, ctx);
    }
    if (ctx === null) return;
    if (runOfSubmission(this.sqlite, r.automationId, r.submissionId)) return;
    const contact = runContact(this.sqlite, r.accountId, r.contactId);
    if (!contact) return;
    const run = this.runs.startRun(ctx, contact, Date.parse(r.createdAt), r.submissionId, now, out, submissionValues(this.sqlite, r.submissionId));
    // A reply that came between the submission and this moment (the inbox waited) stops it too.
    if (typeof run === "object" && ctx.a.stopOnReply === 1 && repliedSince(this.sqlite, contact.id, r.createdAt)) markRunStopping(this.sqlite, run.runId, "replied");
  }

  /**
   * Stops the runs a cause marked (see the module comment): one chunk now (a contact's few runs,
   * at once), the rest a chunk per turn of the event loop, so turning off an automation with
   * 50,000 runs never holds the server.
   */
  processStops(): void {
    if (this.stopping || !anyStopping(this.sqlite)) return;
    this.stopping = true;
    let more = false;
    try {
      const out = outcome();
      const n = this.sqlite.transaction(() => {
        const now = this.clock();
        const runs = stoppingRuns(this.sqlite, FINISH_CHUNK);
        for (const r of runs) this.runs.stopRun(r, r.stopReason!, now, out);
        return runs.length;
      })();
      this.runs.afterCommit(out);
      more = n === FINISH_CHUNK;
    } finally {
      this.stopping = false;
    }
    if (more) this.later(() => this.processStops());
  }

  /** Runs `fn` on the next turn of the event loop (errors logged; the sweep retries). */
  private later(fn: () => void): void {
    setImmediate(() => {
      if (this.stopped) return;
      try {
        fn();
      } catch (err) {
        this.logger.error("automations: a step of work failed; the sweep retries it", { error: String(err) });
      }
    });
  }

  /**
   * Runs whose every step has gone out (or failed, or was skipped): completed. A bounded page of
   * FINISH_CHUNK runs per call, the cursor moving on from call to call.
   */
  completeDue(): void {
    if (this.completing) return;
    this.completing = true;
    let more = false;
    try {
      const now = this.clock();
      const { runs, last } = completableRuns(this.sqlite, iso(now), this.completeCursor, FINISH_CHUNK);
      // Read first: an idle sweep writes nothing. finishRun only moves a run still active.
      if (runs.length > 0) {
        this.sqlite.transaction(() => {
          for (const r of runs) {
            if (!finishRun(this.sqlite, r.id, "completed", null, iso(now))) continue;
            emitEvent(this.sqlite, r.accountId, "automation.run.completed", () => ({ run: runView(this.sqlite, r.id) }), now);
          }
        })();
      }
      this.completeCursor = last;
      // The next page at once only while pages complete runs: runs held up by texts still
      // queued (no phone online) are looked at a page per sweep, not all of them every time.
      more = last !== null && runs.length > 0;
    } finally {
      this.completing = false;
    }
    if (more) this.later(() => this.completeDue());
  }

  scheduleCompletion(): void {
    if (this.completeTimer !== undefined || this.stopped) return;
    this.completeTimer = setTimeout(() => {
      this.completeTimer = undefined;
      try {
        this.completeDue();
      } catch (err) {
        this.logger.error("automations: completing runs failed; retried on the next sweep", { error: String(err) });
      }
    }, 500);
    this.completeTimer.unref?.();
  }
}
