/**
 * A run of an automation, inside the caller's transaction: who gets one (opt-out and consent asked
 * of the one sending path, src/services/sending), its steps' times, their messages written through
 * that path (the per-recipient limit, quiet hours and the quota are its admit() rules), and
 * stopping a run; then, after the commit, the queue, the phones and the quota told
 * (docs/api-decisions.md, "Automations"; "The house, round two: one sending path").
 */
import type { Database } from "bun:sqlite";
import { dateVariables } from "../../domain/date-words";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Changes } from "../../lib/changes";
import type { Priority } from "../../queue/priority-queue";
import type { Sequence } from "../../lib/seq";
import type { LeaseService } from "../leases";
import type { MonthlyQuota } from "../quota";
import type { AccountService } from "../accounts";
import { emitMessageStatus } from "../event-payloads";
import { emitEvent } from "../events";
import { consentVouched } from "../opt-outs";
import { admit, sendTime, templateMessageOf, type Sending } from "../sending";
import { parseFilter, type ContactFilter } from "../../domain/contact-query";
import { resolveFormSettings } from "../../domain/form-definition";
import { resolveProtection } from "../../domain/protection";
import type { QuietHours } from "../../domain/quiet-hours";
import { contactZone } from "../../domain/contact-time-zone";
import { builtinVariables, renderTemplate } from "../../domain/template";
import { parseDateInFormat, type DateFormat } from "../../domain/field-values";
import type { FieldDef } from "../../domain/submission";
import { stepTime, type AutomationStep } from "../../domain/automation-steps";
import {
  activeRun,
  automationForm,
  cancelRunMessages,
  finishRun,
  hasActiveRun,
  insertRun,
  insertStep,
  textsInDayBefore,
  type AutomationRecord,
  type RunContact,
  type RunRecord,
} from "../../db/stores/automations";
import { runView, type RunSkip } from "./views";

const DAY_MS = 86_400_000;


/** What one transaction created and cancelled: told to the queue, the leases and the quota after its commit. */
export interface Outcome {
  messages: Array<{ id: string; accountId: string; priority: Priority; scheduledFor: number; seq: number }>;
  cancelled: Array<{ accountId: string; id: string }>;
  reserved: Map<string, number>;
}
export const outcome = (): Outcome => ({ messages: [], cancelled: [], reserved: new Map() });

/** An automation ready to start runs: its steps parsed, its form's rules resolved. */
export interface RunContext {
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

/** The run rules; shared by the engine (runs from submissions, stops) and the start jobs. */
export class Runs {
  constructor(
    private readonly sqlite: Database,
    private readonly seq: Sequence,
    private readonly quota: MonthlyQuota,
    private readonly accounts: AccountService,
    private readonly sending: Sending,
    private readonly leases: Pick<LeaseService, "withdraw">,
    private readonly changes: Changes,
  ) {}

  /**
   * Inside the caller's transaction: the contact's run with every step's row and message, or the
   * reason it gets none. A resubmission stops the active run first when restartOnResubmit.
   */
  startRun(ctx: RunContext, contact: RunContact, start: number, submissionId: string | null, now: number, out: Outcome, given: Record<string, string> = {}): RunSkip | { runId: string } {
    const skip = this.runSkip(ctx, contact);
    if (skip === "already-running" && submissionId !== null && ctx.a.restartOnResubmit) {
      this.stopRun(activeRun(this.sqlite, ctx.a.id, contact.id)!, "restarted", now, out);
    } else if (skip) return skip;
    const a = ctx.a;
    // Dates from the run's own submission first: the applier may have merged a later submission of
    // the same number into the contact before this run starts (docs/automations.md).
    const custom = { ...stringValues(contact.customFields), ...given };
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
        cached = "at" in t ? { at: sendTime({ at: t.at, timezone: tz, hours: ctx.quietHours }) } : t;
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
      // counted over the 24 hours before the step's time), then the monthly quota.
      const admitted = admit({
        recipientLimit: { perDay: ctx.recipientLimitPerDay, sentInDay: () => textsInDayBefore(this.sqlite, a.accountId, contact.phoneNumber, iso(at - DAY_MS), atIso) },
        quota: { quota: this.quota, accountId: a.accountId, limit: ctx.quota },
      });
      if (!admitted.ok) {
        insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: atIso, messageId: null, skipped: admitted.reason === "quota" ? "quota" : "recipient-limit" });
        return;
      }
      if (admitted.reserved) out.reserved.set(a.accountId, (out.reserved.get(a.accountId) ?? 0) + 1);
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
      this.sending.writeTemplate(
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
        now,
      );
      insertStep(this.sqlite, { runId, stepIndex: index, scheduledFor: atIso, messageId: m.id, skipped: null });
      out.messages.push(m);
      sent++;
    });
    emitEvent(this.sqlite, a.accountId, "automation.run.started", () => ({ run: runView(this.sqlite, runId) }), now);
    if (sent === 0) {
      // Every step skipped: nothing will go out, the run is over.
      finishRun(this.sqlite, runId, "completed", null, nowIso);
      emitEvent(this.sqlite, a.accountId, "automation.run.completed", () => ({ run: runView(this.sqlite, runId) }), now);
    }
    return { runId };
  }

  /** Why the contact gets no run of this automation now; null: it does. */
  runSkip(ctx: RunContext, c: RunContact): RunSkip | null {
    // Asked in this order (a status stop before a missing consent box, as the counts say).
    if (!admit({ recipient: { optedOut: c.optedOut } }).ok) return "opted-out";
    if (ctx.stopOnStatus.includes(c.status)) return "status";
    if (!admit({ consent: { field: ctx.consentField, values: c.customFields, vouched: consentVouched(c.consent) } }).ok) return "no-consent";
    if (hasActiveRun(this.sqlite, ctx.a.id, c.id)) return "already-running";
    return null;
  }

  /** Inside the caller's transaction: cancels the run's unsent steps and marks it stopped. */
  stopRun(run: RunRecord, reason: string, now: number, out: Outcome): void {
    const ids = cancelRunMessages(this.sqlite, run.id, `automation stopped (${reason})`, iso(now));
    for (const id of ids) {
      emitMessageStatus(this.sqlite, run.accountId, id, "cancelled", now);
      out.cancelled.push({ accountId: run.accountId, id });
    }
    finishRun(this.sqlite, run.id, "stopped", reason, iso(now));
    emitEvent(this.sqlite, run.accountId, "automation.run.stopped", () => ({ run: runView(this.sqlite, run.id) }), now);
  }

  /** After a commit: the quota settled, the queue and the phones told. */
  afterCommit(out: Outcome): void {
    for (const [accountId, n] of out.reserved) for (let i = 0; i < n; i++) this.quota.settle(accountId, true);
    this.sending.queued(out.messages, "queue");
    if (out.cancelled.length > 0) {
      this.leases.withdraw(out.cancelled.map((c) => c.id));
      for (const id of new Set(out.cancelled.map((c) => c.accountId))) this.changes.message(id, "settled", "queue");
    }
  }

  unreserve(out: Outcome): void {
    for (const [accountId, n] of out.reserved) for (let i = 0; i < n; i++) this.quota.settle(accountId, false);
    out.reserved.clear();
  }



  /** The automation with its form's rules; null when the form is gone. */
  context(a: AutomationRecord): RunContext | null {
    const form = automationForm(this.sqlite, a.accountId, a.formId);
    if (!form) return null;
    const settings = form.settings;
    const s = resolveFormSettings(settings);
    const p = resolveProtection(settings);
    return {
      a,
      steps: a.steps,
      stopOnStatus: a.stopOnStatus,
      formName: form.name,
      fields: form.fields,
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

  filterOf(seg: Record<string, unknown>): ContactFilter {
    const raw: Record<string, unknown> = { ...seg };
    if (Array.isArray(seg.tags)) raw.tags = (seg.tags as string[]).join(",");
    return parseFilter(raw, []);
  }
}

export function merge(into: Outcome, from: Outcome): void {
  into.messages.push(...from.messages);
  into.cancelled.push(...from.cancelled);
  for (const [k, n] of from.reserved) into.reserved.set(k, (into.reserved.get(k) ?? 0) + n);
}

/** The custom fields that hold text (the values a template and a step's date can use). */
function stringValues(o: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === "string") out[k] = v;
  return out;
}
