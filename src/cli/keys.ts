import type { ParsedArgs } from "../config";
import { systemClock } from "../lib/clock";
import { AccountService, type Permission } from "../services/accounts";
import { dbPathOf, flagString, table, UsageError, withDb, type CliIO } from "./common";

export const KEYS_HELP = `Usage:
  textwire keys create --account ID [--permission standard|admin] [--operator] [--json] [--db PATH]
  textwire keys list --account ID [--json] [--db PATH]
  textwire keys revoke KEY_ID [--db PATH]

--operator makes a server operator key (an admin key that may also download backups with
POST /v1/admin/backup and read the server-wide /metrics, which cover every account).
Keys are stored only as SHA-256 hashes: the whole key is shown once, at creation.
Rotation: create a new key, move your clients to it, then revoke the old one.`;

const FLAGS = ["account", "permission", "operator", "json"];

export function keysCommand(parsed: ParsedArgs, io: CliIO): number {
  const [, sub, arg] = parsed.positionals;
  const json = parsed.flags.get("json") === true;
  const db = dbPathOf(parsed, io.env, FLAGS);
  if (sub === "create" || sub === "list") {
    const accountId = flagString(parsed, "account");
    if (!accountId) throw new UsageError(`keys ${sub} needs --account ID`);
    return withDb(db, (sqlite) => {
      const svc = new AccountService(sqlite, systemClock);
      if (!svc.findAccount(accountId)) {
        io.err(`No account with id ${accountId}`);
        return 1;
      }
      if (sub === "create") {
        const operator = parsed.flags.get("operator") === true;
        const perm = flagString(parsed, "permission") ?? (operator ? "admin" : "standard");
        if (perm !== "standard" && perm !== "admin") throw new UsageError("--permission must be standard or admin");
        if (operator && perm !== "admin") throw new UsageError("--operator keys are admin keys; drop --permission standard");
        const k = svc.createKey(accountId, `${perm}_access` as Permission, operator);
        if (json) io.out(JSON.stringify({ keyId: k.keyId, apiKey: k.apiKey, permission: k.permission, operator: k.operator }));
        else {
          io.out(`API key (shown once — store it now): ${k.apiKey}`);
          io.out(`Key id: ${k.keyId}  permission: ${k.permission}${k.operator ? "  operator: yes (backups, server-wide /metrics)" : ""}`);
        }
        return 0;
      }
      const keys = svc.listKeys(accountId);
      if (json) io.out(JSON.stringify(keys));
      else io.out(table(keys.map((k) => ({ id: k.keyId, key: k.key, permission: k.permission, operator: k.operator ? "yes" : "", created: k.createdAt, "last used": k.lastUsedAt, revoked: k.revokedAt })), ["id", "key", "permission", "operator", "created", "last used", "revoked"]));
      return 0;
    });
  }
  if (sub === "revoke") {
    if (!arg) throw new UsageError("keys revoke needs KEY_ID");
    const ok = withDb(db, (sqlite) => new AccountService(sqlite, systemClock).revokeKey(arg));
    if (!ok) {
      io.err(`No active key with id ${arg}`);
      return 1;
    }
    if (json) io.out(JSON.stringify({ keyId: arg, revoked: true }));
    else io.out(`Key ${arg} revoked; it stops working at once.`);
    return 0;
  }
  throw new UsageError(sub ? `unknown keys command "${sub}"\n\n${KEYS_HELP}` : KEYS_HELP);
}
