/**
 * What an account may do and has used (GET /v1/account): its plan, API request limits, monthly
 * message quota and this month's count. Read-only: the server's operator changes them with
 * `textwire accounts update` (docs/operations.md, "Command line").
 */
import type { Database, Statement } from "bun:sqlite";
import { burstLimit, hourlyLimit } from "./accounts";
import type { Account } from "../domain/accounts";
import type { AuthKey } from "../domain/permissions";
import { monthStartUtc, nextMonthStartUtc } from "./quota";
import { DEFAULT_PHONE_COUNTRY } from "../domain/phone";

export interface AccountOverview {
  account: { id: string; name: string; plan: Account["plan"]; defaultCountry: string; createdAt: string };
  limits: { apiRequestsPerHour: number; apiBurstPerMinute: number; monthlyQuota: number | null };
  usage: { month: string; messages: number; resetsAt: string };
  access: { permission: AuthKey["permission"]; operator: boolean };
  changeWith: string;
}

export class AccountOverviewService {
  private readonly usedIn: Statement<{ n: number }, [string, string]>;

  constructor(sqlite: Database) {
    // monthly_usage: messages created per account and UTC month, never decreased (the quota's count).
    this.usedIn = sqlite.prepare("SELECT coalesce((SELECT n FROM monthly_usage WHERE account_id = ? AND month = ?), 0) AS n");
  }

  get(auth: AuthKey, now: number): AccountOverview {
    const a = auth.account;
    const month = new Date(monthStartUtc(now)).toISOString().slice(0, 7);
    return {
      account: { id: a.id, name: a.name, plan: a.plan, defaultCountry: a.defaultCountry ?? DEFAULT_PHONE_COUNTRY, createdAt: a.createdAt },
      limits: { apiRequestsPerHour: hourlyLimit(a), apiBurstPerMinute: burstLimit(a), monthlyQuota: a.monthlyQuota },
      usage: { month, messages: this.usedIn.get(a.id, month)!.n, resetsAt: new Date(nextMonthStartUtc(now)).toISOString() },
      access: { permission: auth.permission, operator: auth.operator },
      changeWith: `textwire accounts update ${a.id} --plan … --monthly-quota N|none --api-limit-per-hour N|none --api-burst-per-minute N|none`,
    };
  }
}
