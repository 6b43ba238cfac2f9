import { KEY_PREFIX } from "../services/accounts";
import { redactKeys } from "../lib/log";
import { safeDecode } from "./request-guard";

/**
 * The path families the outer handler tells apart before it has matched a route (body limits,
 * CORS, the read barrier, where the key is). What each route needs is declared on the route
 * itself (permissions.ts; docs/api-decisions.md, "Permissions declared on each route").
 */
export type RouteKind = "webhook" | "api" | "messages" | "thirdparty" | "public";

/** SMSGate's third-party API, served for its clients (docs/api-decisions.md, "SMSGate third-party API"). */
export const THIRDPARTY_PREFIX = "/3rdparty/v1";
/** SMSGate's health check: no key, and not behind the read barrier (routes/thirdparty/health.ts). */
export const THIRDPARTY_HEALTH_PATH = THIRDPARTY_PREFIX + "/health";

const WEBHOOK_RE = /^\/v1\/forms\/[^/]+\/webhook\/?$/;

export function classify(path: string): RouteKind {
  if (WEBHOOK_RE.test(path)) return "webhook";
  if (path === "/v1/messages" || path.startsWith("/v1/messages/")) return "messages";
  if (path === THIRDPARTY_PREFIX || path.startsWith(THIRDPARTY_PREFIX + "/")) return "thirdparty";
  if (path.startsWith("/v1/") && !path.startsWith("/v1/openapi") && !path.startsWith("/v1/docs")) return "api";
  if (path === "/metrics") return "api";
  return "public";
}

export interface CredentialLookup {
  /** The key as presented, or null when none was. */
  presented: string | null;
  /** For messages routes with the key in the path: the path with the key segment removed. */
  rewrittenPath?: string;
  /**
   * SMSGate's Basic auth: the login (the account id) that must name the key's own account;
   * undefined when the key came as a Bearer token or in the path.
   */
  login?: string;
  /** On SMSGate's API, a Bearer credential may be one of its JWTs (services/smsgate-tokens.ts). */
  smsgateToken?: boolean;
}

/**
 * Messages routes take the key as a path segment (spec) or as a Bearer header.
 * A first segment starting with txwire_sk_ is always a key; without a Bearer header the first
 * segment is read as the key, whatever it looks like.
 */
export function findCredential(kind: RouteKind, path: string, authorization: string | null, sessionCookie = false): CredentialLookup {
  if (kind === "thirdparty") {
    const basic = parseBasic(authorization);
    if (basic) return { presented: basic.password, login: basic.login };
    return { presented: parseBearer(authorization), smsgateToken: true };
  }
  const bearer = parseBearer(authorization);
  if (kind !== "messages") return { presented: bearer };
  const rest = path.slice("/v1/messages".length); // "" or "/seg/..."
  const segs = rest.split("/").filter(Boolean);
  // Decoded once: a key with a percent-encoded character is the same key (and is redacted as one).
  const first = segs[0] === undefined ? undefined : safeDecode(segs[0]) ?? segs[0];
  // A signed-in dashboard sends no key: then only a txwire_sk_ segment is one.
  if (first !== undefined && (first.startsWith(KEY_PREFIX) || (bearer === null && !sessionCookie))) {
    return { presented: first, rewrittenPath: "/v1/messages" + (segs.length > 1 ? "/" + segs.slice(1).join("/") : "") };
  }
  return { presented: bearer };
}

export function parseBearer(h: string | null): string | null {
  if (!h) return null;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return m ? m[1].trim() : h.trim();
}

/**
 * `Basic base64(login:password)` as SMSGate's clients send it; null for any other scheme. A
 * header that says Basic but does not decode to login:password gives an empty password, which no
 * key matches (a 401, never a 500).
 */
export function parseBasic(h: string | null): { login: string; password: string } | null {
  if (!h) return null;
  const m = /^Basic\s+(\S*)\s*$/i.exec(h.trim());
  if (!m) return null;
  let decoded: string;
  try {
    decoded = Buffer.from(m[1], "base64").toString("utf8");
  } catch {
    return { login: "", password: "" };
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return { login: decoded, password: "" };
  return { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What a 401 may say of the presented value: never the whole of it. */
export function describeProvided(presented: string | null): string {
  if (presented === null || presented === "") return "none";
  return presented.slice(0, 10) + "…";
}

/**
 * Access-log form of a path: every key redacted to txwire_sk_…abcd, and form ids (the webhook's
 * credential) cut to their first 8 characters, enough to tell forms apart in a log.
 */
export const redactPath = (path: string): string => {
  if (!WEBHOOK_ID_PATH.test(path)) return redactPathOnce(path);
  // A form's address is posted to again and again: its log form is kept (no key can be in it).
  let logged = webhookLogPaths.get(path);
  if (logged === undefined) {
    logged = redactPathOnce(path);
    if (webhookLogPaths.size >= WEBHOOK_LOG_PATHS_MAX) webhookLogPaths.clear();
    webhookLogPaths.set(path, logged);
  }
  return logged;
};

const redactPathOnce = (path: string): string =>
  redactKeys(path.includes("%") ? safeDecode(path) ?? path : path).replace(/(\/forms\/)([0-9a-fA-F]{8})[0-9a-fA-F-]{28}(?=\/|$)/g, "$1$2…");
/** A webhook address with a form id (hex and dashes only). */
const WEBHOOK_ID_PATH = /^\/v1\/forms\/[0-9a-fA-F-]{36}\/webhook\/?$/;
const webhookLogPaths = new Map<string, string>();
const WEBHOOK_LOG_PATHS_MAX = 10_000;
