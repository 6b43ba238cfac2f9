/**
 * Accounts as the operator makes and changes them: `textwire accounts create|update` and `textwire
 * keys create` (src/cli/accounts.ts, src/cli/keys.ts) on the test server's database file, run in
 * this process. No HTTP route makes an account or changes its plan, quota or API limits (they are
 * the operator's, docs/operations.md), so an API test that needs a second tenant or a small quota
 * goes through the same command an operator types; "it takes effect at once, also on a running
 * server". Keys of an existing account are made through the API (`POST /v1/api-keys`, see
 * `newApiKey` in reads.ts) where the account has an admin key to make them with.
 */
import { parseArgs } from "../../src/config";
import { accountsCommand } from "../../src/cli/accounts";
import { keysCommand } from "../../src/cli/keys";
import { usersCommand } from "../../src/cli/users";
import type { Plan } from "../../src/services/accounts";
import { cliIO } from "./cli-io";
import { expectStatus, formBody, type TestServer } from "./server";

const BOOLEAN_FLAGS = new Set(["json", "confirm", "operator"]);

/** Runs one operator command on the server's database; its `--json` answer (its lines when `json` is false), or throws with its output. */
function operator(ts: Pick<TestServer, "dbPath">, run: typeof accountsCommand, argv: string[], json = true): any {
  const { cli, out, err } = cliIO();
  const code = run(parseArgs([...argv, ...(json ? ["--json"] : []), "--db", ts.dbPath], BOOLEAN_FLAGS), cli);
  if (code !== 0) throw new Error(`textwire ${argv.join(" ")} exited ${code}: ${[...out, ...err].join("\n")}`);
  return json ? JSON.parse(out.join("\n")) : out;
}

export interface AccountLimits {
  plan?: Plan;
  apiLimitPerHour?: number;
  apiBurstPerMinute?: number;
  monthlyQuota?: number;
}

const limitFlags = (o: AccountLimits) => [
  ...(o.plan !== undefined ? ["--plan", o.plan] : []),
  ...(o.apiLimitPerHour !== undefined ? ["--api-limit-per-hour", String(o.apiLimitPerHour)] : []),
  ...(o.apiBurstPerMinute !== undefined ? ["--api-burst-per-minute", String(o.apiBurstPerMinute)] : []),
  ...(o.monthlyQuota !== undefined ? ["--monthly-quota", String(o.monthlyQuota)] : []),
];

/**
 * Another tenant on the same server (`textwire accounts create --name … --json`), with its first
 * admin key. The shape of the answer (`account.id`, `apiKey`, `keyId`) is what tests read.
 */
export function newAccount(ts: Pick<TestServer, "dbPath">, o: AccountLimits & { name: string }): { account: { id: string; name: string }; apiKey: string; keyId: string } {
  const r = operator(ts, accountsCommand, ["accounts", "create", "--name", o.name, ...limitFlags(o)]);
  return { account: { id: r.accountId, name: o.name }, apiKey: r.apiKey, keyId: r.keyId };
}

/** `textwire accounts update ID …`: a quota or API limits changed by the operator (null = none / the plan's default). */
export function updateAccount(ts: Pick<TestServer, "dbPath">, accountId: string, o: { apiLimitPerHour?: number | null; apiBurstPerMinute?: number | null; monthlyQuota?: number | null; plan?: Plan }): void {
  const v = (n: number | null) => (n === null ? "none" : String(n));
  operator(ts, accountsCommand, [
    "accounts", "update", accountId,
    ...(o.plan !== undefined ? ["--plan", o.plan] : []),
    ...(o.apiLimitPerHour !== undefined ? ["--api-limit-per-hour", v(o.apiLimitPerHour)] : []),
    ...(o.apiBurstPerMinute !== undefined ? ["--api-burst-per-minute", v(o.apiBurstPerMinute)] : []),
    ...(o.monthlyQuota !== undefined ? ["--monthly-quota", v(o.monthlyQuota)] : []),
  ]);
}

/** `textwire accounts timezone ID ZONE`: the zone a phone's zone-less times are read in (UTC resets it). */
export function setTimeZone(ts: Pick<TestServer, "dbPath">, accountId: string, zone: string): void {
  operator(ts, accountsCommand, ["accounts", "timezone", accountId, zone], false);
}

/**
 * `textwire keys create --account ID --permission …`: a key for an account, as the operator makes
 * one (for an account whose own admin key a test does not hold, or a standard key made without
 * spending the admin key's rate limit).
 */
export function operatorKey(
  ts: Pick<TestServer, "dbPath">,
  accountId: string,
  permission: "admin_access" | "standard_access",
  o: { operator?: boolean } = {},
): { apiKey: string; keyId: string; permission: string; operator: boolean } {
  const perm = permission === "admin_access" ? "admin" : "standard";
  return operator(ts, keysCommand, ["keys", "create", "--account", accountId, "--permission", perm, ...(o.operator ? ["--operator"] : [])]);
}

/** Runs one async operator command (`textwire users …`) on the server's database; its `--json` answer. */
async function operatorAsync(ts: Pick<TestServer, "dbPath">, argv: string[]): Promise<any> {
  const { cli, out, err } = cliIO();
  const code = await usersCommand(parseArgs([...argv, "--json", "--db", ts.dbPath], BOOLEAN_FLAGS), cli);
  if (code !== 0) throw new Error(`textwire ${argv.join(" ")} exited ${code}: ${[...out, ...err].join("\n")}`);
  return JSON.parse(out.join("\n"));
}

/**
 * `textwire users add`: a person who signs in to an account, as the operator adds one (for an
 * account with no owner to invite them, or to skip an invitation a test is not about); with the
 * password the command printed.
 */
export function addPerson(ts: Pick<TestServer, "dbPath">, accountId: string, o: { email: string; role: "owner" | "admin" | "staff" | "viewer"; name?: string }): Promise<{ id: string; accountId: string; email: string; role: string; password: string }> {
  return operatorAsync(ts, ["users", "add", "--account", accountId, "--email", o.email, "--role", o.role, ...(o.name ? ["--name", o.name] : [])]);
}

/** `textwire users list`: who signs in, to one account or to any. */
export function listPeople(ts: Pick<TestServer, "dbPath">, accountId?: string): Promise<Array<{ id: string; accountId: string; email: string; role: string; name: string }>> {
  return operatorAsync(ts, ["users", "list", ...(accountId ? ["--account", accountId] : [])]);
}

/** `textwire users reset-password EMAIL`: the operator's reset for a lock-out; the new password (the person's sessions end). */
export async function resetPassword(ts: Pick<TestServer, "dbPath">, email: string): Promise<string> {
  return (await operatorAsync(ts, ["users", "reset-password", email])).password;
}

/**
 * A tenant of its own (`textwire accounts create`) with one form made through the API, and a
 * `submit()` that posts a fresh number to the form's webhook: for tests that change the tenant's
 * quota or limits and watch the next submission.
 */
export async function tenantWithForm(ts: TestServer, name: string): Promise<{ accountId: string; apiKey: string; formId: string; submit: () => Promise<Response> }> {
  const acct = newAccount(ts, { name: `${name} ${crypto.randomUUID().slice(0, 6)}` });
  const form = (await expectStatus(await ts.api("/forms", { method: "POST", key: acct.apiKey, json: formBody() }), 201)).data.form;
  let n = 0;
  const submit = () =>
    fetch(`${ts.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1201555${String(2000 + ++n).slice(-4)}` }) });
  return { accountId: acct.account.id, apiKey: acct.apiKey, formId: form.id, submit };
}
