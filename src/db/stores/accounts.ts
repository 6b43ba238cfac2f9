/**
 * Storage of accounts, their API keys and their monthly usage (tables accounts, api_keys,
 * monthly_usage). Every statement on these tables lives here; the services hold the rules.
 * Statements go through `sqlite.query`, which prepares each once per connection and caches it,
 * so the per-request key lookup is prepared once.
 */
import type { Database } from "bun:sqlite";
import type { accounts, apiKeys } from "../schema";
import { invalidateWebhookForms } from "../webhook-form-cache";
import { DEFAULT_PHONE_COUNTRY } from "../../domain/phone";
import { countAccountContacts } from "./contacts";
import { countAccountMessages } from "./messages";

/** An accounts row as the services see it (the zone column is not read by them). */
export type AccountRecord = Omit<typeof accounts.$inferSelect, "timeZone" | "nameSetAt">;
export type ApiKeyRecord = typeof apiKeys.$inferSelect;

/** The patchable columns of an account (undefined = unchanged, null = back to the default). */
export type AccountPatch = Partial<Pick<AccountRecord, "name" | "plan" | "apiLimitPerHour" | "apiBurstPerMinute" | "monthlyQuota" | "defaultCountry">> & { timeZone?: string | null };

/** A key with its account, for authentication. */
export type KeyWithAccount = Pick<ApiKeyRecord, "keyHash" | "accountId" | "permission" | "revokedAt"> & { keyId: string; operator: boolean } & AccountRecord;

/** A key as its account's list shows it (never its hash). */
export type KeyListing = Pick<ApiKeyRecord, "last4" | "permission" | "createdAt" | "lastUsedAt" | "revokedAt"> & { keyId: string; operator: boolean };

const ACCOUNT_COLS = `id, name, plan, api_limit_per_hour AS apiLimitPerHour, api_burst_per_minute AS apiBurstPerMinute,
  monthly_quota AS monthlyQuota, default_country AS defaultCountry, created_at AS createdAt`;

/** The SQL column of each patchable field. */
const PATCH_COLUMNS: Record<keyof AccountPatch, string> = {
  name: "name",
  plan: "plan",
  apiLimitPerHour: "api_limit_per_hour",
  apiBurstPerMinute: "api_burst_per_minute",
  monthlyQuota: "monthly_quota",
  defaultCountry: "default_country",
  timeZone: "time_zone",
};

export function countAccounts(sqlite: Database): number {
  return (sqlite.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n;
}

/** Every account's id (the queue watcher walks them). */
export function accountIds(sqlite: Database): string[] {
  return (sqlite.query("SELECT id FROM accounts").all() as Array<{ id: string }>).map((r) => r.id);
}

/**
 * A no-op rewrite of the account's row: a commit that writes a page, so that at the connection's
 * own synchronous setting it syncs the WAL and every commit before it (a contact import's durable
 * point before its answer). The caller holds the transaction.
 */
export function rewriteAccountRow(sqlite: Database, accountId: string): void {
  sqlite.query("UPDATE accounts SET name = name WHERE id = ?").run(accountId);
}

/** `nameSet`: a person chose the name (false only for the placeholder a first start gives). */
export function insertAccount(sqlite: Database, a: AccountRecord, nameSet = true): void {
  sqlite
    .query(
      `INSERT INTO accounts (id, name, plan, api_limit_per_hour, api_burst_per_minute, monthly_quota, created_at, name_set_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(a.id, a.name, a.plan, a.apiLimitPerHour, a.apiBurstPerMinute, a.monthlyQuota, a.createdAt, nameSet ? a.createdAt : null);
}

export function findAccount(sqlite: Database, id: string): AccountRecord | null {
  return (sqlite.query(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE id = ?`).get(id) as AccountRecord | null) ?? null;
}

export function accountName(sqlite: Database, accountId: string): string | null {
  return (sqlite.query("SELECT name FROM accounts WHERE id = ?1").get(accountId) as { name: string } | null)?.name ?? null;
}

/** The business profile: the name (and whether a person set it), country and time zone. */
export type BusinessProfileRow = Pick<typeof accounts.$inferSelect, "name" | "nameSetAt" | "defaultCountry" | "timeZone">;

export function findBusinessProfile(sqlite: Database, accountId: string): BusinessProfileRow | null {
  return (
    (sqlite
      .query("SELECT name, name_set_at AS nameSetAt, default_country AS defaultCountry, time_zone AS timeZone FROM accounts WHERE id = ?1")
      .get(accountId) as BusinessProfileRow | null) ?? null
  );
}

/** Writes the whole profile; the name counts as chosen from now on. */
export function updateBusinessProfile(sqlite: Database, accountId: string, p: { name: string; defaultCountry: string | null; timeZone: string | null; at: string }): boolean {
  const n = sqlite
    .query("UPDATE accounts SET name = ?2, name_set_at = ?3, default_country = ?4, time_zone = ?5 WHERE id = ?1")
    .run(accountId, p.name, p.at, p.defaultCountry, p.timeZone).changes;
  invalidateWebhookForms(sqlite);
  return n > 0;
}

/** Every account, oldest first, with its number of live keys. */
export function listAccounts(sqlite: Database): Array<AccountRecord & { keys: number }> {
  return sqlite
    .query(
      `SELECT ${ACCOUNT_COLS}, (SELECT count(*) FROM api_keys k WHERE k.account_id = accounts.id AND k.revoked_at IS NULL) AS keys
         FROM accounts ORDER BY created_at`,
    )
    .all() as Array<AccountRecord & { keys: number }>;
}

/** Writes the given fields (none: nothing is written); the webhook's cached lookups are dropped (the quota rides on them). */
export function updateAccount(sqlite: Database, id: string, patch: AccountPatch): void {
  const set = (Object.keys(PATCH_COLUMNS) as Array<keyof AccountPatch>).filter((k) => patch[k] !== undefined);
  if (set.length === 0) return;
  // A name given by a person (accounts update --name) is one customers may see.
  const named = patch.name !== undefined ? ", name_set_at = coalesce(name_set_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))" : "";
  sqlite
    .prepare(`UPDATE accounts SET ${set.map((k) => `${PATCH_COLUMNS[k]} = ?`).join(", ")}${named} WHERE id = ?`)
    .run(...set.map((k) => patch[k] as string | number | null), id);
  invalidateWebhookForms(sqlite);
}

/** What deleting an account removes. */
export function accountFootprint(sqlite: Database, id: string): { forms: number; contacts: number; messages: number; activeKeys: number } {
  const n = (sql: string) => (sqlite.query(sql).get(id) as { n: number }).n;
  return {
    forms: n("SELECT count(*) AS n FROM forms WHERE account_id = ?"),
    contacts: countAccountContacts(sqlite, id),
    messages: countAccountMessages(sqlite, id),
    activeKeys: n("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL"),
  };
}

/**
 * Deletes the account (its keys, forms, submissions, contacts and messages cascade) and the
 * per-account counters that have no foreign key. The caller holds the transaction.
 */
export function deleteAccount(sqlite: Database, id: string): void {
  sqlite.query("DELETE FROM accounts WHERE id = ?").run(id);
  invalidateWebhookForms(sqlite);
  sqlite.query("DELETE FROM message_counts WHERE account_id = ?").run(id);
  sqlite.query("DELETE FROM message_rollups WHERE account_id = ?").run(id);
}

export function insertApiKey(sqlite: Database, k: Pick<ApiKeyRecord, "id" | "accountId" | "keyHash" | "last4" | "permission" | "operator" | "createdAt">): void {
  sqlite
    .query("INSERT INTO api_keys (id, account_id, key_hash, last4, permission, operator, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(k.id, k.accountId, k.keyHash, k.last4, k.permission, k.operator ? 1 : 0, k.createdAt);
}

export function listApiKeys(sqlite: Database, accountId: string): KeyListing[] {
  const rows = sqlite
    .query(
      `SELECT id AS keyId, last4, permission, operator, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt
         FROM api_keys WHERE account_id = ? ORDER BY created_at`,
    )
    .all(accountId) as Array<Omit<KeyListing, "operator"> & { operator: number }>;
  return rows.map((r) => ({ ...r, operator: r.operator === 1 }));
}

/** Returns false when there is no such key (or it was already revoked). */
export function revokeApiKey(sqlite: Database, keyId: string, revokedAt: string): boolean {
  return sqlite.query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(revokedAt, keyId).changes > 0;
}

/** Live admin keys of an account (the last one may not be revoked from the dashboard). */
export function countLiveAdminKeys(sqlite: Database, accountId: string): number {
  return (
    sqlite.query("SELECT count(*) AS n FROM api_keys WHERE account_id = ?1 AND permission = 'admin_access' AND revoked_at IS NULL").get(accountId) as { n: number }
  ).n;
}

/** Whether the key is an operator key (false for no such key). */
export function isOperatorKey(sqlite: Database, keyId: string): boolean {
  return (sqlite.query("SELECT operator FROM api_keys WHERE id = ?1").get(keyId) as { operator: number } | null)?.operator === 1;
}

const KEY_WITH_ACCOUNT = `SELECT k.id AS keyId, k.key_hash AS keyHash, k.account_id AS accountId, k.permission, k.operator, k.revoked_at AS revokedAt,
        a.id, a.name, a.plan, a.api_limit_per_hour AS apiLimitPerHour, a.api_burst_per_minute AS apiBurstPerMinute,
        a.monthly_quota AS monthlyQuota, a.default_country AS defaultCountry, a.created_at AS createdAt
   FROM api_keys k JOIN accounts a ON a.id = k.account_id`;

function keyWithAccount(sqlite: Database, where: "k.key_hash = ?" | "k.id = ?", value: string): KeyWithAccount | null {
  const row = sqlite.query(`${KEY_WITH_ACCOUNT} WHERE ${where}`).get(value) as (Omit<KeyWithAccount, "operator"> & { operator: number }) | null;
  return row ? { ...row, operator: row.operator === 1 } : null;
}

/** A key with its account by the key's id (an SMSGate token acts for the key that asked for it). */
export function findKeyById(sqlite: Database, keyId: string): KeyWithAccount | null {
  return keyWithAccount(sqlite, "k.id = ?", keyId);
}

/** The key by its hash with its account, or null (revoked keys included: the caller refuses them). */
export function findKeyByHash(sqlite: Database, keyHash: string): KeyWithAccount | null {
  return keyWithAccount(sqlite, "k.key_hash = ?", keyHash);
}

export function touchApiKey(sqlite: Database, keyId: string, lastUsedAt: string): void {
  sqlite.query("UPDATE api_keys SET last_used_at = ? WHERE id = ?").run(lastUsedAt, keyId);
}

/** Messages created by the account in a UTC month ("2026-11"), as the quota counts them (migration 0004). */
export function monthlyUsage(sqlite: Database, accountId: string, month: string): number {
  return (sqlite.query("SELECT coalesce((SELECT n FROM monthly_usage WHERE account_id = ? AND month = ?), 0) AS n").get(accountId, month) as { n: number }).n;
}

const hasColumn = new WeakMap<Database, boolean>();

/**
 * The account's default country (accounts.default_country, set with `accounts update
 * --default-country`), else US. The column comes with another change; until it exists every
 * account's default is US.
 */
export function findAccountDefaultCountry(sqlite: Database, accountId: string): string {
  let known = hasColumn.get(sqlite);
  if (known === undefined) {
    known = (sqlite.query("PRAGMA table_info(accounts)").all() as Array<{ name: string }>).some((c) => c.name === "default_country");
    hasColumn.set(sqlite, known);
  }
  if (!known) return DEFAULT_PHONE_COUNTRY;
  const row = sqlite.query("SELECT default_country AS c FROM accounts WHERE id = ?").get(accountId) as { c: string | null } | null;
  return typeof row?.c === "string" && /^[A-Za-z]{2}$/.test(row.c) ? row.c.toUpperCase() : DEFAULT_PHONE_COUNTRY;
}
