import type { Database } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import { AppError } from "../errors";
import { monthlyUsageStore, type MonthlyUsageStore } from "../db/stores/monthly-usage";

/**
 * Monthly message quota (accounts.monthly_quota; null = none). Each account with a quota has an
 * in-memory count, read once per calendar month (UTC) from monthly_usage — messages created that
 * month, kept by a trigger and never decreased, so deleting messages gives no quota back and a
 * restart reads the same figure — and kept up to date by the writers. Requests reserve a unit before their write is queued, so concurrent submissions cannot
 * overshoot the quota; the reservation becomes "used" on commit or is released on failure.
 */
export interface QuotaRefusal {
  accountId: string;
  limit: number;
  used: number;
  /** ISO instant the count starts again (first instant of next UTC month). */
  resetsAt: string;
}

/** The one 429 QUOTA_EXCEEDED answer, for webhook and manual messages alike. */
export function quotaExceeded(r: QuotaRefusal, now: number): AppError {
  // Seconds until the count starts again (next UTC month), as a 429 rate limit gives them.
  const retryAfter = Math.max(1, Math.ceil((Date.parse(r.resetsAt) - now) / 1000));
  return new AppError("QUOTA_EXCEEDED", {
    message: `Monthly message quota of ${r.limit} reached; the server's operator can raise it with: textwire accounts update ${r.accountId} --monthly-quota N`,
    // The command is for the server's operator: it stays in `details` where a website's visitor,
    // who reads only `message`, never sees it (docs/api-decisions.md, "Plain words for visitors").
    details: { limit: r.limit, used: r.used, resetsAt: r.resetsAt, retryAfter, action: `textwire accounts update ${r.accountId} --monthly-quota N` },
    extra: { retryAfter },
    headers: { "Retry-After": String(retryAfter) },
  });
}

interface Tally {
  month: number; // start of the UTC month, epoch ms
  used: number;
  pending: number;
}

export function monthStartUtc(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
export function nextMonthStartUtc(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export class MonthlyQuota {
  private readonly tallies = new Map<string, Tally>();
  private readonly usage: MonthlyUsageStore;
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    /** Messages acknowledged but not yet in monthly_usage (the webhook intake), read in the same snapshot. */
    private readonly unapplied: (accountId: string, monthStart: number) => number = () => 0,
  ) {
    this.usage = monthlyUsageStore(sqlite);
  }

  private tally(accountId: string): Tally {
    const month = monthStartUtc(this.clock());
    let t = this.tallies.get(accountId);
    if (t === undefined || t.month !== month) {
      const used = this.sqlite.transaction(() => this.usage.used(accountId, new Date(month).toISOString().slice(0, 7)) + this.unapplied(accountId, month))();
      t = { month, used, pending: t?.month === month ? t.pending : (t?.pending ?? 0) };
      this.tallies.set(accountId, t);
    }
    return t;
  }

  /** Takes one unit of the account's quota, or says why not. `quota` null = unlimited. */
  reserve(accountId: string, quota: number | null): QuotaRefusal | null {
    if (quota === null) return null;
    const t = this.tally(accountId);
    if (t.used + t.pending >= quota) {
      return { accountId, limit: quota, used: t.used, resetsAt: new Date(nextMonthStartUtc(t.month)).toISOString() };
    }
    t.pending++;
    return null;
  }

  /** Units left this month without taking any (the broadcast confirmation's figure); null = unlimited. */
  remaining(accountId: string, quota: number | null): number | null {
    if (quota === null) return null;
    const t = this.tally(accountId);
    return Math.max(0, quota - t.used - t.pending);
  }

  /** A reservation that ended: `created` says whether a message was committed. */
  settle(accountId: string, created: boolean): void {
    const t = this.tallies.get(accountId);
    if (t === undefined) return;
    if (t.pending > 0) t.pending--;
    if (created) t.used++;
  }

  /** Forget cached counts (tests).*/
  reset(accountId?: string): void {
    if (accountId === undefined) this.tallies.clear();
    else this.tallies.delete(accountId);
  }
}
