/**
 * Automations: timed texts after a form's submission that stop by themselves
 * (docs/api-decisions.md, "Automations").
 *
 * - Starting. A trigger on `submissions` (migration 0030) writes an inbox row in the applier's own
 *   transaction for each live automation of the form; `drainInbox` turns each row into a run in
 *   ONE transaction: the run, its step rows, their queued messages and events, and the inbox row's
 *   delete. POST /v1/automations/<id>/start does the same for a segment of existing contacts, a
 *   chunk per group-commit job, its cursor moving in the chunk's transaction (as broadcasts do).
 * - Exactly once. A step's message exists only with its (run, step) row, keyed by the pair, and a
 *   contact has at most one active run per automation (unique indexes): a crash anywhere leaves
 *   all of a run or none of it, and a restart carries on from the inbox or the cursor.
 * - Stopping. The causes mark the contact's active runs in their own transactions (triggers on
 *   inbound texts, opt-outs, contact statuses, deleted contacts; this service for an automation
 *   turned off); `processStops` then cancels the marked runs' unsent messages. It runs when a
 *   contact or message change is announced, on a timer, and at boot (a mark a crash left).
 */
import { dateVariables } from "../domain/date-words";
import type { Database } from "bun:sqlite";
import type { Changes } from "../lib/changes";
import type { Clock } from "../lib/clock";
import { iso } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { Logger } from "../lib/log";
import { AppError, validationError } from "../errors";
import type { MessageQueue, Priority } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import type { LeaseService } from "./leases";
import type { MonthlyQuota } from "./quota";
import type { AccountService } from "./accounts";
import { WriterClosedError, type GroupCommitWriter } from "../db/group-commit";
import { insertTemplateMessage, newestContactId } from "../db/stores/broadcasts";
import { templateMessageOf } from "./broadcasts";
import { emitMessageStatus } from "./event-payloads";
import { emitEvent } from "./events";
import { parsePaging } from "../domain/query-params";
import { parseSegment } from "../domain/broadcast";
import type { ContactFilter } from "../domain/contact-query";
import { parseFilter } from "../domain/contact-query";
import { resolveFormSettings } from "../domain/form-definition";
import { resolveProtection } from "../domain/protection";
import { afterQuietHours, type QuietHours } from "../domain/quiet-hours";
import { contactZone } from "../domain/contact-time-zone";
import { builtinVariables, renderTemplate } from "../domain/template";
import { isConsentGiven } from "../domain/keywords";
import { parseDateInFormat, type DateFormat } from "../domain/field-values";
import type { FieldDef, FieldError } from "../domain/submission";
import { checkStepFields, parseAutomationBody, stepTime, type AutomationInput, type AutomationStep } from "../domain/automation-steps";
import {
  activeRun,
  hasActiveRun,
  automationForm,
  advanceStart,
  anyStopping,
  automationNames,
  cancelRunMessages,
  completableRuns,
  deleteInboxRow,
  findAutomation,
  findAutomationById,
  findRun,
  findStart,
  finishRun,
  inboxBatch,
  inboxEmpty,
  insertAutomation,
  insertRun,
  insertStart,
  insertStep,
  listAutomations,
  listRuns,
  markAutomationDeleted,
  markRunStopping,
  markRunsStopping,
  repliedSince,
  runContact,
  runCounts,
  stoppedRunCounts,
  contactsOfRuns,
  runOfSubmission,
  runningStarts,
  runsOfContact,
  segmentContacts,
  stepsOfRuns,
  submissionValues,
  stoppingRuns,
  textsInDayBefore,
  updateAutomation,
  type AutomationRecord,
  type RunContact,
  type RunRecord,
} from "../db/stores/automations";

/** Why a run stopped (runs[].stoppedReason; the automation.run.stopped event). */
export const STOP_REASONS = ["replied", "opted-out", "status", "contact-deleted", "automation-off", "restarted", "stopped-by-hand"] as const;
export type StopReason = (typeof STOP_REASONS)[number];
/** Why a contact got no run (start's counts). */
export const RUN_SKIP_REASONS = ["opted-out", "status", "no-consent", "already-running"] as const;
export type RunSkip = (typeof RUN_SKIP_REASONS)[number];
/** Why a step got no message (runs[].steps[].skipped). */
export const STEP_SKIP_REASONS = ["past", "no-date", "recipient-limit", "quota"] as const;

/** Contacts per start job: one group-commit job of 100 messages for two steps, as a broadcast's chunk (the bench: 50 held the webhook's p99 where 100 did not, at the same speed). */
export const START_CHUNK = 50;
/** Inbox rows per transaction. */
const INBOX_CHUNK = 100;
/** Runs stopped or completed per transaction. */
const FINISH_CHUNK = 200;
/** The engine's backstop timer: inbox, stops, completions, unfinished starts. */
export const AUTOMATION_SWEEP_MS = 2_000;
/** A contact's runs shown with the contact (GET /v1/contacts/<id>). */
export const CONTACT_RUNS_MAX = 50;
const DAY_MS = 86_400_000;
const tick = () => new Promise<void>((r) => setImmediate(r));

export interface AutomationView extends AutomationInput {
  id: string;
  runs: { active: number; completed: number; stopped: number; stoppedBy: Record<StopReason, number> };
  createdAt: string;
  updatedAt: string;
}

export interface RunStepView {
  index: number;
  scheduledFor: string | null;
  messageId: string | null;
  /** scheduled (queued), sent, failed, cancelled, or skipped (see `skipped`). */
  status: "scheduled" | "sent" | "failed" | "cancelled" | "skipped";
  skipped: (typeof STEP_SKIP_REASONS)[number] | null;
}

export interface RunView {
  id: string;
  automationId: string;
  contactId: string;
  /** The automation's name (the contact's runs only), and whether it was deleted since. */
  automation?: { name: string; deleted: boolean };
  /** Who it is for, as the dashboard's runs list names them (the runs listing only); null once the contact is deleted. */
  contact?: { firstName: string | null; lastName: string | null; phoneNumber: string } | null;
  status: "active" | "completed" | "stopped";
  stoppedReason: StopReason | null;
  startedAt: string;
  finishedAt: string | null;
  steps: RunStepView[];
}

/** What one transaction created and cancelled: told to the queue, the leases and the quota after its commit. */
interface Outcome {
  messages: Array<{ id: string; accountId: string; priority: Priority; scheduledFor: number; seq: number }>;
  cancelled: Array<{ accountId: string; id: string }>;
  reserved: Map<string, number>;
}
const outcome = (): Outcome => ({ messages: [], cancelled: [], reserved: new Map() });

/** An automation ready to start runs: its steps parsed, its form's rules resolved. */
interface RunContext {
  a: AutomationRecord;
  steps: AutomationStep[];
  stopOnStatus: string[];
  formName: string;
  fields: FieldDef[];
  timezone: string;
  /** The form's language: how its date fields read in the texts (src/domain/date-words.ts). */
  language: string;
  quietHours: QuietHours | null;
  recipientLimitPerDay: number | null;
  consentField: string | null;
  priority: Priority;
  quota: number | null;
  /**
   * Within one transaction (one `now`): step times by step, start and date, and `date`/`time`
   * by instant — the same few for every contact of a start chunk, and the zone arithmetic is
   * most of a run's cost otherwise.
   */
  times: Map<string, { at: number } | { skipped: "past" | "no-date" }>;
  clocks: Map<number, { date: string; time: string }>;
}

export class AutomationService {
  private draining = false;
  private stopping = false;
  private completing = false;
  /** Where the last page of completeDue ended (null: at the start). */
  private completeCursor: { endsAt: string; id: string } | null = null;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private completeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Start jobs whose loop runs in this process. */
  private readonly running = new Set<string>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly leases: Pick<LeaseService, "notify" | "withdraw">,
    private readonly quota: MonthlyQuota,
    private readonly accounts: AccountService,
    private readonly writer: GroupCommitWriter,
    private readonly logger: Logger,
    private readonly changes: Changes,
  ) {
    // A reply, an opt-out, a status or a deleted contact marked runs in its own transaction:
    // their unsent steps are cancelled as soon as the change is announced.
    changes.on("contact", () => this.stopsSafely());
    changes.on("message", (c) => {
      this.stopsSafely();
      if (c.what === "settled") this.scheduleCompletion();
    });
  }

  // ---- the API -------------------------------------------------------------------------------

  create(accountId: string, body: unknown): AutomationView {
    const value = this.checked(accountId, body);
    const now = iso(this.clock());
    const record: AutomationRecord = { id: newId(), accountId, ...this.columns(value), deletedAt: null, createdAt: now, updatedAt: now };
    insertAutomation(this.sqlite, record);
    return this.view(record);
  }

  get(accountId: string, id: string): AutomationView {
    this.catchUp();
    return this.view(this.find(accountId, id));
  }

  list(accountId: string, raw: Record<string, unknown>) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    if (errors.length) throw validationError(errors);
    this.catchUp();
    const { rows, total } = listAutomations(this.sqlite, accountId, page, limit);
    return { automations: rows.map((a) => this.view(a)), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** PUT: the fields given replace the stored ones; turning it off stops its active runs. */
  update(accountId: string, id: string, body: unknown): AutomationView {
    const current = this.find(accountId, id);
    const value = this.checked(accountId, body, this.input(current));
    const record: AutomationRecord = { ...current, ...this.columns(value), updatedAt: iso(this.clock()) };
    this.sqlite.transaction(() => {
      updateAutomation(this.sqlite, record);
      if (!value.isActive) markRunsStopping(this.sqlite, id, "automation-off");
    })();
    this.stopsSafely();
    return this.view(record);
  }

  /** Deletes it (404 from now on) and stops its active runs. */
  remove(accountId: string, id: string): { deletedId: string } {
    this.find(accountId, id);
    this.sqlite.transaction(() => {
      markAutomationDeleted(this.sqlite, id, iso(this.clock()));
      markRunsStopping(this.sqlite, id, "automation-off");
    })();
    this.stopsSafely();
    return { deletedId: id };
  }

  runs(accountId: string, id: string, raw: Record<string, unknown>) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    const status = typeof raw.status === "string" && raw.status !== "" ? raw.status : undefined;
    if (status !== undefined && !["active", "completed", "stopped"].includes(status)) {
      errors.push({ field: "status", message: "status must be active, completed or stopped", requirement: "active | completed | stopped", provided: status.slice(0, 100) });
    }
    const contactId = typeof raw.contactId === "string" && raw.contactId !== "" ? raw.contactId : undefined;
    if (errors.length) throw validationError(errors);
    this.find(accountId, id);
    this.catchUp();
    const empty = { runs: [] as RunView[], pagination: { page, limit, total: 0, totalPages: 0 } };
    if (contactId !== undefined && !UUID_RE.test(contactId)) return empty;
    const { rows, total } = listRuns(this.sqlite, id, { status, contactId }, page, limit);
    return { runs: this.runViews(rows, true), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** The contact's runs, newest first, each naming its automation (the contact itself is checked by the caller). */
  contactRuns(accountId: string, contactId: string): RunView[] {
    this.catchUp();
    const rows = runsOfContact(this.sqlite, accountId, contactId, CONTACT_RUNS_MAX);
    const names = new Map(automationNames(this.sqlite, accountId, rows.map((r) => r.automationId)).map((a) => [a.id, a] as const));
    return this.runViews(rows).map((v) => {
      const a = names.get(v.automationId);
      return { ...v, automation: { name: a?.name ?? "", deleted: a?.deletedAt != null } };
    });
  }

  /**
   * POST /v1/automations/<id>/runs/<runId>/stop: the owner stops one person's run (a customer
   * phoned to cancel). The same stop as every other cause — its unsent steps cancelled, the run
   * marked stopped and the event written in one transaction — and only a run still active and not
   * already being stopped moves, so a second click, or a reply that got there first, changes
   * nothing (`changed: false`, the run as it stands).
   */
  stopByHand(accountId: string, id: string, runId: string): { run: RunView; changed: boolean } {
    this.find(accountId, id);
    const found = UUID_RE.test(runId) ? findRun(this.sqlite, runId) : null;
    // Another automation's run, or another account's, answers exactly like a missing one.
    if (!found || found.automationId !== id || found.accountId !== accountId) {
      throw new AppError("AUTOMATION_RUN_NOT_FOUND", { details: { automationId: id, runId: runId.slice(0, 100) } });
    }
    const out = outcome();
    const changed = this.sqlite.transaction(() => {
      const run = findRun(this.sqlite, runId)!;
      if (run.status !== "active" || run.stopReason !== null) return false;
      this.stopRun(run, "stopped-by-hand", this.clock(), out);
      return true;
    })();
    this.afterCommit(out);
    // A run another cause had marked is finished now, so the answer shows it as it will stay.
    if (!changed) this.stopsSafely();
    return { run: this.runView(runId)!, changed };
  }

  /**
   * POST /v1/automations/<id>/start: counts who would start and who is skipped and why; a dry
   * run stops there. Otherwise a start job is committed and its runs are created in the
   * background, a chunk per transaction.
   */
  async start(accountId: string, id: string, body: unknown, opts: { dryRun: boolean }) {
    const a = this.find(accountId, id);
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
    const ctx = this.context(a);
    if (ctx === null) throw new AppError("FORM_NOT_FOUND", { details: { formId: a.formId } });
    const lastContactId = newestContactId(this.sqlite, accountId) ?? "";
    // Counted a chunk at a time with the event loop free in between: 50,000 contacts never hold it.
    let contacts = 0;
    let starting = 0;
    const skipped = Object.fromEntries(RUN_SKIP_REASONS.map((r) => [r, 0])) as Record<RunSkip, number>;
    let cursor = "";
    for (;;) {
      const rows = segmentContacts(this.sqlite, accountId, filter, lastContactId, cursor, 1_000);
      for (const c of rows) {
        contacts++;
        const why = this.runSkip(ctx, c);
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
      segment: JSON.stringify(segmentInput),
      lastContactId,
      cursor: "",
      status: starting > 0 ? "running" : "done",
      started: 0,
      skipped: "{}",
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

  // ---- the engine ----------------------------------------------------------------------------

  lifecycle() {
    return {
      name: "automations",
      start: () => {
        this.stopped = false;
        this.sweep();
        for (const s of runningStarts(this.sqlite)) this.runStart(s.id);
        this.timer = setInterval(() => this.sweep(), AUTOMATION_SWEEP_MS);
        this.timer.unref?.();
      },
      stop: () => {
        this.stopped = true;
        clearInterval(this.timer);
        clearTimeout(this.completeTimer);
      },
    };
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
  private stopsSafely(): void {
    try {
      this.processStops();
    } catch (err) {
      this.logger.error("automations: stopping runs failed; the sweep retries it", { error: String(err) });
    }
  }

  /** Before a read: what the applier applied starts its runs, and marked stops are done. */
  private catchUp(): void {
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
              this.unreserve(rowOut);
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
        this.unreserve(out);
        throw err;
      }
      this.afterCommit(out);
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
      ctx = a && a.isActive && a.deletedAt === null ? this.context(a) : null;
      contexts.set(r.automationId, ctx);
    }
    if (ctx === null) return;
    if (runOfSubmission(this.sqlite, r.automationId, r.submissionId)) return;
    const contact = runContact(this.sqlite, r.accountId, r.contactId);
    if (!contact) return;
    const run = this.startRun(ctx, contact, Date.parse(r.createdAt), r.submissionId, now, out, submissionValues(this.sqlite, r.submissionId));
    // A reply that came between the submission and this moment (the inbox waited) stops it too.
    if (typeof run === "object" && ctx.a.stopOnReply === 1 && repliedSince(this.sqlite, contact.id, r.createdAt)) markRunStopping(this.sqlite, run.runId, "replied");
  }

  /**
   * Inside the caller's transaction: the contact's run with every step's row and message, or the
   * reason it gets none. A resubmission stops the active run first when restartOnResubmit.
   */
  private startRun(ctx: RunContext, contact: RunContact, start: number, submissionId: string | null, now: number, out: Outcome, given: Record<string, string> = {}): RunSkip | { runId: string } {
    const skip = this.runSkip(ctx, contact);
    if (skip === "already-running" && submissionId !== null && ctx.a.restartOnResubmit === 1) {
      this.stopRun(activeRun(this.sqlite, ctx.a.id, contact.id)!, "restarted", now, out);
    } else if (skip) return skip;
    const a = ctx.a;
    // Dates from the run's own submission first: the applier may have merged a later submission of
    // the same number into the contact before this run starts (docs/automations.md).
    const custom = { ...parseCustom(contact.customFields), ...given };
    // Step times and quiet hours keep to the contact's own zone when known (docs/contacts.md, "Time zone").
    const tz = contactZone(contact.timeZone, contact.phoneNumber, ctx.timezone);
    const times = ctx.steps.map((step) => {
      let date: string | null = null;
      if (step.relativeTo !== undefined) {
        const raw = Object.hasOwn(custom, step.relativeTo) ? custom[step.relativeTo] : undefined;
        const field = ctx.fields.find((f) => f.name === step.relativeTo);
        const format = (typeof field?.validation?.format === "string" ? field.validation.format : "YYYY-MM-DD") as DateFormat;
        date = typeof raw === "string" ? (parseDateInFormat(raw, format) ?? parseDateInFormat(raw, "YYYY-MM-DD")) : null;
      }
      const key = `${ctx.steps.indexOf(step)} ${start} ${now} ${date} ${tz}`;
      let cached = ctx.times.get(key);
      if (cached === undefined) {
        const t = stepTime(step, { start, now, timezone: tz, date });
        cached = "at" in t ? { at: afterQuietHours(t.at, tz, ctx.quietHours) } : t;
        if (ctx.times.size < 10_000) ctx.times.set(key, cached);
      }
      return cached;
    });
    const runId = newId();
    const ends = Math.max(start, ...times.map((t) => ("at" in t ? t.at : 0)));
    const nowIso = iso(now);
    insertRun(this.sqlite, {
      id: runId,
      automationId: a.id,
      accountId: a.accountId,
      contactId: contact.id,
      submissionId,
      status: "active",
      stopReason: null,
      startedAt: iso(start),
      endsAt: iso(ends),
      finishedAt: null,
    });
    let sent = 0;
    times.forEach((t, index) => {
      if (!("at" in t)) {
        insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: null, messageId: null, skipped: t.skipped });
        return;
      }
      const at = t.at;
      const atIso = iso(at);
      // The per-recipient limit as it will stand when the step goes out (the webhook's rule,
      // counted over the 24 hours before the step's time).
      if (ctx.recipientLimitPerDay !== null && textsInDayBefore(this.sqlite, a.accountId, contact.phoneNumber, iso(at - DAY_MS), atIso) >= ctx.recipientLimitPerDay) {
        insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: atIso, messageId: null, skipped: "recipient-limit" });
        return;
      }
      if (ctx.quota !== null) {
        if (this.quota.reserve(a.accountId, ctx.quota)) {
          insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: atIso, messageId: null, skipped: "quota" });
          return;
        }
        out.reserved.set(a.accountId, (out.reserved.get(a.accountId) ?? 0) + 1);
      }
      const step = ctx.steps[index];
      let clock = ctx.clocks.get(at);
      if (clock === undefined) {
        const b = builtinVariables({ phoneNumber: "", formName: "", now: at, timezone: ctx.timezone });
        clock = { date: b.date, time: b.time };
        if (ctx.clocks.size < 10_000) ctx.clocks.set(at, clock);
      }
      const vars: Record<string, string> = {
        ...builtinVariables({
          clock,
          firstName: contact.firstName ?? undefined,
          lastName: contact.lastName ?? undefined,
          email: contact.email ?? undefined,
          phoneNumber: contact.phoneNumber,
          source: contact.source ?? undefined,
          formName: ctx.formName,
          now: at,
          timezone: ctx.timezone,
        }),
        ...custom,
        // "ready for pickup on Thu, Dec 10", not on 2026-12-10 (dates as of the step's own day).
        ...dateVariables(ctx.fields, custom, ctx.language, clock.date),
      };
      const rendered = renderTemplate(step.template, vars);
      const m = { id: newId(), accountId: a.accountId, priority: ctx.priority, scheduledFor: at, seq: this.seq.next() };
      insertTemplateMessage(
        this.sqlite,
        templateMessageOf(m, {
          accountId: a.accountId,
          contact,
          rendered,
          template: step.template,
          origin: { source: "automation", automationId: a.id, runId, step: index },
          maxAttempts: null,
          broadcastId: null,
          createdAt: nowIso,
        }),
      );
      insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: atIso, messageId: m.id, skipped: null });
      emitMessageStatus(this.sqlite, a.accountId, m.id, "queued", now);
      out.messages.push(m);
      sent++;
    });
    emitEvent(this.sqlite, a.accountId, "automation.run.started", () => ({ run: this.runView(runId) }), now);
    if (sent === 0) {
      // Every step skipped: nothing will go out, the run is over.
      finishRun(this.sqlite, runId, "completed", null, nowIso);
      emitEvent(this.sqlite, a.accountId, "automation.run.completed", () => ({ run: this.runView(runId) }), now);
    }
    return { runId };
  }

  /** Why the contact gets no run of this automation now; null: it does. */
  private runSkip(ctx: RunContext, c: RunContact): RunSkip | null {
    if (c.optedOut) return "opted-out";
    if (ctx.stopOnStatus.includes(c.status)) return "status";
    if (ctx.consentField !== null && !consentFor(ctx, c)) return "no-consent";
    if (hasActiveRun(this.sqlite, ctx.a.id, c.id)) return "already-running";
    return null;
  }

  /** Inside the caller's transaction: cancels the run's unsent steps and marks it stopped. */
  private stopRun(run: RunRecord, reason: string, now: number, out: Outcome): void {
    const ids = cancelRunMessages(this.sqlite, run.id, `automation stopped (${reason})`, iso(now));
    for (const id of ids) {
      emitMessageStatus(this.sqlite, run.accountId, id, "cancelled", now);
      out.cancelled.push({ accountId: run.accountId, id });
    }
    finishRun(this.sqlite, run.id, "stopped", reason, iso(now));
    emitEvent(this.sqlite, run.accountId, "automation.run.stopped", () => ({ run: this.runView(run.id) }), now);
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
        for (const r of runs) this.stopRun(r, r.stopReason!, now, out);
        return runs.length;
      })();
      this.afterCommit(out);
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
            emitEvent(this.sqlite, r.accountId, "automation.run.completed", () => ({ run: this.runView(r.id) }), now);
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

  private scheduleCompletion(): void {
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
          this.afterCommit(out);
          return more;
        },
        (err) => {
          this.unreserve(out);
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
    const ctx = a && a.isActive && a.deletedAt === null ? this.context(a) : null;
    const nowMs = this.clock();
    const now = iso(nowMs);
    if (ctx === null) {
      advanceStart(this.sqlite, jobId, { cursor: job.cursor, started: 0, skipped: job.skipped, done: true, updatedAt: now });
      return false;
    }
    const rows = segmentContacts(this.sqlite, job.accountId, this.filterOf(job.segment), job.lastContactId, job.cursor, START_CHUNK);
    const skipped = JSON.parse(job.skipped) as Record<string, number>;
    let started = 0;
    for (const c of rows) {
      const why = this.startRun(ctx, c, nowMs, null, nowMs, out);
      if (typeof why === "string") skipped[why] = (skipped[why] ?? 0) + 1;
      else started++;
    }
    const done = rows.length < START_CHUNK;
    advanceStart(this.sqlite, jobId, { cursor: rows.at(-1)?.id ?? job.cursor, started, skipped: JSON.stringify(skipped), done, updatedAt: now });
    return !done;
  }

  /** After a commit: the quota settled, the queue and the phones told. */
  private afterCommit(out: Outcome): void {
    for (const [accountId, n] of out.reserved) for (let i = 0; i < n; i++) this.quota.settle(accountId, true);
    const accounts = new Set<string>();
    for (const m of out.messages) {
      this.queue.insert({ id: m.id, accountId: m.accountId, priority: m.priority, scheduledFor: m.scheduledFor, seq: m.seq });
      accounts.add(m.accountId);
    }
    for (const id of accounts) {
      this.leases.notify(id);
      this.changes.message(id, "queued", "queue");
    }
    if (out.cancelled.length > 0) {
      this.leases.withdraw(out.cancelled.map((c) => c.id));
      for (const id of new Set(out.cancelled.map((c) => c.accountId))) this.changes.message(id, "settled", "queue");
    }
  }

  private unreserve(out: Outcome): void {
    for (const [accountId, n] of out.reserved) for (let i = 0; i < n; i++) this.quota.settle(accountId, false);
    out.reserved.clear();
  }

  // ---- helpers -------------------------------------------------------------------------------

  private find(accountId: string, id: string): AutomationRecord {
    const a = UUID_RE.test(id) ? findAutomation(this.sqlite, accountId, id) : null;
    if (!a) throw new AppError("AUTOMATION_NOT_FOUND", { details: { automationId: id.slice(0, 100) } });
    return a;
  }

  /** The body checked, its form included (400 naming the step and field for every problem). */
  private checked(accountId: string, body: unknown, current?: AutomationInput): AutomationInput {
    const parsed = parseAutomationBody(body, current);
    if (!parsed.ok) throw validationError(parsed.errors);
    const v = parsed.value;
    const form = automationForm(this.sqlite, accountId, v.formId);
    if (!form) throw validationError([{ field: "formId", message: "formId: no form of this account has this id", requirement: "a form id (GET /v1/forms)", provided: v.formId.slice(0, 100) }]);
    const errors = checkStepFields(v.steps, parseFields(form.fields));
    if (errors.length) throw validationError(errors);
    return v;
  }

  private columns(v: AutomationInput) {
    return {
      formId: v.formId,
      name: v.name,
      isActive: v.isActive ? 1 : 0,
      steps: JSON.stringify(v.steps),
      stopOnReply: v.stopOnReply ? 1 : 0,
      stopOnStatus: JSON.stringify(v.stopOnStatus),
      restartOnResubmit: v.restartOnResubmit ? 1 : 0,
    };
  }

  private input(a: AutomationRecord): AutomationInput {
    return {
      name: a.name,
      formId: a.formId,
      isActive: a.isActive === 1,
      steps: JSON.parse(a.steps) as AutomationStep[],
      stopOnReply: a.stopOnReply === 1,
      stopOnStatus: JSON.parse(a.stopOnStatus) as AutomationInput["stopOnStatus"],
      restartOnResubmit: a.restartOnResubmit === 1,
    };
  }

  private view(a: AutomationRecord): AutomationView {
    return { id: a.id, ...this.input(a), runs: { ...runCounts(this.sqlite, a.id), stoppedBy: this.stoppedBy(a.id) }, createdAt: a.createdAt, updatedAt: a.updatedAt };
  }

  /** Stopped runs by reason, every reason present (0 when none): how many replied, reached a stop status… */
  private stoppedBy(automationId: string): Record<StopReason, number> {
    const out = Object.fromEntries(STOP_REASONS.map((r) => [r, 0])) as Record<StopReason, number>;
    for (const { reason, n } of stoppedRunCounts(this.sqlite, automationId)) if ((STOP_REASONS as readonly (string | null)[]).includes(reason)) out[reason as StopReason] = n;
    return out;
  }

  /** The automation with its form's rules; null when the form is gone. */
  private context(a: AutomationRecord): RunContext | null {
    const form = automationForm(this.sqlite, a.accountId, a.formId);
    if (!form) return null;
    const settings = parseObject(form.settings);
    const s = resolveFormSettings(settings);
    const p = resolveProtection(settings);
    return {
      a,
      steps: JSON.parse(a.steps) as AutomationStep[],
      stopOnStatus: JSON.parse(a.stopOnStatus) as string[],
      formName: form.name,
      fields: parseFields(form.fields),
      timezone: s.timezone,
      language: s.language,
      quietHours: p.quietHours,
      recipientLimitPerDay: p.recipientLimitPerDay,
      consentField: s.consentField,
      priority: s.defaultPriority,
      quota: this.accounts.findAccount(a.accountId)?.monthlyQuota ?? null,
      times: new Map(),
      clocks: new Map(),
    };
  }

  private filterOf(segment: string): ContactFilter {
    const seg = JSON.parse(segment) as Record<string, unknown>;
    const raw: Record<string, unknown> = { ...seg };
    if (Array.isArray(seg.tags)) raw.tags = (seg.tags as string[]).join(",");
    return parseFilter(raw, []);
  }

  private runView(id: string): RunView | null {
    const r = findRun(this.sqlite, id);
    return r ? this.runViews([r])[0] : null;
  }

  /** `withContacts`: each run names its contact (the runs listing; events and the contact's own page need not). */
  private runViews(rows: RunRecord[], withContacts = false): RunView[] {
    const steps = new Map<string, RunStepView[]>();
    for (const s of stepsOfRuns(this.sqlite, rows.map((r) => r.id))) {
      const list = steps.get(s.runId) ?? [];
      list.push({ index: s.stepIndex, scheduledFor: s.scheduledFor, messageId: s.messageId, status: stepStatus(s.skipped, s.messageStatus), skipped: s.skipped as RunStepView["skipped"] });
      steps.set(s.runId, list);
    }
    const contacts = new Map(withContacts && rows.length ? contactsOfRuns(this.sqlite, rows[0].accountId, rows.map((r) => r.contactId)).map((c) => [c.id, c] as const) : []);
    return rows.map((r) => ({
      id: r.id,
      automationId: r.automationId,
      contactId: r.contactId,
      ...(withContacts ? { contact: contacts.has(r.contactId) ? (({ firstName, lastName, phoneNumber }) => ({ firstName, lastName, phoneNumber }))(contacts.get(r.contactId)!) : null } : {}),
      // A run marked and not yet stopped shows as it will be a moment later.
      status: r.status === "active" && r.stopReason !== null ? "stopped" : r.status,
      stoppedReason: r.status === "completed" ? null : (r.stopReason as StopReason | null),
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      steps: steps.get(r.id) ?? [],
    }));
  }
}

function stepStatus(skipped: string | null, messageStatus: string | null): RunStepView["status"] {
  if (skipped !== null) return "skipped";
  if (messageStatus === "queued") return "scheduled";
  if (messageStatus === "sent" || messageStatus === "failed" || messageStatus === "cancelled") return messageStatus;
  // The message was deleted (with its contact): it will not go out.
  return "cancelled";
}

function merge(into: Outcome, from: Outcome): void {
  into.messages.push(...from.messages);
  into.cancelled.push(...from.cancelled);
  for (const [k, n] of from.reserved) into.reserved.set(k, (into.reserved.get(k) ?? 0) + n);
}

function parseObject(json: string | null): Record<string, unknown> {
  try {
    const v = JSON.parse(json ?? "{}");
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function parseCustom(json: string): Record<string, string> {
  const o = parseObject(json);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === "string") out[k] = v;
  return out;
}

function parseFields(json: string): FieldDef[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? (v as FieldDef[]) : [];
  } catch {
    return [];
  }
}

/**
 * Consent, as the webhook asks it (docs/api-decisions.md, "Replies, opt-outs and consent"): a
 * contact who came through this form needs its consent box ticked; one the owner added
 * (import, the API, the dashboard) was vouched for by the owner.
 */
function consentFor(ctx: RunContext, c: RunContact): boolean {
  const consent = parseObject(c.consent);
  if (consent.source !== undefined && consent.source !== "webhook") return true;
  const custom = parseObject(c.customFields);
  return isConsentGiven(Object.hasOwn(custom, ctx.consentField!) ? custom[ctx.consentField!] : undefined);
}
