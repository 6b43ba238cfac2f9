/**
 * SMSGate's access tokens (POST /3rdparty/v1/auth/token, /auth/token/refresh, DELETE
 * /auth/token/{jti}): short-lived HS256 JWTs signed with the account's own secret (kept in clear in
 * smsgate_clients, as the webhook signing key is: it must be at hand to verify), each acting for
 * the key that asked for it with the scopes it was given, revocable by its jti; a refresh token
 * (30 days) is exchanged once for a new pair (docs/api-decisions.md, "The SMSGate ecosystem, every
 * call").
 */
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import type { AuthKey } from "../domain/permissions";
import {
  ACCESS_TTL_DEFAULT_SECONDS,
  looksLikeJwt,
  parseTokenRequest,
  readClaims,
  REFRESH_SCOPE,
  REFRESH_TTL_SECONDS,
  signToken,
  TOKEN_ISSUER,
  verifyToken,
} from "../domain/smsgate-tokens";
import { countLiveTokens, deleteExpiredTokens, findToken, insertToken, revokeToken, setTokenSecretOnce, tokenExists, tokenSecret } from "../db/stores/smsgate-tokens";
import type { AccountService } from "./accounts";
import type { ThirdPartyMessages } from "./thirdparty-messages";

/** Live (unexpired, unrevoked) tokens an account may hold at once. */
export const MAX_LIVE_TOKENS_PER_ACCOUNT = 1_000;

/** SMSGate's TokenResponse (its description: snake_case), with client-py's camelCase spellings too. */
export interface TokenAnswer {
  id: string;
  token_type: "Bearer";
  access_token: string;
  refresh_token: string;
  expires_at: string;
  tokenType: "Bearer";
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

const newJti = () => randomBytes(16).toString("base64url").slice(0, 21);

export class SmsgateTokens {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly accounts: Pick<AccountService, "authKeyOf">,
    /** Makes the account's SMSGate row (its signing key) on first use. */
    private readonly clients: Pick<ThirdPartyMessages, "signingKey">,
  ) {}

  /** POST /auth/token: a pair for the calling key (or the key behind the calling token). */
  issue(auth: AuthKey, body: unknown): TokenAnswer {
    const r = parseTokenRequest(body);
    if (!r.ok) throw validationError(r.errors);
    return this.sqlite.transaction(() => this.pair(auth.accountId, auth.keyId, r.scopes, r.ttl, null))();
  }

  /**
   * POST /auth/token/refresh with the refresh token as Bearer (the outer handler has verified it
   * and its tokens:refresh scope): the refresh token is spent and a new pair made; presenting a
   * spent one again is a 401 (SMSGate's replay refusal).
   */
  refresh(auth: AuthKey, presented: string): TokenAnswer {
    const jti = auth.token?.jti;
    const now = this.clock();
    return this.sqlite.transaction(() => {
      const row = jti ? findToken(this.sqlite, jti) : null;
      if (!row || row.token_use !== "refresh" || row.account_id !== auth.accountId || row.revoked_at !== null || readClaims(presented)?.jti !== jti) {
        throw new AppError("AUTHENTICATION_ERROR", { message: "This refresh token was already used or revoked: ask for a new token with POST /auth/token" });
      }
      revokeToken(this.sqlite, auth.accountId, row.jti, iso(now));
      return this.pair(auth.accountId, row.key_id, row.scopes, null, row.jti);
    })();
  }

  /** DELETE /auth/token/{jti}: the token and its refresh token stop working; 404 for none of this account's. */
  revoke(accountId: string, jti: string): void {
    if (jti.length > 64 || !tokenExists(this.sqlite, accountId, jti)) {
      throw new AppError("NOT_FOUND", { message: "No token of this account has that id", details: { jti: jti.slice(0, 64) } });
    }
    revokeToken(this.sqlite, accountId, jti, iso(this.clock()));
  }

  /**
   * The key a presented JWT acts for, with the token's scopes; null for anything that is not a
   * live token of a live key: a bad signature, expired, revoked, or its key revoked.
   */
  authenticate(presented: string): AuthKey | null {
    if (!looksLikeJwt(presented)) return null;
    const claims = readClaims(presented);
    if (!claims) return null;
    const secret = tokenSecret(this.sqlite, claims.sub);
    const row = secret ? findToken(this.sqlite, claims.jti) : null;
    if (!secret || !row || row.account_id !== claims.sub || row.revoked_at !== null) return null;
    if (!verifyToken(presented, secret, this.clock())) return null;
    const key = this.accounts.authKeyOf(row.key_id);
    if (!key || key.accountId !== row.account_id) return null;
    const scopes = row.token_use === "refresh" ? [REFRESH_SCOPE] : (row.scopes);
    return { ...key, token: { jti: row.jti, scopes } };
  }

  private secretOf(accountId: string): string {
    this.clients.signingKey(accountId);
    let secret = tokenSecret(this.sqlite, accountId);
    if (!secret) {
      setTokenSecretOnce(this.sqlite, accountId, randomBytes(32).toString("base64url"));
      secret = tokenSecret(this.sqlite, accountId)!;
    }
    return secret;
  }

  /** Inside the caller's transaction. `ttl` null: the longest an access token lives (a refresh). */
  private pair(accountId: string, keyId: string, scopes: string[], ttl: number | null, parent: string | null): TokenAnswer {
    const now = this.clock();
    const nowIso = iso(now);
    deleteExpiredTokens(this.sqlite, accountId, nowIso);
    if (countLiveTokens(this.sqlite, accountId, nowIso) + 2 > MAX_LIVE_TOKENS_PER_ACCOUNT) {
      throw new AppError("INVALID_STATE", {
        message: `An account can hold at most ${MAX_LIVE_TOKENS_PER_ACCOUNT} live tokens: revoke some (DELETE /auth/token/{jti}) or let them expire`,
        details: { limit: MAX_LIVE_TOKENS_PER_ACCOUNT },
      });
    }
    const secret = this.secretOf(accountId);
    const iat = Math.floor(now / 1000);
    // A refreshed pair's access token lives SMSGate's default (its server's access_ttl).
    const accessExp = iat + (ttl ?? ACCESS_TTL_DEFAULT_SECONDS);
    const refreshExp = iat + REFRESH_TTL_SECONDS;
    const access = { jti: newJti(), sub: accountId, iss: TOKEN_ISSUER, iat, exp: accessExp, scopes };
    const refresh = { jti: newJti(), sub: accountId, iss: TOKEN_ISSUER, iat, exp: refreshExp, scopes: [REFRESH_SCOPE] };
    insertToken(this.sqlite, { jti: access.jti, account_id: accountId, key_id: keyId, token_use: "access", parent_jti: parent, scopes, expires_at: iso(accessExp * 1000), created_at: nowIso });
    // Revoking the access token (its jti) revokes this refresh token too.
    insertToken(this.sqlite, { jti: refresh.jti, account_id: accountId, key_id: keyId, token_use: "refresh", parent_jti: access.jti, scopes, expires_at: iso(refreshExp * 1000), created_at: nowIso });
    const accessToken = signToken(access, secret);
    const refreshToken = signToken(refresh, secret);
    const expiresAt = iso(accessExp * 1000);
    return {
      id: access.jti,
      token_type: "Bearer",
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_at: expiresAt,
      tokenType: "Bearer",
      accessToken,
      refreshToken,
      expiresAt,
    };
  }
}
