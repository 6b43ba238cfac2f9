/**
 * Monthly usage (table monthly_usage): messages created per account and UTC month, kept by a
 * trigger on message inserts and never decreased (migration 0004), so deleting messages gives no
 * quota back and a restart reads the same figure. Read by the monthly quota (services/quota.ts).
 */
import type { Database, Statement } from "bun:sqlite";

export interface MonthlyUsageStore {
  /** Messages the account created in `month` ("YYYY-MM"); 0 when none. */
  used(accountId: string, month: string): number;
}

export function monthlyUsageStore(sqlite: Database): MonthlyUsageStore {
  const count: Statement<{ n: number }, [string, string]> = sqlite.prepare(
    "SELECT coalesce((SELECT n FROM monthly_usage WHERE account_id = ? AND month = ?), 0) AS n",
  );
  return { used: (accountId, month) => count.get(accountId, month)!.n };
}
