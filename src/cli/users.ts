import type { ParsedArgs } from "../config";
import { systemClock } from "../lib/clock";
import { AccountService } from "../services/accounts";
import { SessionService } from "../services/sessions";
import { hashPassword, PeopleService, randomPassword } from "../services/people";
import { SetupService } from "../services/setup";
import { emailProblem, isRole, nameProblem, normalizeEmail, ROLES } from "../domain/people";
import { dbPathOf, flagString, table, UsageError, withDb, type CliIO } from "./common";
import type { Database } from "bun:sqlite";

export const USERS_HELP = `Usage:
  textwire users list [--account ID] [--json] [--db PATH]
  textwire users add --account ID --email E --role owner|admin|staff|viewer [--name N] [--json] [--db PATH]
  textwire users reset-password EMAIL [--json] [--db PATH]

For lock-outs: \`add\` and \`reset-password\` print a new random password once (the person signs in
with it and changes it in Settings → Your profile); a reset ends every session of that person.
Passwords are stored only as argon2id hashes.`;

export const SETUP_LINK_HELP = `Usage: textwire setup-link [--public-url URL] [--port N] [--db PATH]

Prints a new one-time setup address for the first run in the browser (valid 24 hours; the one
printed before stops working). Once the first owner exists, there is nothing to set up: sign in,
or use \`textwire users …\`.`;

const FLAGS = ["account", "email", "role", "name", "json", "public-url", "port"];

function services(sqlite: Database) {
  const accounts = new AccountService(sqlite, systemClock);
  const sessions = new SessionService(sqlite, systemClock, accounts);
  const people = new PeopleService(sqlite, systemClock, sessions);
  return { accounts, people, setup: new SetupService(sqlite, systemClock, accounts, people) };
}

export async function usersCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  const [, sub, arg] = parsed.positionals;
  const json = parsed.flags.get("json") === true;
  const db = dbPathOf(parsed, io.env, FLAGS);
  if (sub === "list") {
    const accountId = flagString(parsed, "account") ?? null;
    const rows = withDb(db, (sqlite) => services(sqlite).people.list(accountId));
    if (json) io.out(JSON.stringify(rows));
    else if (rows.length === 0) io.out("Nobody signs in yet. Open the setup address `textwire setup-link` prints, or: textwire users add --account ID --email E --role owner");
    else io.out(table(rows.map((u) => ({ id: u.id, account: u.accountId, name: u.name, email: u.email, role: u.role, created: u.createdAt })), ["id", "account", "name", "email", "role", "created"]));
    return 0;
  }
  if (sub === "add") {
    const accountId = flagString(parsed, "account");
    const email = flagString(parsed, "email");
    const role = flagString(parsed, "role");
    if (!accountId || !email || !role) throw new UsageError("users add needs --account ID --email E --role R");
    const emailBad = emailProblem(email);
    if (emailBad) throw new UsageError(emailBad);
    if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
    const name = flagString(parsed, "name") ?? normalizeEmail(email).split("@")[0]!;
    const nameBad = nameProblem(name, "--name");
    if (nameBad) throw new UsageError(nameBad);
    const password = randomPassword();
    const passwordHash = await hashPassword(password);
    return withDb(db, (sqlite) => {
      const s = services(sqlite);
      if (!s.accounts.findAccount(accountId)) {
        io.err(`No account with id ${accountId}`);
        return 1;
      }
      if (s.people.findByEmail(email)) {
        io.err(`Someone already signs in with ${normalizeEmail(email)}: use textwire users reset-password ${normalizeEmail(email)}`);
        return 1;
      }
      const p = s.people.addHashed(accountId, { name: name.trim(), email: normalizeEmail(email), passwordHash, role });
      if (json) io.out(JSON.stringify({ ...p, password }));
      else {
        io.out(`Added ${p.name} <${p.email}> as ${p.role}.`);
        io.out(`Password (shown once — give it to them; they can change it in Settings → Your profile): ${password}`);
      }
      return 0;
    });
  }
  if (sub === "reset-password") {
    if (!arg) throw new UsageError("users reset-password needs the person's EMAIL");
    const password = randomPassword();
    const passwordHash = await hashPassword(password);
    return withDb(db, (sqlite) => {
      const s = services(sqlite);
      const u = s.people.findByEmail(arg);
      if (!u) {
        io.err(`Nobody signs in with ${normalizeEmail(arg)}. See who does: textwire users list`);
        return 1;
      }
      const ended = s.people.setPasswordHash(u.id, passwordHash);
      if (json) io.out(JSON.stringify({ id: u.id, email: u.email, password, sessionsEnded: ended }));
      else {
        io.out(`New password for ${u.email} (shown once): ${password}`);
        io.out(`Their ${ended} session(s) ended; they sign in with this password and can change it in Settings → Your profile.`);
      }
      return 0;
    });
  }
  throw new UsageError(USERS_HELP);
}

export function setupLinkCommand(parsed: ParsedArgs, io: CliIO): number {
  const db = dbPathOf(parsed, io.env, FLAGS);
  const origin = (flagString(parsed, "public-url") ?? io.env.TEXTWIRE_PUBLIC_URL ?? `http://localhost:${flagString(parsed, "port") ?? io.env.TEXTWIRE_PORT ?? "8080"}`).replace(/\/+$/, "");
  const link = withDb(db, (sqlite) => services(sqlite).setup.newLink());
  if (!link) {
    io.err("This server is already set up: sign in with your e-mail and password. Locked out? textwire users reset-password EMAIL");
    return 1;
  }
  io.out(`${origin}/setup#${link.token}`);
  return 0;
}
