import type { ParsedArgs } from "../config";
import { systemClock } from "../lib/clock";
import { AccountService, PLANS, type Plan } from "../services/accounts";
import { canonicalTimeZone } from "../domain/time-series";
import { setAccountTimeZone } from "../db/devices";
import { dbPathOf, flagInt, flagString, table, UsageError, withDb, type CliIO } from "./common";

export const ACCOUNTS_HELP = `Usage:
  textwire accounts create --name NAME [--plan standard|pro|enterprise] [--api-limit-per-hour N]
                           [--api-burst-per-minute N] [--monthly-quota N] [--json] [--db PATH]
  textwire accounts list [--json] [--db PATH]
  textwire accounts timezone ACCOUNT_ID ZONE [--db PATH]

timezone sets the IANA zone (e.g. Europe/Berlin; UTC to reset) in which a phone's zone-less
sentAt is read (docs/devices.md).

create makes an account and its first admin key (shown once).`;

const FLAGS = ["name", "plan", "api-limit-per-hour", "api-burst-per-minute", "monthly-quota", "json"];

export function accountsCommand(parsed: ParsedArgs, io: CliIO): number {
  const [, sub] = parsed.positionals;
  const json = parsed.flags.get("json") === true;
  const db = dbPathOf(parsed, io.env, FLAGS);
  if (sub === "create") {
    const name = flagString(parsed, "name");
    if (!name || !name.trim()) throw new UsageError("accounts create needs --name");
    const plan = (flagString(parsed, "plan") ?? "standard") as Plan;
    if (!PLANS.includes(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
    const apiLimitPerHour = flagInt(parsed, "api-limit-per-hour");
    const apiBurstPerMinute = flagInt(parsed, "api-burst-per-minute");
    const monthlyQuota = flagInt(parsed, "monthly-quota");
    for (const [flag, v] of [["api-limit-per-hour", apiLimitPerHour], ["api-burst-per-minute", apiBurstPerMinute]] as const) {
      if (v === 0) throw new UsageError(`--${flag} must be at least 1`);
    }
    const r = withDb(db, (sqlite) =>
      new AccountService(sqlite, systemClock).createAccount({ name: name.trim(), plan, apiLimitPerHour, apiBurstPerMinute, monthlyQuota }),
    );
    if (json) io.out(JSON.stringify({ accountId: r.account.id, keyId: r.keyId, apiKey: r.apiKey, permission: r.permission }));
    else {
      io.out(`Account ${r.account.id} (${r.account.name}, ${r.account.plan}) created.`);
      io.out(`Admin API key (shown once — store it now): ${r.apiKey}`);
      io.out(`Key id: ${r.keyId}`);
    }
    return 0;
  }
  if (sub === "list") {
    const rows = withDb(db, (sqlite) => new AccountService(sqlite, systemClock).listAccounts());
    if (json) io.out(JSON.stringify(rows.map((r) => ({ accountId: r.id, name: r.name, plan: r.plan, apiLimitPerHour: r.apiLimitPerHour, apiBurstPerMinute: r.apiBurstPerMinute, monthlyQuota: r.monthlyQuota, activeKeys: r.keys, createdAt: r.createdAt }))));
    else io.out(table(rows.map((r) => ({ id: r.id, name: r.name, plan: r.plan, keys: r.keys, quota: r.monthlyQuota, created: r.createdAt })), ["id", "name", "plan", "keys", "quota", "created"]));
    return 0;
  }
  if (sub === "timezone") {
    const [, , id, zone] = parsed.positionals;
    if (!id || !zone) throw new UsageError("accounts timezone needs ACCOUNT_ID ZONE");
    const tz = canonicalTimeZone(zone);
    if (!tz) throw new UsageError(`unknown time zone "${zone}" (use an IANA name such as Europe/Berlin)`);
    const ok = withDb(db, (sqlite) => setAccountTimeZone(sqlite, id, tz === "UTC" ? null : tz));
    if (!ok) {
      io.err(`No account with id ${id}`);
      return 1;
    }
    io.out(`Account ${id}: phone times without a zone are read in ${tz}.`);
    return 0;
  }
  throw new UsageError(sub ? `unknown accounts command "${sub}"\n\n${ACCOUNTS_HELP}` : ACCOUNTS_HELP);
}
