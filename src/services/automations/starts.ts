/**
 * Start jobs (POST /v1/automations/<id>/start): who of a segment would start and who is skipped,
 * then a job committed and its runs created in the background, a chunk per group-commit job, its
 * cursor moving in the chunk's transaction (as broadcasts do); a restart carries on from the cursor.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../../lib/clock";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Logger } from "../../lib/log";
import { AppError, validationError } from "../../errors";
import { WriterClosedError, type GroupCommitWriter } from "../../db/group-commit";
import { newestContactId } from "../../db/stores/broadcasts";
import { parseSegment } from "../../domain/broadcast";
import type { FieldError } from "../../domain/submission";
import { advanceStart, findAutomationById, findStart, insertStart, runningStarts, segmentContacts, type AutomationRecord } from "../../db/stores/automations";
import { outcome, type Outcome, type Runs } from "./runs";
import { RUN_SKIP_REASONS, type RunSkip } from "./views";

/** Contacts per start job: one group-commit job of 100 messages for two steps, as a broadcast's chunk (the bench: 50 held the webhook's p99 where 100 did not, at the same speed). */
export const START_CHUNK = 50;
const tick = () => new Promise<void>((r) => setImmediate(r));

export class AutomationStarts {
  private stopped = false;
  /** Start jobs whose loop runs in this process. */
  private readonly running = new Set<string>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly runs: Runs,
    private readonly writer: GroupCommitWriter,
    private readonly logger: Logger,
  ) {}

  /** At boot: the jobs a stop or crash left unfinished carry on from their cursors. */
  resume(): void {
    this.stopped = false;
    for (const s of runningStarts(this.sqlite)) this.runStart(s.id);
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * POST /v1/automations/<id>/start: counts who would start and who is skipped and why; a dry
   * run stops there. Otherwise a start job is committed and its runs are created in the
   * background, a chunk per transaction.
   */
  async start(a: AutomationRecord, body: unknown, opts: { dryRun: boolean }) {
    const { accountId, id } = a;
    const b = (body ?? {}) as Record<string, unknown>;
    const errors: FieldError[] = [];
    if (typeof b !== "object" || Array.isArray(b)) errors.push({ field: "body", message: "the body must be a JSON object", requirement: "object", provided: null });
    else {
      for (const k of Object.keys(b)) {
        if (k !== "segment" && k !== "dryRun") errors.push({ field: k, message: `unknown field '${k}'; allowed: segment, dryRun`, requirement: "segment, dryRun", provided: k });
      }
      if (b.dryRun !== undefined && typeof b.dryRun !== "boolean") errors.push({ field: "dryRun", message: "dryRun must be true or false", requirement: "boolean", provided: null });
    }
    const { filter, segmentInput } = parseSegment(typeof b === "object" && b !== null ? b.segment : undefined, errors);
    if (errors.length) throw validationError(errors);
    const dryRun = opts.dryRun || b.dryRun === true;
    if (!a.isActive) {
      throw new AppError("AUTOMATION_INACTIVE", { details: { automationId: id, action: "Turn the automation on (PUT /v1/automations/<id> with isActive: true), then start it" } });
    }
    const ctx = this.runs.context(a);
    if (ctx === null) throw new AppError("FORM_NOT_FOUND", { details: { formId: a.formId } });
    const lastContactId = newestContactId(this.sqlite, accountId) ?? "";
    // Counted a chunk at a time with the event loop free in between: 50,000 contacts never hold it.
    let contacts = 0;
    let starting = 0;
    const skipped = Object.fromEntries(RUN_SKIP_REASONS.map((r) => [r, 0])) as Record<RunSkip, number>;
    let cursor = "";
    for (;;) {
      const rows = segmentContacts(this.sqlite, { accountId, filter, lastContactId, cursor, limit: 1_000 });
      for (const c of rows) {
        contacts++;
        const why = this.runs.runSkip(ctx, c);
        if (why) skipped[why]++;
        else starting++;
      }
      if (rows.length < 1_000) break;
      cursor = rows[rows.length - 1].id;
      await tick();
    }
    if (dryRun) return { dryRun: true as const, contacts, starting, skipped };
    const now = iso(this.clock());
    const jobId = newId();
    insertStart(this.sqlite, {
      id: jobId,
      automationId: id,
      accountId,
      segment: segmentInput,
      lastContactId,
      cursor: "",
      status: starting > 0 ? "running" : "done",
      started: 0,
      skipped: {},
      createdAt: now,
      updatedAt: now,
    });
    if (starting > 0) this.runStart(jobId);
    return { dryRun: false as const, startId: jobId, contacts, starting, skipped };
  }

  /** Resolves when no start job is running in this process (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Bun.sleep(5);
  }

  private runStart(jobId: string): void {
    if (this.running.has(jobId)) return;
    this.running.add(jobId);
    void (async () => {
      // Two chunks in flight: the next one runs while the last one's commit is being flushed to
      // disk (the fsync off the main thread, src/db/group-commit.ts), so the start is not paced
      // by the disk. Each chunk's messages reach the queue only once its commit is on disk.
      let flushing: Promise<boolean> | null = null;
      try {
        while (!this.stopped) {
          const chunk = this.startChunk(jobId);
          const more = await chunk.ran;
          if (flushing) await flushing;
          flushing = chunk.saved;
          if (!more) break;
          await tick();
        }
        if (flushing) await flushing;
      } catch (err) {
        // The cursor is where the last committed chunk left it: the next start carries on.
        if (!(err instanceof WriterClosedError)) this.logger.error("automations: starting runs stopped; it carries on at the next start", { startId: jobId, error: String(err) });
      } finally {
        this.running.delete(jobId);
      }
    })();
  }

  /**
   * One chunk of a start job, as one group-commit job: `ran` resolves once it has run (with
   * whether there is more), `saved` once its commit is on disk and the queue has its messages.
   */
  private startChunk(jobId: string): { ran: Promise<boolean>; saved: Promise<boolean> } {
    const out = outcome();
    let ranDone: (more: boolean) => void = () => {};
    let ranFailed: (err: unknown) => void = () => {};
    const ran = new Promise<boolean>((resolve, reject) => {
      ranDone = resolve;
      ranFailed = reject;
    });
    const saved = this.writer
      .submit({
        run: () => {
          try {
            const more = this.startChunkRows(jobId, out);
            ranDone(more);
            return more;
          } catch (err) {
            ranFailed(err);
            throw err;
          }
        },
      })
      .then(
        (more) => {
          this.runs.afterCommit(out);
          return more;
        },
        (err) => {
          this.runs.unreserve(out);
          ranFailed(err);
          throw err;
        },
      );
    // Awaited by the loop unless `ran` failed first; never an unhandled rejection.
    saved.catch(() => {});
    return { ran, saved };
  }

  /** Inside the chunk's transaction: runs for the next START_CHUNK contacts, and the cursor moved. */
  private startChunkRows(jobId: string, out: Outcome): boolean {
    const job = findStart(this.sqlite, jobId);
    if (!job || job.status !== "running") return false;
    const a = findAutomationById(this.sqlite, job.automationId);
    const ctx = a && a.isActive && a.deletedAt === null ? this.runs.context(a) : null;
    const nowMs = this.clock();
    const now = iso(nowMs);
    if (ctx === null) {
      advanceStart(this.sqlite, jobId, { cursor: job.cursor, started: 0, skipped: job.skipped, done: true, updatedAt: now });
      return false;
    }
    const rows = segmentContacts(this.sqlite, { accountId: job.accountId, filter: this.runs.filterOf(job.segment), lastContactId: job.lastContactId, cursor: job.cursor, limit: START_CHUNK });
    const skipped = { ...job.skipped };
    let started = 0;
    for (const c of rows) {
      const why = this.runs.startRun(ctx, c, nowMs, null, nowMs, out);
      if (typeof why === "string") skipped[why] = (skipped[why] ?? 0) + 1;
      else started++;
    }
    const done = rows.length < START_CHUNK;
    advanceStart(this.sqlite, jobId, { cursor: rows.at(-1)?.id ?? job.cursor, started, skipped, done, updatedAt: now });
    return !done;
  }
}
