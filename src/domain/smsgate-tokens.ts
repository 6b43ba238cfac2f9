/**
 * SMSGate's access tokens (POST /3rdparty/v1/auth/token): HS256 JWTs signed with the account's
 * own secret, their scopes, and which scope each SMSGate call needs (android-sms-gateway/server
 * `handlers/*\/permissions.go`, client-go `domain_auth.go`). Pure: the clock and the secret are
 * arguments (docs/api-decisions.md, "The SMSGate ecosystem, every call").
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** SMSGate's scopes. `all:any` stands for every one except tokens:refresh, which only a refresh token holds. */
export const SMSGATE_SCOPES = [
  "all:any",
  "devices:list",
  "devices:delete",
  "inbox:list",
  "inbox:refresh",
  "logs:read",
  "messages:send",
  "messages:read",
  "messages:list",
  "messages:cancel",
  "messages:export",
  "settings:read",
  "settings:write",
  "tokens:manage",
  "webhooks:list",
  "webhooks:write",
  "webhooks:delete",
] as const;
export const REFRESH_SCOPE = "tokens:refresh";
export const ALL_SCOPE = "all:any";

/** SMSGate's default access lifetime (its server's jwt.access_ttl), used when the request gives none. */
export const ACCESS_TTL_DEFAULT_SECONDS = 15 * 60;
/** The longest an access token lives: a longer ttl is shortened to it, as SMSGate's server does. */
export const ACCESS_TTL_MAX_SECONDS = 60 * 60;
/** SMSGate's refresh lifetime (its server's jwt.refresh_ttl). */
export const REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60;
/** The token's issuer claim. */
export const TOKEN_ISSUER = "textwire";

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");
const HEADER = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

export interface TokenClaims {
  /** The token's id (SMSGate's jti, 21 characters). */
  jti: string;
  /** The account id. */
  sub: string;
  iss: string;
  /** Seconds since the epoch. */
  iat: number;
  exp: number;
  scopes: string[];
}

export function signToken(claims: TokenClaims, secret: string): string {
  const body = `${HEADER}.${b64url(JSON.stringify(claims))}`;
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`;
}

/** Whether a presented credential is shaped like a JWT (three base64url parts, a JSON header). */
export function looksLikeJwt(presented: string): boolean {
  return presented.length <= 4096 && /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(presented);
}

/** The claims, unverified (to find the account whose secret verifies it); null when unreadable. */
export function readClaims(token: string): TokenClaims | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8"));
    if (header?.alg !== "HS256") return null;
    const c = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    if (!c || typeof c !== "object" || typeof c.jti !== "string" || typeof c.sub !== "string" || typeof c.iss !== "string") return null;
    if (!Number.isInteger(c.iat) || !Number.isInteger(c.exp) || !Array.isArray(c.scopes) || !c.scopes.every((s: unknown) => typeof s === "string")) return null;
    return { jti: c.jti, sub: c.sub, iss: c.iss, iat: c.iat, exp: c.exp, scopes: c.scopes };
  } catch {
    return null;
  }
}

/** The claims of a token signed with `secret`, issued here and not expired at `nowMs`; null otherwise. */
export function verifyToken(token: string, secret: string, nowMs: number): TokenClaims | null {
  const claims = readClaims(token);
  if (!claims || claims.iss !== TOKEN_ISSUER) return null;
  const dot = token.lastIndexOf(".");
  const expected = createHmac("sha256", secret).update(token.slice(0, dot)).digest();
  const given = Buffer.from(token.slice(dot + 1), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const now = Math.floor(nowMs / 1000);
  if (claims.exp <= now || claims.iat > now + 60) return null;
  return claims;
}

/** The body's problems, or the scopes and the lifetime in seconds. */
export function parseTokenRequest(body: unknown): { ok: true; scopes: string[]; ttl: number } | { ok: false; errors: Array<{ field: string; message: string; requirement: string; provided: unknown }> } {
  const b = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  if (!b) return { ok: false, errors: [{ field: "body", message: "The body must be a JSON object {scopes, ttl?}", requirement: "a JSON object", provided: null }] };
  const errors: Array<{ field: string; message: string; requirement: string; provided: unknown }> = [];
  const known = SMSGATE_SCOPES as readonly string[];
  const scopes = b.scopes;
  if (!Array.isArray(scopes) || scopes.length === 0 || scopes.length > known.length) {
    errors.push({ field: "scopes", message: `scopes must list 1 to ${known.length} of: ${known.join(", ")}`, requirement: known.join(" | "), provided: Array.isArray(scopes) ? `${scopes.length} scopes` : (scopes ?? null) });
  } else {
    scopes.forEach((s, i) => {
      if (typeof s !== "string" || !known.includes(s)) errors.push({ field: `scopes[${i}]`, message: `scopes[${i}] must be one of ${known.join(", ")}`, requirement: known.join(" | "), provided: typeof s === "string" ? s.slice(0, 60) : s });
    });
  }
  let ttl = ACCESS_TTL_DEFAULT_SECONDS;
  if (b.ttl !== undefined && b.ttl !== null && b.ttl !== 0) {
    if (!Number.isInteger(b.ttl) || (b.ttl as number) < 1 || (b.ttl as number) > 2 ** 53) {
      errors.push({ field: "ttl", message: `ttl must be a whole number of seconds (at most ${ACCESS_TTL_MAX_SECONDS} are given)`, requirement: "integer ≥ 1", provided: b.ttl });
    } else ttl = Math.min(b.ttl as number, ACCESS_TTL_MAX_SECONDS);
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, scopes: [...new Set(scopes as string[])], ttl };
}

/** Which scope an SMSGate call needs (path below /3rdparty/v1); null for a call no token may make. */
const CALLS: Array<[method: string, path: RegExp, scope: string]> = [
  ["POST", /^\/auth\/token\/refresh$/, REFRESH_SCOPE],
  ["POST", /^\/auth\/token$/, "tokens:manage"],
  ["DELETE", /^\/auth\/token\/[^/]+$/, "tokens:manage"],
  ["POST", /^\/messages\/inbox\/export$/, "messages:export"],
  ["POST", /^\/inbox\/export$/, "messages:export"],
  ["POST", /^\/messages?$/, "messages:send"],
  ["GET", /^\/messages?$/, "messages:list"],
  ["GET", /^\/messages?\/[^/]+$/, "messages:read"],
  ["DELETE", /^\/messages?\/[^/]+$/, "messages:cancel"],
  ["GET", /^\/inbox$/, "inbox:list"],
  ["POST", /^\/inbox\/refresh$/, "inbox:refresh"],
  ["GET", /^\/devices$/, "devices:list"],
  ["DELETE", /^\/devices\/[^/]+$/, "devices:delete"],
  ["GET", /^\/health\/phones$/, "devices:list"],
  ["GET", /^\/logs$/, "logs:read"],
  ["GET", /^\/settings$/, "settings:read"],
  ["PUT", /^\/settings$/, "settings:write"],
  ["PATCH", /^\/settings$/, "settings:write"],
  ["GET", /^\/webhooks$/, "webhooks:list"],
  ["POST", /^\/webhooks$/, "webhooks:write"],
  ["DELETE", /^\/webhooks\/[^/]+$/, "webhooks:delete"],
];

export function scopeFor(method: string, subPath: string): string | null {
  const path = subPath.replace(/\/+$/, "");
  for (const [m, re, scope] of CALLS) if (m === method && re.test(path)) return scope;
  return null;
}

/** Whether a token's scopes allow a call: all:any covers all but the refresh scope, which must be held exactly. */
export function scopeAllows(held: readonly string[], needed: string): boolean {
  return held.includes(needed) || (needed !== REFRESH_SCOPE && held.includes(ALL_SCOPE));
}
