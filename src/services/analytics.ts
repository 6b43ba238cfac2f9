/**
 * Analytics over messages, submissions and contacts (spec §B stats, §C analytics; CONTRACT §5
 * "Analytics figures"). Shared by `GET /messages/analytics` and `GET /forms/<id>/stats`.
 *
 * Days are calendar days in the requested IANA zone: their start instants are computed in JS
 * (src/domain/time-series.ts) and handed to SQL as a small VALUES table of ISO strings; each
 * (day, status) cell is then one COUNT over an index range (account_id|form_id, …, created_at),
 * so the cost follows the rows in the window, never a sort or a full scan.
 *
 * Membership in a period is by `createdAt` (a message belongs to the day it was created; its
 * current status is what is counted). averageResponseTime = mean(sentAt − createdAt) over the
 * period's sent messages.
 */
import { RESPONSE_MS_SQL } from "../db/schema/messages";
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso } from "../lib/clock";
import { humanDuration } from "../domain/duration";
import { canonicalTimeZone, dayBoundaries, periodWindow, type Period } from "../domain/time-series";
import { parsePeriodAndZone } from "../domain/query-params";
import { MESSAGE_STATUSES, type MessageStatus } from "../domain/message-transitions";
import type { FieldError } from "../domain/submission";
import type { FormService } from "./forms";

export const TOP_FORMS_MAX = 10;
/** The message statuses as an SQL table `s(st)`, one row each (constants, no user text). */
const STATUS_ROWS = `s(st) AS (VALUES ${MESSAGE_STATUSES.map((st) => `('${st}')`).join(", ")})`;

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

export class AnalyticsService {
  constructor(
    private readonly sqlite: Database,
    private readonly forms: FormService,
  ) {}

  /** Messages per (day, status), by createdAt, over an index range per cell. */
  private dailyByStatus(scope: Scope, boundaries: number[]): Array<Record<MessageStatus, number>> {
    const out = Array.from({ length: boundaries.length - 1 }, () => ({ queued: 0, sent: 0, failed: 0, cancelled: 0 }));
    // The narrow (account_id, status, created_at) index: counting reads fewer pages than the wide one.
    const from = scope.formId ? "messages m" : "messages m INDEXED BY messages_account_status_created_idx";
    const cond = scope.formId ? "m.form_id = ?1" : "m.account_id = ?1";
    const rows = this.sqlite
      .query(
        `WITH d(i, lo, hi) AS (${daysValues(boundaries)}),
              ${STATUS_ROWS}
         SELECT d.i AS i, s.st AS st,
                (SELECT COUNT(*) FROM ${from} WHERE ${cond} AND m.status = s.st AND m.created_at >= d.lo AND m.created_at < d.hi) AS n
         FROM d, s`,
      )
      .all(scope.formId ?? scope.accountId) as Array<{ i: number; st: MessageStatus; n: number }>;
    for (const r of rows) out[r.i][r.st] = r.n;
    return out;
  }

  /** Count of rows of `table` per day (createdAt), for a form: covering range counts on (form_id, created_at). */
  private dailyCount(table: "submissions" | "messages" | "contacts", formId: string, boundaries: number[]): number[] {
    const rows = this.sqlite
      .query(
        `WITH d(i, lo, hi) AS (${daysValues(boundaries)})
         SELECT d.i AS i, (SELECT COUNT(*) FROM ${table} t WHERE t.form_id = ?1 AND t.created_at >= d.lo AND t.created_at < d.hi) AS n FROM d`,
      )
      .all(formId) as Array<{ i: number; n: number }>;
    const out = new Array(boundaries.length - 1).fill(0);
    for (const r of rows) out[r.i] = r.n;
    return out;
  }

  /** Mean of sentAt − createdAt in seconds over sent messages created in [lo, hi); null when none. */
  private meanResponseSeconds(scope: Scope, lo: number, hi: number): number | null {
    const cond = scope.formId ? "form_id = ?1" : "account_id = ?2";
    const r = this.sqlite
      .query(
        // RESPONSE_MS_SQL is stored in the analytics indexes: read from there, no timestamp parsing.
        `SELECT AVG(${RESPONSE_MS_SQL}) / 1000.0 AS s, COUNT(*) AS n
         FROM messages WHERE ${cond} AND status = 'sent' AND created_at >= ?3 AND created_at < ?4`,
      )
      .get(scope.formId ?? null, scope.accountId, iso(lo), iso(hi)) as { s: number | null; n: number };
    return r.n > 0 && r.s !== null ? r.s : null;
  }

  /** GET /messages/analytics */
  messages(accountId: string, q: { period?: string; formId?: string; timezone?: string }, now: number) {
    const { period, timezone } = resolvePeriodAndZone(q.period, q.timezone);
    if (q.formId !== undefined) this.forms.get(accountId, q.formId);
    const scope: Scope = { accountId, formId: q.formId };
    const { days } = periodWindow(period, now, timezone);
    const b = dayBoundaries(days, timezone);
    const lo = iso(b[0]);
    const hi = iso(b[b.length - 1]);
    const daily = this.dailyByStatus(scope, b);
    const statusBreakdown = { sent: 0, queued: 0, failed: 0, cancelled: 0 };
    for (const d of daily) for (const s of MESSAGE_STATUSES) statusBreakdown[s] += d[s];
    const totalMessages = statusBreakdown.sent + statusBreakdown.queued + statusBreakdown.failed + statusBreakdown.cancelled;
    const mean = this.meanResponseSeconds(scope, b[0], b[b.length - 1]);
    const cond = scope.formId ? "form_id = ?1" : "account_id = ?2";
    // Per form and status: one range count on (form_id, status, created_at) each, no row lookups.
    const perForm = new Map<string, { formId: string; formName: string; messageCount: number; sent: number; failed: number }>();
    const formRows = this.sqlite
      .query(
        `WITH ${STATUS_ROWS}
         SELECT f.id AS formId, f.name AS formName, s.st AS st,
                (SELECT COUNT(*) FROM messages m WHERE m.form_id = f.id AND m.status = s.st AND m.created_at >= ?3 AND m.created_at < ?4) AS n
         FROM forms f, s WHERE f.account_id = ?2 AND (?1 IS NULL OR f.id = ?1)`,
      )
      .all(scope.formId ?? null, accountId, lo, hi) as Array<{ formId: string; formName: string; st: MessageStatus; n: number }>;
    for (const r of formRows) {
      let f = perForm.get(r.formId);
      if (!f) perForm.set(r.formId, (f = { formId: r.formId, formName: r.formName, messageCount: 0, sent: 0, failed: 0 }));
      f.messageCount += r.n;
      if (r.st === "sent") f.sent += r.n;
      if (r.st === "failed") f.failed += r.n;
    }
    const topForms = [...perForm.values()]
      .filter((f) => f.messageCount > 0)
      .sort((a, b) => b.messageCount - a.messageCount || (a.formId < b.formId ? -1 : 1))
      .slice(0, TOP_FORMS_MAX)
      .map((f) => ({ formId: f.formId, formName: f.formName, messageCount: f.messageCount, deliveryRate: deliveryRate(f.sent, f.failed) }));
    const failureReasons: Record<string, number> = {};
    const reasons = this.sqlite
      .query(
        `SELECT coalesce(failure_reason, 'unknown') AS reason, COUNT(*) AS n FROM messages
         WHERE ${cond} AND status = 'failed' AND created_at >= ?3 AND created_at < ?4 GROUP BY reason ORDER BY n DESC, reason`,
      )
      .all(scope.formId ?? null, accountId, lo, hi) as Array<{ reason: string; n: number }>;
    for (const r of reasons) failureReasons[r.reason] = r.n;
    // replyRate (issue 11): of the contacts texted in the period (their last text was sent in
    // it), the share that sent a text back in the period; percent, one decimal.
    const replies = this.sqlite
      .query(
        `SELECT COUNT(*) AS texted, COALESCE(SUM(EXISTS (SELECT 1 FROM inbound_messages i WHERE i.contact_id = c.id AND i.received_at >= ?3)), 0) AS replied
         FROM contacts c WHERE c.account_id = ?2 AND (?1 IS NULL OR c.form_id = ?1) AND c.last_contacted_at >= ?3`,
      )
      .get(scope.formId ?? null, accountId, lo) as { texted: number; replied: number };
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
      dailyVolume: days.map((date, i) => ({ date, sent: daily[i].sent, failed: daily[i].failed, queued: daily[i].queued, cancelled: daily[i].cancelled })),
      topForms,
      failureReasons,
      replyRate,
    };
  }

  /** GET /forms/<id>/stats: all-time totals, the period's figures and its daily breakdown. */
  formStats(accountId: string, formId: string, q: { period?: string; timezone?: string }, now: number) {
    const form = this.forms.get(accountId, formId);
    const tz = form.settings.timezone;
    const formZone = (typeof tz === "string" && canonicalTimeZone(tz)) || "UTC";
    const { period, timezone } = resolvePeriodAndZone(q.period, q.timezone, formZone);
    const one = (sql: string) => (this.sqlite.query(sql).get(formId) as { n: number }).n;
    const totalSubmissions = one("SELECT COUNT(*) AS n FROM submissions WHERE form_id = ?1");
    const totalMessages = one("SELECT COUNT(*) AS n FROM messages WHERE form_id = ?1");
    const totalContacts = one("SELECT COUNT(*) AS n FROM contacts WHERE form_id = ?1");
    const { days } = periodWindow(period, now, timezone);
    const b = dayBoundaries(days, timezone);
    const subs = this.dailyCount("submissions", formId, b);
    const msgs = this.dailyCount("messages", formId, b);
    const contacts = this.dailyCount("contacts", formId, b);
    const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
    const sf = this.sqlite
      .query(
        `SELECT (SELECT COUNT(*) FROM messages WHERE form_id = ?1 AND status = 'sent' AND created_at >= ?2 AND created_at < ?3) AS sent,
                (SELECT COUNT(*) FROM messages WHERE form_id = ?1 AND status = 'failed' AND created_at >= ?2 AND created_at < ?3) AS failed`,
      )
      .get(formId, iso(b[0]), iso(b[b.length - 1])) as { sent: number; failed: number };
    const mean = this.meanResponseSeconds({ accountId, formId }, b[0], b[b.length - 1]);
    return {
      formId,
      totalSubmissions,
      totalMessages,
      totalContacts,
      deliveryRate: deliveryRate(sf.sent, sf.failed),
      averageResponseTime: mean === null ? 0 : Math.round(mean * 1000) / 1000,
      periodStats: { period, timezone, submissions: sum(subs), messages: sum(msgs), newContacts: sum(contacts) },
      dailyBreakdown: days.map((date, i) => ({ date, submissions: subs[i], messages: msgs[i], contacts: contacts[i] })),
    };
  }
}
