import { timingSafeEqual } from "node:crypto";
import type { AppDeps } from "../deps";
import { AppError } from "../errors";
import { KEY_FORMAT, burstLimit, hourlyLimit, type AuthKey } from "../services/accounts";
import { sessionCookie } from "../services/sessions";
import { rateLimitHeaders } from "../limits/api-limiter";
import { redactKeys } from "../lib/log";
import { describeProvided, THIRDPARTY_PREFIX, type CredentialLookup } from "./access";
import { looksLikeJwt, scopeAllows, scopeFor } from "../domain/smsgate-tokens";
import { AuthFailureLimiter } from "./request-guard";
import { REFUSED_GUESS_DELAY_MS, REFUSED_GUESSES_HELD_MAX, Tarpit } from "../limits/tarpit";
import type { RequestState } from "./context";
import { KEY_PERMISSIONS, ROLE_PERMISSIONS, rolesHolding, type KeyPermission, type RouteAccess } from "./permissions";

/**
 * Authentication, rate limits and permissions of a request whose route asks for a key, run by the
 * outer handler once it has matched the route and before any body is read: who calls (a key, or a
 * dashboard session with its CSRF token), the limiter the route declares, then the permission it
 * declares (docs/api-decisions.md, "Permissions declared on each route").
 */
export function createAuthorizer(deps: AppDeps) {
  const authFailures = new AuthFailureLimiter(deps.config.authFailuresPerMinute, deps.clock);
  // Refused sign-ins are answered after a pause (src/limits/tarpit.ts).
  const refusedSignIns = new Tarpit(REFUSED_GUESS_DELAY_MS, REFUSED_GUESSES_HELD_MAX);

  /** Who calls: the session when the browser sent its cookie and no key, else the key. */
  function authenticate(req: Request, state: RequestState, cred: CredentialLookup, sessionToken: string | null): AuthKey {
    if (cred.presented === null && sessionToken !== null) {
      const secure = state.origin.startsWith("https:");
      const live = deps.sessions.authenticate(sessionToken);
      if (!live) {
        state.headers["Set-Cookie"] = sessionCookie(null, secure);
        throw new AppError("AUTHENTICATION_ERROR", {
          message: "Your dashboard session has ended: sign in again",
          details: { provided: "session cookie", expected: `a live dashboard session, or ${KEY_FORMAT}` },
        });
      }
      // A session is a cookie the browser sends by itself: a change must prove it comes from the app.
      if (!SAFE_METHODS.has(req.method) && !deps.sessions.csrfMatches(live.row, req.headers.get("x-csrf-token"))) {
        throw new AppError("CSRF_TOKEN_INVALID", { details: { header: "X-CSRF-Token", provided: req.headers.has("x-csrf-token") ? "a wrong token" : "none" } });
      }
      if (live.refreshed) state.headers["Set-Cookie"] = sessionCookie(sessionToken, secure);
      state.session = live.row;
      return live.auth;
    }
    if (cred.presented) authFailures.check(state.clientIp);
    // On SMSGate's API a Bearer credential may be one of its JWTs, acting for the key that asked for it.
    const auth = !cred.presented ? null : cred.smsgateToken && looksLikeJwt(cred.presented) ? deps.smsgateTokens.authenticate(cred.presented) : deps.accounts.authenticate(cred.presented);
    // SMSGate's Basic auth: the login must be the key's own account id, so a key never acts under
    // another account's name (docs/api-decisions.md, "SMSGate third-party API").
    if (auth && cred.login !== undefined && !sameText(cred.login, auth.accountId)) {
      authFailures.fail(state.clientIp);
      throw new AppError("AUTHENTICATION_ERROR", {
        message: "The login must be your account id and the password an API key of that account (Settings → Developers → SMSGate clients)",
        details: { provided: "a login that is not this key's account id", expected: "login = account id, password = API key" },
      });
    }
    if (!auth) {
      if (cred.presented) authFailures.fail(state.clientIp);
      throw new AppError("AUTHENTICATION_ERROR", {
        message: cred.login !== undefined
          ? "Wrong login or password: the login is your account id and the password an API key of that account (Settings → Developers → SMSGate clients)"
          : cred.smsgateToken && cred.presented && looksLikeJwt(cred.presented)
            ? "This token is invalid, expired or revoked: ask for a new one (POST /3rdparty/v1/auth/token)"
            : cred.presented ? "Invalid API key" : "Missing API key",
        details: { provided: describeProvided(cred.presented), expected: KEY_FORMAT },
      });
    }
    return auth;
  }

  /** Counts the request against the limiter the route declares; throws 429 when it is refused. */
  function countRate(req: Request, state: RequestState, route: RouteAccess, auth: AuthKey): void {
    if (route.rateLimit === "device" || route.rateLimit === "device-report") {
      // A phone polling with a key counts against its own limiter, never the key's hourly API
      // limit; a report is counted but never refused.
      const device = deps.deviceRegistry.recipe(auth.accountId, req.headers.get("x-device-id"), req.headers.get("x-device-name"), state.clientIp, req.headers.get("user-agent"));
      const drl = deps.devices.limit(device?.id ?? `key:${auth.keyId}`);
      if (!drl.allowed && route.rateLimit === "device") {
        const retryAfter = Math.ceil(drl.retryAfterMs / 1000);
        throw new AppError("RATE_LIMIT_EXCEEDED", {
          message: `Device rate limit exceeded; retry in ${retryAfter} seconds`,
          details: { limit: drl.limit, window: "1 minute", retryAfter },
          extra: { retryAfter },
          headers: { "Retry-After": String(retryAfter) },
        });
      }
      return;
    }
    if (state.session) {
      // A person in the dashboard: their session's own limiter, not the key's API limit
      // (docs/api-decisions.md, "The dashboard never locks itself out; honest status").
      const sl = deps.sessionLimiter.check(state.session.id);
      Object.assign(state.headers, rateLimitHeaders(sl));
      if (!sl.allowed) {
        throw new AppError("RATE_LIMIT_EXCEEDED", {
          message: `Too many requests from this dashboard session; retry in ${sl.retryAfterSeconds} seconds`,
          details: { limit: sl.limit, window: "1 minute", retryAfter: sl.retryAfterSeconds },
          extra: { retryAfter: sl.retryAfterSeconds },
        });
      }
      return;
    }
    const rl = deps.apiLimiter.check(auth.keyId, { hourly: hourlyLimit(auth.account), burst: burstLimit(auth.account) });
    Object.assign(state.headers, rateLimitHeaders(rl));
    if (!rl.allowed) {
      throw new AppError("RATE_LIMIT_EXCEEDED", {
        message: `API rate limit exceeded; retry in ${rl.retryAfterSeconds} seconds`,
        details: { limit: rl.window === "1 minute" ? rl.burstLimit : rl.limit, window: rl.window, retryAfter: rl.retryAfterSeconds },
        extra: { retryAfter: rl.retryAfterSeconds },
      });
    }
  }

  return {
    /**
     * A request to a route that takes a key: sets `state.auth`, or throws the 401, 403, 429 or CSRF
     * refusal. `path` is the routed path (a messages key segment removed): the 403 names it.
     */
    authorize(req: Request, state: RequestState, route: RouteAccess, cred: CredentialLookup, sessionToken: string | null, path: string): void {
      const auth = authenticate(req, state, cred, sessionToken);
      state.auth = auth;
      countRate(req, state, route, auth);
      checkPermission(route, auth, req.method, path);
      if (auth.token) checkScope(auth.token.scopes, req.method, path);
    },
    /** Before a sign-in is read: 429 (after a pause) while this address has used up its failed attempts. */
    async signInAllowed(ip: string): Promise<void> {
      try {
        authFailures.check(ip);
      } catch (err) {
        await refusedSignIns.hold();
        throw err;
      }
    },
    /** A sign-in the app refused (401) counts as a failed attempt of this address. */
    signInRefused(ip: string): void {
      authFailures.fail(ip);
    },
  };
}

export type Authorizer = ReturnType<typeof createAuthorizer>;

/**
 * Today's key kinds: an operator key for server-wide routes, an admin key for admin_access ones,
 * any key for the rest. (Roles will be checked here too, from the same permission names.)
 */
export function checkPermission(route: RouteAccess, auth: AuthKey, method: string, path: string): void {
  if (auth.user) return checkRole(route, auth, method, path);
  if (route.key === "operator" && !auth.operator) {
    const endpoint = endpointName(method, path);
    throw new AppError("PERMISSION_ERROR", {
      message: `${endpoint} needs a server operator key: it covers every account on this server. Create one with: textwire keys create --account ID --operator`,
      details: { endpoint, required: "operator", current: auth.permission },
    });
  }
  if (route.key === "admin_access" && auth.permission !== "admin_access") {
    const endpoint = endpointName(method, path);
    throw new AppError("PERMISSION_ERROR", {
      message: `${endpoint} requires an admin key`,
      details: { endpoint, required: "admin_access", current: auth.permission },
    });
  }
}

/**
 * Whether the caller holds a permission beyond the one its route declared (a route that shows or
 * takes a secret only to some of its callers): the same rules as checkPermission.
 */
export function holdsPermission(auth: AuthKey, p: KeyPermission): boolean {
  if (auth.user) return ROLE_PERMISSIONS[auth.user.role].has(p) && (p !== "operator" || auth.operator);
  const level = KEY_PERMISSIONS[p];
  return level === "operator" ? auth.operator : level !== "admin_access" || auth.permission === "admin_access";
}

/** A person's session: their role must hold the route's permission (operator: an owner of the first account). */
function checkRole(route: RouteAccess, auth: AuthKey, method: string, path: string): void {
  const role = auth.user!.role;
  const p = route.permission as KeyPermission;
  if (route.key === null || (ROLE_PERMISSIONS[role].has(p) && (p !== "operator" || auth.operator))) return;
  const endpoint = endpointName(method, path);
  const allowed = rolesHolding(p);
  throw new AppError("PERMISSION_ERROR", {
    message: p === "operator" ? "Only an owner of this server's first account can do this" : `Your role (${role}) cannot do this: ${whoMay(allowed)}`,
    details: { endpoint, required: p, role, allowedRoles: allowed },
  });
}

/** "only an owner can", "an owner or an admin can" (docs/api-decisions.md, "The owner hears back: each role sees what it can do"). */
function whoMay(roles: readonly string[]): string {
  const names = roles.map((r) => (r === "owner" || r === "admin" ? "an " : "a ") + r);
  if (names.length === 1) return `only ${names[0]} of the account can`;
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]} of the account can`;
}

/**
 * Every permission the caller holds, by name: the dashboard shows only the actions these allow
 * (GET /v1/session's `can`), from the same rules as checkPermission.
 */
export function permissionsHeld(auth: AuthKey): KeyPermission[] {
  return (Object.keys(KEY_PERMISSIONS) as KeyPermission[]).filter((p) => holdsPermission(auth, p));
}

/** The endpoint a 403 names: the real method and path, without the /v1 prefix ("POST /forms", as the spec names them). */
export function endpointName(method: string, path: string): string {
  return `${method} ${redactKeys(path).replace(/^\/v1(?=\/)/, "").replace(/\/+$/, "").slice(0, 200) || "/"}`;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** An SMSGate token may make only the calls its scopes name (403 "scope required", as SMSGate answers). */
function checkScope(scopes: readonly string[], method: string, path: string): void {
  const sub = path.startsWith(THIRDPARTY_PREFIX) ? path.slice(THIRDPARTY_PREFIX.length) : path;
  const needed = scopeFor(method === "HEAD" ? "GET" : method, sub);
  if (needed !== null && scopeAllows(scopes, needed)) return;
  throw new AppError("PERMISSION_ERROR", {
    message: needed ? `scope required: ${needed}` : "This call cannot be made with a token: use an API key",
    details: { endpoint: endpointName(method, path), required: needed ?? "an API key" },
  });
}

/** Equal texts, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
