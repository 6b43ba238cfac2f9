import type { ParsedArgs } from "../config";
import { systemClock } from "../lib/clock";
import { canonicalTimeZone } from "../domain/time-series";
import { setAccountTimeZone } from "../db/stores/devices";
import { AccountService, PLANS, type Account, type Plan } from "../services/accounts";
import { acquireLock, liveLockHolder } from "../services/backups";
import { DEFAULT_PHONE_COUNTRY } from "../domain/phone";
import { isSupportedCountry } from "libphonenumber-js/max";
import { dbPathOf, flagInt, flagString, table, UsageError, withDb, type CliIO } from "./common";

export const ACCOUNTS_HELP = `Usage:
  textwire accounts create --name NAME [--plan standard|pro|enterprise] [--api-limit-per-hour N]
                           [--api-burst-per-minute N] [--monthly-quota N] [--json] [--db PATH]
  textwire accounts list [--json] [--db PATH]
  textwire accounts timezone ACCOUNT_ID ZONE [--db PATH]

timezone sets the IANA zone (e.g. Europe/Berlin; UTC to reset) in which a phone's zone-less
sentAt is read (docs/devices.md).
  textwire accounts update ID [--name NAME] [--plan standard|pro|enterprise] [--monthly-quota N|none]
                           [--api-limit-per-hour N|none] [--api-burst-per-minute N|none]
                           [--default-country CC|none] [--json] [--db PATH]
  textwire accounts delete ID --confirm [--json] [--db PATH]

create makes an account and its first admin key (shown once).
update changes only the settings given; "none" removes the monthly quota, or puts an API limit
back to the plan's default. --default-country (ISO 3166 code, e.g. GB) is the account's home
country (what public forms recommend as allowed countries); none = US.
It takes effect at once, also on a running server.
delete removes the account with all its keys, forms, submissions, contacts and messages; without
--confirm it only says what it would delete. Stop the server first (like restore).`;

const FLAGS = ["name", "plan", "api-limit-per-hour", "api-burst-per-minute", "monthly-quota", "default-country", "json", "confirm"];

/** A whole number ≥ min, or "none" (null). */
function flagLimit(parsed: ParsedArgs, name: string, min: number): number | null | undefined {
  const v = flagString(parsed, name);
  if (v === undefined) return undefined;
  if (v.toLowerCase() === "none") return null;
  const n = flagInt(parsed, name)!;
  if (n < min) throw new UsageError(`--${name} must be at least ${min} (or "none")`);
  return n;
}

/** An ISO 3166 alpha-2 code libphonenumber knows (upper-cased), or "none" (null = US). */
function flagCountry(parsed: ParsedArgs): string | null | undefined {
  const v = flagString(parsed, "default-country");
  if (v === undefined) return undefined;
  if (v.toLowerCase() === "none") return null;
  const code = v.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code)) {
    throw new UsageError(`--default-country: "${v}" is not a country code; use a two-letter ISO 3166 code such as US, GB, FR (or none)`);
  }
  return code;
}

function accountJson(a: Account) {
  return { accountId: a.id, name: a.name, plan: a.plan, apiLimitPerHour: a.apiLimitPerHour, apiBurstPerMinute: a.apiBurstPerMinute, monthlyQuota: a.monthlyQuota, defaultCountry: a.defaultCountry ?? DEFAULT_PHONE_COUNTRY, createdAt: a.createdAt };
}

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
    if (json) io.out(JSON.stringify(rows.map((r) => ({ accountId: r.id, name: r.name, plan: r.plan, apiLimitPerHour: r.apiLimitPerHour, apiBurstPerMinute: r.apiBurstPerMinute, monthlyQuota: r.monthlyQuota, defaultCountry: r.defaultCountry ?? DEFAULT_PHONE_COUNTRY, activeKeys: r.keys, createdAt: r.createdAt }))));
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
  if (sub === "update") {
    const id = parsed.positionals[2];
    if (!id) throw new UsageError("accounts update needs the account id: textwire accounts update ID [--name …] (see textwire accounts list)");
    if (parsed.flags.has("confirm")) throw new UsageError("--confirm belongs to accounts delete");
    const name = flagString(parsed, "name");
    if (name !== undefined && !name.trim()) throw new UsageError("--name must not be empty");
    const plan = flagString(parsed, "plan") as Plan | undefined;
    if (plan !== undefined && !PLANS.includes(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
    const patch = {
      name: name?.trim(),
      plan,
      monthlyQuota: flagLimit(parsed, "monthly-quota", 0),
      apiLimitPerHour: flagLimit(parsed, "api-limit-per-hour", 1),
      apiBurstPerMinute: flagLimit(parsed, "api-burst-per-minute", 1),
      defaultCountry: flagCountry(parsed),
    };
    if (Object.values(patch).every((v) => v === undefined)) {
      throw new UsageError("accounts update: nothing to change; give --name, --plan, --monthly-quota, --api-limit-per-hour, --api-burst-per-minute or --default-country");
    }
    const account = withDb(db, (sqlite) => new AccountService(sqlite, systemClock).updateAccount(id, patch));
    if (!account) {
      io.err(`no account with id ${id} (textwire accounts list shows them)`);
      return 1;
    }
    if (json) io.out(JSON.stringify(accountJson(account)));
    else {
      const show = (v: number | null, dflt: string) => (v === null ? dflt : String(v));
      io.out(`Account ${account.id} updated: ${account.name}, plan ${account.plan}, monthly quota ${show(account.monthlyQuota, "none")}, ` +
        `API limit ${show(account.apiLimitPerHour, "plan default")}/h, burst ${show(account.apiBurstPerMinute, "default")}/min, ` +
        `default country ${account.defaultCountry ?? DEFAULT_PHONE_COUNTRY}.`);
    }
    return 0;
  }
  if (sub === "delete") {
    const id = parsed.positionals[2];
    if (!id) throw new UsageError("accounts delete needs the account id: textwire accounts delete ID --confirm (see textwire accounts list)");
    const confirm = parsed.flags.get("confirm");
    if (confirm !== undefined && confirm !== true) throw new UsageError("--confirm takes no value");
    const holder = liveLockHolder(db);
    if (holder) {
      io.err(`${db} is in use by a running Textwire server (process ${holder.pid}); stop it first (e.g. sudo systemctl stop textwire), then delete, then start it again`);
      return 1;
    }
    const release = acquireLock(db, "restore");
    try {
      return withDb(db, (sqlite) => {
        const svc = new AccountService(sqlite, systemClock);
        const account = svc.findAccount(id);
        if (!account) {
          io.err(`no account with id ${id} (textwire accounts list shows them)`);
          return 1;
        }
        const f = svc.accountFootprint(id);
        const what = `account ${id} (${account.name}) with its ${f.activeKeys} active API key(s), ${f.forms} form(s) and their submissions, ${f.contacts} contact(s) and ${f.messages} message(s)`;
        if (confirm !== true) {
          io.err(`Refusing to delete without --confirm. This would permanently delete ${what}.`);
          io.err(`Make a backup first (textwire backup FILE), then run: textwire accounts delete ${id} --confirm`);
          return 2;
        }
        svc.deleteAccount(id);
        if (json) io.out(JSON.stringify({ deleted: true, accountId: id, ...f }));
        else io.out(`Deleted ${what}.`);
        return 0;
      });
    } finally {
      release();
    }
  }
  throw new UsageError(sub ? `unknown accounts command "${sub}"\n\n${ACCOUNTS_HELP}` : ACCOUNTS_HELP);
}
