import type { Permission } from "../services/accounts";
import { KEY_PREFIX } from "../services/accounts";
import { redactKeys } from "../lib/log";
import { safeDecode } from "./request-guard";

/**
 * Who may call what (CONTRACT §2). Every /v1 path except the webhook needs a key; these need
 * admin_access, and backups and the server-wide metrics (every account's data) an operator key.
 * Checked before the body is read, so an unauthorised caller learns nothing.
 */
export type Requirement = Permission | "operator";
const ADMIN_RULES: Array<{ method: string; pattern: RegExp; need: Requirement }> = [
  { method: "POST", pattern: /^\/v1\/forms\/?$/, need: "admin_access" },
  { method: "PUT", pattern: /^\/v1\/forms\/[^/]+\/?$/, need: "admin_access" },
  { method: "DELETE", pattern: /^\/v1\/forms\/[^/]+\/?$/, need: "admin_access" },
  { method: "POST", pattern: /^\/v1\/forms\/[^/]+\/rotate-webhook\/?$/, need: "admin_access" },
  { method: "GET", pattern: /^\/v1\/forms\/[^/]+\/embed\/?$/, need: "admin_access" },
  { method: "DELETE", pattern: /^\/v1\/contacts\/[^/]+\/?$/, need: "admin_access" },
  { method: "GET", pattern: /^\/v1\/contacts\/export\/?$/, need: "admin_access" },
  { method: "POST", pattern: /^\/v1\/contacts\/import\/?$/, need: "admin_access" },
  { method: "POST", pattern: /^\/v1\/admin\/.*$/, need: "operator" },
  { method: "GET", pattern: /^\/v1\/admin\/.*$/, need: "operator" },
  { method: "PUT", pattern: /^\/v1\/admin\/.*$/, need: "operator" },
  { method: "POST", pattern: /^\/v1\/broadcasts(\/.*)?$/, need: "admin_access" },
  { method: "GET", pattern: /^\/v1\/account\/settings\/?$/, need: "admin_access" },
  { method: "PUT", pattern: /^\/v1\/account\/settings\/?$/, need: "admin_access" },
  { method: "GET", pattern: /^\/metrics\/?$/, need: "operator" },
  { method: "GET", pattern: /^\/v1\/sessions\/?$/, need: "admin_access" },
  { method: "GET", pattern: /^\/v1\/api-keys\/?$/, need: "admin_access" },
  { method: "POST", pattern: /^\/v1\/api-keys\/?$/, need: "admin_access" },
  { method: "DELETE", pattern: /^\/v1\/api-keys\/[^/]+\/?$/, need: "admin_access" },
  { method: "DELETE", pattern: /^\/v1\/sessions\/[^/]+\/?$/, need: "admin_access" },
  { method: "POST", pattern: /^\/v1\/devices\/registration-tokens\/?$/, need: "admin_access" },
  { method: "PATCH", pattern: /^\/v1\/devices\/[^/]+\/?$/, need: "admin_access" },
  { method: "DELETE", pattern: /^\/v1\/devices\/[^/]+\/?$/, need: "admin_access" },
  // Outbound events (issue 13): endpoints hold signing secrets, and the log shows what left.
  { method: "*", pattern: /^\/v1\/webhook-endpoints(\/.*)?$/, need: "admin_access" },
  { method: "*", pattern: /^\/v1\/events(\/.*)?$/, need: "admin_access" },
];

/** The permission a request needs; `endpoint` is its real method and path (for the 403). */
export function requiredPermission(method: string, path: string): { permission: Requirement; endpoint: string } {
  // The spec names endpoints without the /v1 prefix ("POST /forms").
  const endpoint = `${method} ${redactKeys(path).replace(/^\/v1(?=\/)/, "").replace(/\/+$/, "").slice(0, 200) || "/"}`;
  for (const r of ADMIN_RULES) {
    if ((r.method === method || r.method === "*") && r.pattern.test(path)) return { permission: r.need, endpoint };
  }
  return { permission: "standard_access", endpoint };
}

export type RouteKind = "webhook" | "api" | "messages" | "public";

const WEBHOOK_RE = /^\/v1\/forms\/[^/]+\/webhook\/?$/;

export function classify(path: string): RouteKind {
  if (WEBHOOK_RE.test(path)) return "webhook";
  if (path === "/v1/messages" || path.startsWith("/v1/messages/")) return "messages";
  if (path.startsWith("/v1/") && !path.startsWith("/v1/openapi") && !path.startsWith("/v1/docs")) return "api";
  if (path === "/metrics") return "api";
  return "public";
}

export interface CredentialLookup {
  /** The key as presented, or null when none was. */
  presented: string | null;
  /** For messages routes with the key in the path: the path with the key segment removed. */
  rewrittenPath?: string;
}

/**
 * Messages routes take the key as a path segment (spec) or as a Bearer header (CONTRACT §2).
 * A first segment starting with txwire_sk_ is always a key; without a Bearer header the first
 * segment is read as the key, whatever it looks like.
 */
export function findCredential(kind: RouteKind, path: string, authorization: string | null, sessionCookie = false): CredentialLookup {
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
