/**
 * admit(): whether a text may be queued, and when — the send rules every path asks, in one order
 * (docs/api-decisions.md, "The house, round two: one sending path"):
 *
 * 1. opt-out: asked of opt-outs.ts (`mayText`), the only place that decides one;
 * 2. consent: the form's consent box, asked of opt-outs.ts (`consentGiven`);
 * 3. the per-recipient limit: texts a day to one number;
 * 4. quiet hours: the time moved past them;
 * 5. the monthly quota: a unit reserved, settled by the caller once its write committed or failed.
 *
 * A path gives only the rules that apply to it (a manual text has no form, so no consent box or
 * quiet hours); the order never changes, so a refusal names the first rule that refused. The
 * webhook's hot path (services/submissions/write.ts) asks the same functions inside its group-commit
 * job; set-based paths (a broadcast's segment) ask the store for the same rules in SQL.
 */
import type { QuietHours } from "../../domain/quiet-hours";
import { afterQuietHours } from "../../domain/quiet-hours";
import { consentGiven, mayText } from "../opt-outs";
import type { MonthlyQuota, QuotaRefusal } from "../quota";

/** Why a text was not queued. */
export type Refusal = "opted-out" | "no-consent" | "recipient-limit" | "quota";

export interface AdmitAsk {
  /** The number's stored contact (null: no contact has it). Absent: the opt-out rule is not asked. */
  recipient?: { optedOut: boolean } | null;
  /** A reply the law asks for (STOP's confirmation, HELP): it goes to an opted-out number too. */
  keywordReply?: boolean;
  /** The form's consent box: its field (null: the form has none), the values it is read from, and whether the owner vouched for the contact. */
  consent?: { field: string | null; values: Record<string, unknown>; vouched?: boolean };
  /** Texts a day to one number (null: no limit), and how many the number got in the day that counts. */
  recipientLimit?: { perDay: number | null; sentInDay: () => number };
  /** The time asked and the quiet hours it must keep out of, in the recipient's zone. */
  quietHours?: { at: number; timezone: string; hours: QuietHours | null };
  /** The account's monthly quota (limit null: unlimited). */
  quota?: { quota: Pick<MonthlyQuota, "reserve">; accountId: string; limit: number | null };
}

export type Admission =
  /** `at`: the time after quiet hours (the time asked, or null when none was given); `reserved`: a quota unit to settle. */
  | { ok: true; at: number | null; reserved: boolean }
  | { ok: false; reason: Refusal; quota?: QuotaRefusal };

/** The quiet-hours rule alone: the time asked, moved past the quiet hours (a request's one time for all its numbers). */
export function sendTime(q: NonNullable<AdmitAsk["quietHours"]>): number {
  return afterQuietHours(q.at, q.timezone, q.hours);
}

export function admit(ask: AdmitAsk): Admission {
  if (ask.recipient !== undefined && !mayText(ask.recipient, { keywordReply: ask.keywordReply === true })) return { ok: false, reason: "opted-out" };
  if (ask.consent !== undefined && !consentGiven(ask.consent.field, ask.consent.values, ask.consent.vouched === true)) return { ok: false, reason: "no-consent" };
  const limit = ask.recipientLimit;
  if (limit !== undefined && limit.perDay !== null && limit.sentInDay() >= limit.perDay) return { ok: false, reason: "recipient-limit" };
  const q = ask.quietHours;
  const at = q === undefined ? null : sendTime(q);
  let reserved = false;
  if (ask.quota !== undefined && ask.quota.limit !== null) {
    const refusal = ask.quota.quota.reserve(ask.quota.accountId, ask.quota.limit);
    if (refusal) return { ok: false, reason: "quota", quota: refusal };
    reserved = true;
  }
  return { ok: true, at, reserved };
}
