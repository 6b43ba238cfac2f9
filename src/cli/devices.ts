import type { ParsedArgs } from "../config";
import { systemClock } from "../lib/clock";
import { AccountService } from "../services/accounts";
import { createRegistrationToken } from "../services/device-registration";
import { AppError } from "../errors";
import { dbPathOf, flagString, UsageError, withDb, type CliIO } from "./common";

export const DEVICES_HELP = `Usage:
  textwire devices token --account ID [--reusable] [--hours N] [--json] [--db PATH]

Creates a registration token for the SMSGate app (docs/phones.md). Type it into the app with the
server URL https://<host>:<port>/api/mobile/v1. It is shown once, stored only as a hash, and works
for one phone (--reusable: any number) until it expires (default 24 hours).`;

const FLAGS = ["account", "reusable", "hours", "json"];

export function devicesCommand(parsed: ParsedArgs, io: CliIO): number {
  const [, sub] = parsed.positionals;
  if (sub !== "token") throw new UsageError(sub ? `unknown devices command "${sub}"\n\n${DEVICES_HELP}` : DEVICES_HELP);
  const db = dbPathOf(parsed, io.env, FLAGS);
  const accountId = flagString(parsed, "account");
  if (!accountId) throw new UsageError("devices token needs --account ID");
  const hoursText = flagString(parsed, "hours");
  const hours = hoursText === undefined ? undefined : Number(hoursText);
  return withDb(db, (sqlite) => {
    if (!new AccountService(sqlite, systemClock).findAccount(accountId)) {
      io.err(`No account with id ${accountId}`);
      return 1;
    }
    try {
      const t = createRegistrationToken(sqlite, systemClock, accountId, { reusable: parsed.flags.get("reusable") === true, expiresInHours: hours });
      if (parsed.flags.get("json") === true) io.out(JSON.stringify(t));
      else {
        io.out(`Registration token (shown once — type it into the SMSGate app): ${t.token}`);
        io.out(`${t.reusable ? "Reusable" : "One phone"}; expires ${t.expiresAt}`);
      }
      return 0;
    } catch (err) {
      if (err instanceof AppError) {
        io.err(err.errors?.map((e) => e.message).join("; ") ?? err.message);
        return 1;
      }
      throw err;
    }
  });
}
