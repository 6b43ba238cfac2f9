/**
 * SMSGate's tokens (migration 0052): the claims that decide whether a JWT still works, and the
 * account's secret that signs them (a column of smsgate_clients). Never the token itself.
 */
import type { Database } from "bun:sqlite";
import type { RawRow } from "./row";
import type { smsgateTokens } from "../schema";

type Raw = RawRow<typeof smsgateTokens>;

/** A token's claims as stored, its scopes parsed (stored as a JSON array). */
export type SmsgateTokenRow = Omit<Raw, "scopes"> & { scopes: string[] };

/** The account's signing secret; null until the account's SMSGate row has one. */
export function tokenSecret(sqlite: Database, accountId: string): string | null {
  return (sqlite.query("SELECT token_secret AS secret FROM smsgate_clients WHERE account_id = ?1").get(accountId) as { secret: string | null } | null)?.secret ?? null;
}

/** Sets the secret unless one is set already (two first requests at once keep one). */
export function setTokenSecretOnce(sqlite: Database, accountId: string, secret: string): void {
  sqlite.query("UPDATE smsgate_clients SET token_secret = ?2 WHERE account_id = ?1 AND token_secret IS NULL").run(accountId, secret);
}

export function insertToken(sqlite: Database, r: Omit<SmsgateTokenRow, "revoked_at">): void {
  sqlite
    .query(
      `INSERT INTO smsgate_tokens (jti, account_id, key_id, token_use, parent_jti, scopes, expires_at, revoked_at, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8)`,
    )
    .run(r.jti, r.account_id, r.key_id, r.token_use, r.parent_jti, JSON.stringify(r.scopes), r.expires_at, r.created_at);
}

export function findToken(sqlite: Database, jti: string): SmsgateTokenRow | null {
  const r = sqlite.query("SELECT * FROM smsgate_tokens WHERE jti = ?1").get(jti) as Raw | null;
  return r && { ...r, scopes: JSON.parse(r.scopes) as string[] };
}

export function tokenExists(sqlite: Database, accountId: string, jti: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM smsgate_tokens WHERE account_id = ?1 AND jti = ?2").get(accountId, jti) !== null;
}

/** Revokes the token and the tokens issued with it (an access token's refresh token); how many. */
export function revokeToken(sqlite: Database, accountId: string, jti: string, atIso: string): number {
  return sqlite.query("UPDATE smsgate_tokens SET revoked_at = ?3 WHERE account_id = ?1 AND (jti = ?2 OR parent_jti = ?2) AND revoked_at IS NULL").run(accountId, jti, atIso).changes;
}

export function deleteExpiredTokens(sqlite: Database, accountId: string, beforeIso: string): void {
  sqlite.query("DELETE FROM smsgate_tokens WHERE account_id = ?1 AND expires_at < ?2").run(accountId, beforeIso);
}

export function countLiveTokens(sqlite: Database, accountId: string, nowIso: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM smsgate_tokens WHERE account_id = ?1 AND revoked_at IS NULL AND expires_at >= ?2").get(accountId, nowIso) as { n: number }).n;
}
