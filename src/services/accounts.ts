import { createHash, timingSafeEqual } from "node:crypto";
import type { Database } from "bun:sqlite";
import { newId } from "../lib/ids";
import {
  accountFootprint,
  countAccounts,
  deleteAccount,
  findAccount,
  findKeyByHash,
  findKeyById,
  insertAccount,
  insertApiKey,
  listAccounts,
  listApiKeys,
  revokeApiKey,
  touchApiKey,
  updateAccount,
} from "../db/stores/accounts";
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

export class AccountService {
  /** lastUsedAt is written at most once a minute per key: no write on every request. */
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly sqlite: Database, private readonly clock: Clock) {}

  countAccounts(): number {
    return countAccounts(this.sqlite);
  }

  createAccount(input: {
    name: string;
    plan?: Plan;
    apiLimitPerHour?: number | null;
    apiBurstPerMinute?: number | null;
    monthlyQuota?: number | null;
    /** The first key is an operator key (the installer's, on first start). */
    operator?: boolean;
    /** false: the name is a placeholder no customer sees until a person sets one (a first start's). */
    nameSet?: boolean;
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
      insertAccount(this.sqlite, account, input.nameSet ?? true);
      const key = this.createKey(account.id, "admin_access", input.operator ?? false);
      return { account, ...key };
    })();
  }

  /** An account with no API key: one set up in the browser, whose owner signs in with a password. */
  createAccountWithoutKey(name: string): Account {
    const account: Account = { id: newId(), name, plan: "standard", apiLimitPerHour: null, apiBurstPerMinute: null, monthlyQuota: null, defaultCountry: null, createdAt: iso(this.clock()) };
    insertAccount(this.sqlite, account);
    return account;
  }

  listAccounts(): Array<Account & { keys: number }> {
    return listAccounts(this.sqlite);
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
      timeZone?: string | null;
    },
  ): Account | null {
    updateAccount(this.sqlite, id, patch);
    return this.findAccount(id);
  }

  /** What deleting an account removes, for the CLI to say before it does. */
  accountFootprint(id: string): { forms: number; contacts: number; messages: number; activeKeys: number } {
    return accountFootprint(this.sqlite, id);
  }

  /**
   * Deletes an account and everything it owns, in one transaction: its keys, forms, submissions,
   * contacts and messages go with it (foreign keys cascade); the per-account counters that have no
   * foreign key are removed by hand. Returns false when there is no such account.
   */
  deleteAccount(id: string): boolean {
    return this.sqlite.transaction(() => {
      if (!this.findAccount(id)) return false;
      deleteAccount(this.sqlite, id);
      return true;
    })();
  }

  findAccount(id: string): Account | null {
    return findAccount(this.sqlite, id);
  }

  /** An operator key is always an admin key of its account as well. */
  createKey(accountId: string, permission: Permission, operator = false): { keyId: string; apiKey: string; permission: Permission; operator: boolean } {
    if (!this.findAccount(accountId)) throw new Error(`no account with id ${accountId}`);
    const apiKey = generateApiKey();
    const keyId = newId();
    const granted: Permission = operator ? "admin_access" : permission;
    insertApiKey(this.sqlite, { id: keyId, accountId, keyHash: hashKey(apiKey), last4: apiKey.slice(-4), permission: granted, operator, createdAt: iso(this.clock()) });
    return { keyId, apiKey, permission: granted, operator };
  }

  listKeys(accountId: string): Array<{ keyId: string; key: string; permission: Permission; operator: boolean; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }> {
    return listApiKeys(this.sqlite, accountId).map(({ last4, ...r }) => ({ ...r, key: `${KEY_PREFIX}…${last4}` }));
  }

  /** Returns false when there is no such key (or it was already revoked). */
  revokeKey(keyId: string): boolean {
    return revokeApiKey(this.sqlite, keyId, iso(this.clock()));
  }

  /**
   * Looks a presented key up by its SHA-256 and compares the stored hash in constant time.
   * Returns null for anything that is not a live key.
   */
  authenticate(presented: string): AuthKey | null {
    if (!KEY_RE.test(presented)) return null;
    const digest = hashKey(presented);
    const row = findKeyByHash(this.sqlite, digest);
    if (!row || row.revokedAt) return null;
    if (!timingSafeEqual(Buffer.from(row.keyHash, "hex"), Buffer.from(digest, "hex"))) return null;
    const now = this.clock();
    const last = this.lastTouched.get(row.keyId) ?? 0;
    if (now - last > 60_000) {
      this.lastTouched.set(row.keyId, now);
      touchApiKey(this.sqlite, row.keyId, iso(now));
    }
    return authKeyFrom(row);
  }

  /** The live key with this id, as authenticate answers it; null when revoked or unknown (an SMSGate token dies with its key). */
  authKeyOf(keyId: string): AuthKey | null {
    const row = findKeyById(this.sqlite, keyId);
    return row && !row.revokedAt ? authKeyFrom(row) : null;
  }
}

function authKeyFrom(row: NonNullable<ReturnType<typeof findKeyById>>): AuthKey {
  return {
    keyId: row.keyId,
    accountId: row.accountId,
    permission: row.permission,
    operator: row.operator,
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
