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
 *
 * The parts, by job: this file (the API: CRUD, views, stopping by hand), engine.ts (inbox, stops,
 * completions), starts.ts (start jobs), runs.ts (a run's rules; its texts go through the one
 * sending path, src/services/sending), views.ts (what the API shows).
 */
import type { Database } from "bun:sqlite";
import type { Changes } from "../../lib/changes";
import type { Clock } from "../../lib/clock";
import { iso } from "../../lib/clock";
import { newId, UUID_RE } from "../../lib/ids";
import type { Logger } from "../../lib/log";
import { AppError, validationError } from "../../errors";
import type { Sequence } from "../../lib/seq";
import type { LeaseService } from "../leases";
import type { MonthlyQuota } from "../quota";
import type { AccountService } from "../accounts";
import type { GroupCommitWriter } from "../../db/group-commit";
import { parsePaging } from "../../domain/query-params";
import type { FieldError } from "../../domain/submission";
import { checkStepFields, parseAutomationBody, type AutomationInput, type AutomationStep } from "../../domain/automation-steps";
import {
  automationForm,
  automationNames,
  findAutomation,
  findRun,
  insertAutomation,
  listAutomations,
  listRuns,
  markAutomationDeleted,
  markRunsStopping,
  runCounts,
  runsOfContact,
  stoppedRunCounts,
  updateAutomation,
  type AutomationRecord,
} from "../../db/stores/automations";
import type { Sending } from "../sending";
import { AutomationEngine } from "./engine";
import { outcome, Runs } from "./runs";
import { AutomationStarts } from "./starts";
import type { SendingTime } from "../sending-estimate";
import { runView, runViews, STOP_REASONS, type AutomationView, type RunView, type StopReason } from "./views";

export { AUTOMATION_SWEEP_MS } from "./engine";
export { START_CHUNK } from "./starts";
export { RUN_SKIP_REASONS, STEP_SKIP_REASONS, STOP_REASONS, type AutomationView, type RunSkip, type RunStepView, type RunView, type StopReason } from "./views";

/** A contact's runs shown with the contact (GET /v1/contacts/<id>). */
export const CONTACT_RUNS_MAX = 50;

export class AutomationService {
  private readonly runRules: Runs;
  private readonly engine: AutomationEngine;
  private readonly starts: AutomationStarts;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    sending: Sending,
    seq: Sequence,
    leases: Pick<LeaseService, "notify" | "withdraw">,
    quota: MonthlyQuota,
    accounts: AccountService,
    writer: GroupCommitWriter,
    logger: Logger,
    changes: Changes,
    /** How long the phones take over n texts (the capacity model, services/sending-estimate.ts). */
    private readonly sendingTime?: (accountId: string, n: number) => SendingTime,
  ) {
    this.runRules = new Runs(sqlite, seq, quota, accounts, sending, leases, changes);
    this.engine = new AutomationEngine(sqlite, clock, this.runRules, logger);
    this.starts = new AutomationStarts(sqlite, clock, this.runRules, writer, logger);
    // A reply, an opt-out, a status or a deleted contact marked runs in its own transaction:
    // their unsent steps are cancelled as soon as the change is announced.
    changes.on("contact", () => this.engine.stopsSafely());
    changes.on("message", (c) => {
      this.engine.stopsSafely();
      if (c.what === "settled") this.engine.scheduleCompletion();
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
    this.engine.catchUp();
    return this.view(this.find(accountId, id));
  }

  list(accountId: string, raw: Record<string, unknown>) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    if (errors.length) throw validationError(errors);
    this.engine.catchUp();
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
    this.engine.stopsSafely();
    return this.view(record);
  }

  /** Deletes it (404 from now on) and stops its active runs. */
  remove(accountId: string, id: string): { deletedId: string } {
    this.find(accountId, id);
    this.sqlite.transaction(() => {
      markAutomationDeleted(this.sqlite, id, iso(this.clock()));
      markRunsStopping(this.sqlite, id, "automation-off");
    })();
    this.engine.stopsSafely();
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
    this.engine.catchUp();
    const empty = { runs: [] as RunView[], pagination: { page, limit, total: 0, totalPages: 0 } };
    if (contactId !== undefined && !UUID_RE.test(contactId)) return empty;
    const { rows, total } = listRuns(this.sqlite, id, { status, contactId }, page, limit);
    return { runs: runViews(this.sqlite, rows, true), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** The contact's runs, newest first, each naming its automation (the contact itself is checked by the caller). */
  contactRuns(accountId: string, contactId: string): RunView[] {
    this.engine.catchUp();
    const rows = runsOfContact(this.sqlite, accountId, contactId, CONTACT_RUNS_MAX);
    const names = new Map(automationNames(this.sqlite, accountId, rows.map((r) => r.automationId)).map((a) => [a.id, a] as const));
    return runViews(this.sqlite, rows).map((v) => {
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
      this.runRules.stopRun(run, "stopped-by-hand", this.clock(), out);
      return true;
    })();
    this.runRules.afterCommit(out);
    // A run another cause had marked is finished now, so the answer shows it as it will stay.
    if (!changed) this.engine.stopsSafely();
    return { run: runView(this.sqlite, runId)!, changed };
  }

  /**
   * How long the phones take over `n` texts (the capacity model, services/sending-estimate.ts;
   * set at wiring). Unset: the answer gives no `sending`.
   */

  /** POST /v1/automations/<id>/start (starts.ts), with how long the first step's texts take once due. */
  async start(accountId: string, id: string, body: unknown, opts: { dryRun: boolean }) {
    const r = await this.starts.start(this.find(accountId, id), body, opts);
    return r.starting > 0 && this.sendingTime ? { ...r, sending: this.sendingTime(accountId, r.starting) } : r;
  }

  /** Resolves when no start job is running in this process (tests, benchmarks, shutdown). */
  idle(): Promise<void> {
    return this.starts.idle();
  }

  // ---- the engine (engine.ts) ----------------------------------------------------------------

  lifecycle() {
    return {
      name: "automations",
      start: () => {
        this.engine.start();
        this.starts.resume();
      },
      stop: () => {
        this.engine.stop();
        this.starts.stop();
      },
    };
  }

  /** Everything that may be waiting: submissions to start, runs to stop, runs to complete. */
  sweep(): void {
    this.engine.sweep();
  }

  drainInbox(): void {
    this.engine.drainInbox();
  }

  processStops(): void {
    this.engine.processStops();
  }

  completeDue(): void {
    this.engine.completeDue();
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
    const errors = checkStepFields(v.steps, form.fields);
    if (errors.length) throw validationError(errors);
    return v;
  }

  private columns(v: AutomationInput) {
    return {
      formId: v.formId,
      name: v.name,
      isActive: v.isActive,
      steps: v.steps,
      stopOnReply: v.stopOnReply,
      stopOnStatus: v.stopOnStatus,
      restartOnResubmit: v.restartOnResubmit,
    };
  }

  private input(a: AutomationRecord): AutomationInput {
    return {
      name: a.name,
      formId: a.formId,
      isActive: a.isActive,
      steps: a.steps,
      stopOnReply: a.stopOnReply,
      stopOnStatus: a.stopOnStatus as AutomationInput["stopOnStatus"],
      restartOnResubmit: a.restartOnResubmit,
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
}
