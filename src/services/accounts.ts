import { createHash, timingSafeEqual } from "node:crypto";
import type { Database } from "bun:sqlite";
import { newId } from "../lib/ids";
import { invalidateWebhookForms } from "../db/webhook-form-cache";
import { iso, type Clock } from "../lib/clock";
import { PLANS, type Account, type Plan } from "../domain/accounts";
import type { AuthKey, Permission } from "../domain/permissions";

export const KEY_PREFIX = "txwire_sk_";
export const KEY_BODY_LENGTH = 40;
export const KEY_RE = /^txwire_sk_[A-Za-z0-9]{40}$/;
export const KEY_FORMAT = `Authorization: Bearer ${KEY_PREFIX}<40 alphanumeric characters>`;

// The account and permission types have their own leaf modules (docs/api-decisions.md, "Layers:
// dependencies point down"); re-exported for the callers that take them with the service.
export { PLANS, type Account, type AuthKey, type Permission, type Plan };

/** Hourly API request limits per key by plan (docs/operations.md, "Limits"). Enterprise is set per account. */
export const PLAN_HOURLY_LIMIT: Record<Plan, number> = { standard: 1_000, pro: 5_000, enterprise: 5_000 };
/** Burst bucket per key: up to 100 requests per minute (docs/operations.md, "Limits"). */
export const DEFAULT_BURST_PER_MINUTE = 100;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function generateApiKey(): string {
  // Rejection sampling keeps every character uniform (256 is not a multiple of 62).
  let body = "";
  while (body.length < KEY_BODY_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(64))) {
      if (b < 248 && body.length < KEY_BODY_LENGTH) body += ALPHABET[b % 62];
    }
  }
  return KEY_PREFIX + body;
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

export function hourlyLimit(a: Pick<Account, "plan" | "apiLimitPerHour">): number {
  return a.apiLimitPerHour ?? PLAN_HOURLY_LIMIT[a.plan];
}
export function burstLimit(a: Pick<Account, "apiBurstPerMinute">): number {
  return a.apiBurstPerMinute ?? DEFAULT_BURST_PER_MINUTE;
}

const ACCOUNT_COLS = `id, name, plan, api_limit_per_hour AS apiLimitPerHour, api_burst_per_minute AS apiBurstPerMinute,
  monthly_quota AS monthlyQuota, default_country AS defaultCountry, created_at AS createdAt`;

export class AccountService {
  private readonly byHash;
  private readonly touch;
  /** lastUsedAt is written at most once a minute per key: no write on every request. */
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly sqlite: Database, private readonly clock: Clock) {
    this.byHash = sqlite.prepare<
      { keyId: string; keyHash: string; accountId: string; permission: Permission; operator: number; revokedAt: string | null } & Account,
      [string]
    >(
      `SELECT k.id AS keyId, k.key_hash AS keyHash, k.account_id AS accountId, k.permission, k.operator, k.revoked_at AS revokedAt,
              a.name, a.plan, a.api_limit_per_hour AS apiLimitPerHour, a.api_burst_per_minute AS apiBurstPerMinute,
              a.monthly_quota AS monthlyQuota, a.default_country AS defaultCountry, a.created_at AS createdAt
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
    );
    this.touch = sqlite.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?");
  }

  countAccounts(): number {
    return (this.sqlite.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n;
  }

  createAccount(input: {
    name: string;
    plan?: Plan;
    apiLimitPerHour?: number | null;
    apiBurstPerMinute?: number | null;
    monthlyQuota?: number | null;
    /** The first key is an operator key (the installer's, on first start). */
    operator?: boolean;
  }): { account: Account; keyId: string; apiKey: string; permission: Permission; operator: boolean } {
    const now = iso(this.clock());
    const account: Account = {
      id: newId(),
      name: input.name,
      plan: input.plan ?? "standard",
      apiLimitPerHour: input.apiLimitPerHour ?? null,
      apiBurstPerMinute: input.apiBurstPerMinute ?? null,
      monthlyQuota: input.monthlyQuota ?? null,
      defaultCountry: null,
      createdAt: now,
    };
    return this.sqlite.transaction(() => {
      this.sqlite
        .prepare(
          `INSERT INTO accounts (id, name, plan, api_limit_per_hour, api_burst_per_minute, monthly_quota, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(account.id, account.name, account.plan, account.apiLimitPerHour, account.apiBurstPerMinute, account.monthlyQuota, now);
      const key = this.createKey(account.id, "admin_access", input.operator ?? false);
      return { account, ...key };
    })();
  }

  listAccounts(): Array<Account & { keys: number }> {
    return this.sqlite
      .query(
        `SELECT ${ACCOUNT_COLS}, (SELECT count(*) FROM api_keys k WHERE k.account_id = accounts.id AND k.revoked_at IS NULL) AS keys
           FROM accounts ORDER BY created_at`,
      )
      .all() as Array<Account & { keys: number }>;
  }

  /**
   * Changes the given settings of an account (undefined = unchanged; null = back to the plan's
   * default, or no quota). Returns the account as it now is, or null when there is no such account.
   */
  updateAccount(
    id: string,
    patch: {
      name?: string;
      plan?: Plan;
      apiLimitPerHour?: number | null;
      apiBurstPerMinute?: number | null;
      monthlyQuota?: number | null;
      defaultCountry?: string | null;
    },
  ): Account | null {
    const cols: Record<string, unknown> = {
      name: patch.name,
      plan: patch.plan,
      api_limit_per_hour: patch.apiLimitPerHour,
      api_burst_per_minute: patch.apiBurstPerMinute,
      monthly_quota: patch.monthlyQuota,
      default_country: patch.defaultCountry,
    };
    const set = Object.entries(cols).filter(([, v]) => v !== undefined);
    if (set.length > 0) {
      this.sqlite
        .prepare(`UPDATE accounts SET ${set.map(([c]) => `${c} = ?`).join(", ")} WHERE id = ?`)
        .run(...(set.map(([, v]) => v) as Array<string | number | null>), id);
      invalidateWebhookForms(this.sqlite); // the monthly quota rides on every webhook lookup
    }
    return this.findAccount(id);
  }

  /** What deleting an account removes, for the CLI to say before it does. */
  accountFootprint(id: string): { forms: number; contacts: number; messages: number; activeKeys: number } {
    const n = (sql: string) => (this.sqlite.query(sql).get(id) as { n: number }).n;
    return {
      forms: n("SELECT count(*) AS n FROM forms WHERE account_id = ?"),
      contacts: n("SELECT count(*) AS n FROM contacts WHERE account_id = ?"),
      messages: n("SELECT count(*) AS n FROM messages WHERE account_id = ?"),
      activeKeys: n("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL"),
    };
  }

  /**
   * Deletes an account and everything it owns, in one transaction: its keys, forms, submissions,
   * contacts and messages go with it (foreign keys cascade); the per-account counters that have no
   * foreign key are removed by hand. Returns false when there is no such account.
   */
  deleteAccount(id: string): boolean {
    return this.sqlite.transaction(() => {
      if (!this.findAccount(id)) return false;
      this.sqlite.prepare("DELETE FROM accounts WHERE id = ?").run(id);
      invalidateWebhookForms(this.sqlite);
      this.sqlite.prepare("DELETE FROM message_counts WHERE account_id = ?").run(id);
      this.sqlite.prepare("DELETE FROM message_rollups WHERE account_id = ?").run(id);
      return true;
    })();
  }

  findAccount(id: string): Account | null {
    return (this.sqlite.query(`SELECT ${ACCOUNT_COLS} FROM accounts WHERE id = ?`).get(id) as Account | null) ?? null;
  }

  /** An operator key is always an admin key of its account as well. */
  createKey(accountId: string, permission: Permission, operator = false): { keyId: string; apiKey: string; permission: Permission; operator: boolean } {
    if (!this.findAccount(accountId)) throw new Error(`no account with id ${accountId}`);
    const apiKey = generateApiKey();
    const keyId = newId();
    this.sqlite
      .prepare("INSERT INTO api_keys (id, account_id, key_hash, last4, permission, operator, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(keyId, accountId, hashKey(apiKey), apiKey.slice(-4), operator ? "admin_access" : permission, operator ? 1 : 0, iso(this.clock()));
    return { keyId, apiKey, permission: operator ? "admin_access" : permission, operator };
  }

  listKeys(accountId: string): Array<{ keyId: string; key: string; permission: Permission; operator: boolean; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }> {
    const rows = this.sqlite
      .query(
        `SELECT id AS keyId, last4, permission, operator, created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt
           FROM api_keys WHERE account_id = ? ORDER BY created_at`,
      )
      .all(accountId) as Array<{ keyId: string; last4: string; permission: Permission; operator: number; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }>;
    return rows.map(({ last4, operator, ...r }) => ({ ...r, operator: operator === 1, key: `${KEY_PREFIX}…${last4}` }));
  }

  /** Returns false when there is no such key (or it was already revoked). */
  revokeKey(keyId: string): boolean {
    const res = this.sqlite.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(iso(this.clock()), keyId);
    return res.changes > 0;
  }

  /**
   * Looks a presented key up by its SHA-256 and compares the stored hash in constant time.
   * Returns null for anything that is not a live key.
   */
  authenticate(presented: string): AuthKey | null {
    if (!KEY_RE.test(presented)) return null;
    const digest = hashKey(presented);
    const row = this.byHash.get(digest);
    if (!row || row.revokedAt) return null;
    if (!timingSafeEqual(Buffer.from(row.keyHash, "hex"), Buffer.from(digest, "hex"))) return null;
    const now = this.clock();
    const last = this.lastTouched.get(row.keyId) ?? 0;
    if (now - last > 60_000) {
      this.lastTouched.set(row.keyId, now);
      this.touch.run(iso(now), row.keyId);
    }
    return {
      keyId: row.keyId,
      accountId: row.accountId,
      permission: row.permission,
      operator: row.operator === 1,
      account: {
        id: row.accountId,
        name: row.name,
        plan: row.plan,
        apiLimitPerHour: row.apiLimitPerHour,
        apiBurstPerMinute: row.apiBurstPerMinute,
        monthlyQuota: row.monthlyQuota,
        defaultCountry: row.defaultCountry,
        createdAt: row.createdAt,
      },
    };
  }
}
