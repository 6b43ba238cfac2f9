/**
 * Analytics over messages, submissions and contacts (the figures' definitions:
 * docs/devices.md, "Messages API details"). Shared by `GET /messages/analytics` and `GET /forms/<id>/stats`.
 *
 * Days are calendar days in the requested IANA zone: their start instants are computed in JS
 * (src/domain/time-series.ts). Message figures come from the rollups (migration 0015,
 * src/db/stores/messages/rollups.ts): each day is whole UTC days plus or minus a few hour and quarter-hour
 * buckets, exact in every zone, so a year costs a few hundred small rows whatever the volume.
 * Submissions and contacts per day are range counts on (form_id, created_at).
 *
 * Membership in a period is by `createdAt` (a message belongs to the day it was created; its
 * current status is what is counted). averageResponseTime = mean(sentAt − createdAt) over the
 * period's sent messages.
 */
import type { Database } from "bun:sqlite";
import { formNames } from "../db/stores/forms";
import { replyCounts } from "../db/stores/contacts/analytics";
import { validationError } from "../errors";
import { iso } from "../lib/clock";
import { humanDuration } from "../domain/duration";
import { canonicalTimeZone, dayBoundaries, periodWindow, type Period } from "../domain/time-series";
import { parsePeriodAndZone } from "../domain/query-params";
import { rollupFailureReasons, rollupFormTotals, rollupIntervals, rollupPeriods, sumIntervals, type IntervalSums } from "../db/stores/messages/rollups";
import { NEW_CONTACTS, SUBMISSIONS } from "../db/derived-counts";
import type { FieldError } from "../domain/submission";
import type { FormService } from "./forms";

export const TOP_FORMS_MAX = 10;

/** sent ÷ (sent + failed) × 100, one decimal; 0 when nothing was attempted. */
export function deliveryRate(sent: number, failed: number): number {
  const attempted = sent + failed;
  if (attempted === 0) return 0;
  return Math.round((sent / attempted) * 1000) / 10;
}

/** Validated period and zone; unknown values → 400 naming the parameter and the allowed values. */
export function resolvePeriodAndZone(period: string | undefined, timezone: string | undefined, defaultZone = "UTC"): { period: Period; timezone: string } {
  const errors: FieldError[] = [];
  const value = parsePeriodAndZone(period, timezone, errors, defaultZone);
  if (errors.length) throw validationError(errors);
  return value;
}

/** The days of a period as SQL: `VALUES (i, lo, hi), …` with ISO strings made here (no user text). */
export function daysValues(boundaries: number[]): string {
  const rows: string[] = [];
  for (let i = 0; i + 1 < boundaries.length; i++) rows.push(`(${i}, '${iso(boundaries[i])}', '${iso(boundaries[i + 1])}')`);
  return `VALUES ${rows.join(", ")}`;
}

export interface Scope {
  accountId: string;
  formId?: string;
}

/** Mean response time in seconds of an interval's sent messages; null when none. */
function meanSeconds(sums: IntervalSums): number | null {
  return sums.values[5] > 0 ? sums.values[4] / sums.values[5] / 1000 : null;
}

export class AnalyticsService {

  constructor(
    private readonly sqlite: Database,
    private readonly forms: FormService,
  ) {}

  /** GET /messages/analytics */
  messages(accountId: string, q: { period?: string; formId?: string; timezone?: string }, now: number) {
    const { period, timezone } = resolvePeriodAndZone(q.period, q.timezone);
    if (q.formId !== undefined) this.forms.get(accountId, q.formId);
    const { days } = periodWindow(period, now, timezone);
    const b = dayBoundaries(days, timezone);
    const lo = iso(b[0]);
    const daily = rollupIntervals(this.sqlite, accountId, q.formId ?? "*", b);
    // The period is its days: its totals are theirs, summed (no second read of the rollups).
    const whole = sumIntervals(daily);
    whole.reasons = rollupFailureReasons(this.sqlite, accountId, { formKey: q.formId ?? "*", from: b[0], to: b[b.length - 1] });
    const statusBreakdown = { sent: 0, queued: 0, failed: 0, cancelled: 0 };
    [statusBreakdown.queued, statusBreakdown.sent, statusBreakdown.failed, statusBreakdown.cancelled] = whole.values;
    const totalMessages = statusBreakdown.sent + statusBreakdown.queued + statusBreakdown.failed + statusBreakdown.cancelled;
    const mean = meanSeconds(whole);
    // Per form: the period's sums from the forms' own rollups, all forms in one statement.
    const forms = formNames(this.sqlite, accountId, q.formId ?? null);
    const perForm = rollupPeriods(this.sqlite, accountId, { formKeys: forms.map((f) => f.formId), from: b[0], to: b[b.length - 1] });
    const topForms = forms
      .map((f, i) => {
        const v = perForm[i].values;
        return { formId: f.formId, formName: f.formName, messageCount: v[0] + v[1] + v[2] + v[3], sent: v[1], failed: v[2] };
      })
      .filter((f) => f.messageCount > 0)
      .sort((a, b) => b.messageCount - a.messageCount || (a.formId < b.formId ? -1 : 1))
      .slice(0, TOP_FORMS_MAX)
      .map((f) => ({ formId: f.formId, formName: f.formName, messageCount: f.messageCount, deliveryRate: deliveryRate(f.sent, f.failed) }));
    const failureReasons: Record<string, number> = {};
    const reasons = [...whole.reasons].filter(([, n]) => n > 0).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    for (const [reason, n] of reasons) failureReasons[reason] = n;
    // replyRate: of the contacts texted in the period (their last text was sent in
    // it), the share that sent a text back in the period; percent, one decimal.
    const replies = replyCounts(this.sqlite, accountId, q.formId ?? null, lo);
    const replyRate = replies.texted === 0 ? 0 : Math.round((replies.replied / replies.texted) * 1000) / 10;
    return {
      period,
      timezone,
      from: lo,
      to: iso(now),
      totalMessages,
      deliveryRate: deliveryRate(statusBreakdown.sent, statusBreakdown.failed),
      averageResponseTime: humanDuration(mean),
      averageResponseTimeSeconds: mean === null ? null : Math.round(mean * 1000) / 1000,
      statusBreakdown,
      dailyVolume: days.map((date, i) => {
        const [queued, sent, failed, cancelled] = daily[i].values;
        return { date, sent, failed, queued, cancelled };
      }),
      topForms,
      failureReasons,
      replyRate,
    };
  }

  /**
   * The period's texts per status and per day, and nothing else: what the Overview shows. The
   * rest of messages() — per form, failure reasons, the reply rate (a probe per contact texted in
   * the period) — is left out, as the Overview opens on every visit (docs/api-decisions.md,
   * "Pages with years of data").
   */
  volume(accountId: string, q: { period?: string; timezone?: string }, now: number) {
    const { period, timezone } = resolvePeriodAndZone(q.period, q.timezone);
    const { days } = periodWindow(period, now, timezone);
    const daily = rollupIntervals(this.sqlite, accountId, "*", dayBoundaries(days, timezone));
    const [queued, sent, failed, cancelled] = sumIntervals(daily).values;
    return {
      statusBreakdown: { sent, queued, failed, cancelled },
      dailyVolume: days.map((date, i) => {
        const [queued, sent, failed, cancelled] = daily[i].values;
        return { date, sent, failed, queued, cancelled };
      }),
    };
  }

  /** GET /forms/<id>/stats: all-time totals, the period's figures and its daily breakdown. */
  formStats(accountId: string, formId: string, q: { period?: string; timezone?: string }, now: number) {
    const form = this.forms.get(accountId, formId);
    const tz = form.settings.timezone;
    const formZone = (typeof tz === "string" && canonicalTimeZone(tz)) || "UTC";
    const { period, timezone } = resolvePeriodAndZone(q.period, q.timezone, formZone);
    // Messages, submissions and new contacts all come from the form's rollup rows (migration 0022).
    const totals = rollupFormTotals(this.sqlite, accountId, formId);
    const { days } = periodWindow(period, now, timezone);
    const b = dayBoundaries(days, timezone);
    const daily = rollupIntervals(this.sqlite, accountId, formId, b);
    const msgs = daily.map((d) => d.values[0] + d.values[1] + d.values[2] + d.values[3]);
    const subs = daily.map((d) => d.values[SUBMISSIONS]);
    const contacts = daily.map((d) => d.values[NEW_CONTACTS]);
    const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
    const whole = sumIntervals(daily);
    const mean = meanSeconds(whole);
    return {
      formId,
      totalSubmissions: totals.submissions,
      totalMessages: totals.messages,
      totalContacts: totals.newContacts,
      deliveryRate: deliveryRate(whole.values[1], whole.values[2]),
      averageResponseTime: mean === null ? 0 : Math.round(mean * 1000) / 1000,
      periodStats: { period, timezone, submissions: sum(subs), messages: sum(msgs), newContacts: sum(contacts) },
      dailyBreakdown: days.map((date, i) => ({ date, submissions: subs[i], messages: msgs[i], contacts: contacts[i] })),
    };
  }
}
