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

export function smsgateTokenStore(sqlite: Database) {
  const q = sqlite.query.bind(sqlite);
  const s = {
    secret: q("SELECT token_secret AS secret FROM smsgate_clients WHERE account_id = ?1"),
    setSecret: q("UPDATE smsgate_clients SET token_secret = ?2 WHERE account_id = ?1 AND token_secret IS NULL"),
    insert: q(
      `INSERT INTO smsgate_tokens (jti, account_id, key_id, token_use, parent_jti, scopes, expires_at, revoked_at, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8)`,
    ),
    find: q("SELECT * FROM smsgate_tokens WHERE jti = ?1"),
    revoke: q("UPDATE smsgate_tokens SET revoked_at = ?3 WHERE account_id = ?1 AND (jti = ?2 OR parent_jti = ?2) AND revoked_at IS NULL"),
    exists: q("SELECT 1 AS x FROM smsgate_tokens WHERE account_id = ?1 AND jti = ?2"),
    deleteExpired: q("DELETE FROM smsgate_tokens WHERE account_id = ?1 AND expires_at < ?2"),
    countLive: q("SELECT count(*) AS n FROM smsgate_tokens WHERE account_id = ?1 AND revoked_at IS NULL AND expires_at >= ?2"),
  };
  return {
    /** The account's signing secret; null until the account's SMSGate row has one. */
    secret: (accountId: string) => (s.secret.get(accountId) as { secret: string | null } | null)?.secret ?? null,
    /** Sets the secret unless one is set already (two first requests at once keep one). */
    setSecretOnce: (accountId: string, secret: string) => void s.setSecret.run(accountId, secret),
    insert: (r: Omit<SmsgateTokenRow, "revoked_at">) =>
      void s.insert.run(r.jti, r.account_id, r.key_id, r.token_use, r.parent_jti, JSON.stringify(r.scopes), r.expires_at, r.created_at),
    find: (jti: string): SmsgateTokenRow | null => {
      const r = s.find.get(jti) as Raw | null;
      return r && { ...r, scopes: JSON.parse(r.scopes) as string[] };
    },
    exists: (accountId: string, jti: string) => s.exists.get(accountId, jti) !== null,
    /** Revokes the token and the tokens issued with it (an access token's refresh token). */
    revoke: (accountId: string, jti: string, atIso: string) => s.revoke.run(accountId, jti, atIso).changes,
    deleteExpired: (accountId: string, beforeIso: string) => void s.deleteExpired.run(accountId, beforeIso),
    countLive: (accountId: string, nowIso: string) => (s.countLive.get(accountId, nowIso) as { n: number }).n,
  };
}

export type SmsgateTokenStore = ReturnType<typeof smsgateTokenStore>;
