/**
 * What an account may do and has used (GET /v1/account): its plan, API request limits, monthly
 * message quota and this month's count. Read-only: the server's operator changes them with
 * `textwire accounts update` (docs/operations.md, "Command line").
 */
import type { Database } from "bun:sqlite";
import { monthlyUsage } from "../db/stores/accounts";
import { burstLimit, hourlyLimit } from "./accounts";
import type { Account } from "../domain/accounts";
import type { AuthKey } from "../domain/permissions";
import { monthStartUtc, nextMonthStartUtc } from "./quota";
import { DEFAULT_PHONE_COUNTRY } from "../domain/phone";
import { cliCommand, type CliCommand } from "../lib/cli-command";

export interface AccountOverview {
  account: { id: string; name: string; plan: Account["plan"]; defaultCountry: string; createdAt: string };
  limits: { apiRequestsPerHour: number; apiBurstPerMinute: number; monthlyQuota: number | null };
  usage: { month: string; messages: number; resetsAt: string };
  access: { permission: AuthKey["permission"]; operator: boolean };
  changeWith: string;
  /** How commands are run on this server (every command shown starts with it). */
  cliCommand: CliCommand;
}

export class AccountOverviewService {
  private readonly command = cliCommand();

  constructor(private readonly sqlite: Database) {}

  get(auth: AuthKey, now: number): AccountOverview {
    const a = auth.account;
    const month = new Date(monthStartUtc(now)).toISOString().slice(0, 7);
    return {
      account: { id: a.id, name: a.name, plan: a.plan, defaultCountry: a.defaultCountry ?? DEFAULT_PHONE_COUNTRY, createdAt: a.createdAt },
      limits: { apiRequestsPerHour: hourlyLimit(a), apiBurstPerMinute: burstLimit(a), monthlyQuota: a.monthlyQuota },
      usage: { month, messages: monthlyUsage(this.sqlite, a.id, month), resetsAt: new Date(nextMonthStartUtc(now)).toISOString() },
      access: { permission: auth.permission, operator: auth.operator },
      changeWith: `${this.command} accounts update ${a.id} --plan … --monthly-quota N|none --api-limit-per-hour N|none --api-burst-per-minute N|none`,
      cliCommand: this.command,
    };
  }
}
