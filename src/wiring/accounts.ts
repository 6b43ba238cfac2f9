/**
 * Accounts, people and their settings (docs/architecture.md, "Wiring"): built after the core,
 * needing nothing but the database and the clock, so every later part may use them.
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Db } from "../db/open";
import { AccountService } from "../services/accounts";
import { FormService } from "../services/forms";
import { SessionService } from "../services/sessions";
import { PeopleService } from "../services/people";
import { SetupService } from "../services/setup";
import { ApiKeyService } from "../services/api-keys";
import { AccountSettingsService } from "../services/account-settings";
import type { LeaseService } from "../services/leases";
import { AccountOverviewService } from "../services/account-overview";

export type Accounts = ReturnType<typeof buildAccounts>;

export function buildAccounts(sqlite: Database, db: Db, config: ServeConfig, clock: Clock, leases: LeaseService) {
  const accounts = new AccountService(sqlite, clock);
  const sessions = new SessionService(sqlite, clock, accounts);
  const people = new PeopleService(sqlite, clock, sessions, { authFailuresPerMinute: config.authFailuresPerMinute });
  return {
    accounts,
    sessions,
    people,
    setup: new SetupService(sqlite, clock, accounts, people),
    apiKeys: new ApiKeyService(sqlite, accounts),
    accountSettings: new AccountSettingsService(sqlite, clock),
    accountOverview: new AccountOverviewService(sqlite),
    forms: new FormService(db, clock, (ids) => leases.withdraw(ids)),
  };
}
