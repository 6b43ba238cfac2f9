import type { Permission } from "../services/accounts";
import { KEY_PREFIX } from "../services/accounts";
import { redactKeys } from "../lib/log";

/**
 * Who may call what (CONTRACT §2). Every /v1 path except the webhook needs a key; these need
 * admin_access. Checked before the body is read, so an unauthorised caller learns nothing.
 */
const ADMIN_RULES: Array<{ method: string; pattern: RegExp; endpoint: string }> = [
  { method: "POST", pattern: /^\/v1\/forms\/?$/, endpoint: "POST /forms" },
  { method: "PUT", pattern: /^\/v1\/forms\/[^/]+\/?$/, endpoint: "PUT /forms/:id" },
  { method: "DELETE", pattern: /^\/v1\/forms\/[^/]+\/?$/, endpoint: "DELETE /forms/:id" },
  { method: "DELETE", pattern: /^\/v1\/contacts\/[^/]+\/?$/, endpoint: "DELETE /contacts/:id" },
  { method: "GET", pattern: /^\/v1\/contacts\/export\/?$/, endpoint: "GET /contacts/export" },
  { method: "POST", pattern: /^\/v1\/contacts\/import\/?$/, endpoint: "POST /contacts/import" },
  { method: "POST", pattern: /^\/v1\/admin\/.*$/, endpoint: "POST /admin" },
  { method: "POST", pattern: /^\/v1\/broadcasts(\/.*)?$/, endpoint: "POST /broadcasts" },
  { method: "GET", pattern: /^\/metrics\/?$/, endpoint: "GET /metrics" },
  { method: "POST", pattern: /^\/v1\/devices\/registration-tokens\/?$/, endpoint: "POST /devices/registration-tokens" },
  { method: "PATCH", pattern: /^\/v1\/devices\/[^/]+\/?$/, endpoint: "PATCH /devices/:id" },
  { method: "DELETE", pattern: /^\/v1\/devices\/[^/]+\/?$/, endpoint: "DELETE /devices/:id" },
];

export function requiredPermission(method: string, path: string): { permission: Permission; endpoint: string } {
  for (const r of ADMIN_RULES) {
    if (r.method === method && r.pattern.test(path)) return { permission: "admin_access", endpoint: r.endpoint };
  }
  return { permission: "standard_access", endpoint: `${method} ${path}` };
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
export function findCredential(kind: RouteKind, path: string, authorization: string | null): CredentialLookup {
  const bearer = parseBearer(authorization);
  if (kind !== "messages") return { presented: bearer };
  const rest = path.slice("/v1/messages".length); // "" or "/seg/..."
  const segs = rest.split("/").filter(Boolean);
  const first = segs[0];
  if (first !== undefined && (first.startsWith(KEY_PREFIX) || bearer === null)) {
    return { presented: decodeURIComponent(first), rewrittenPath: "/v1/messages" + (segs.length > 1 ? "/" + segs.slice(1).join("/") : "") };
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
export const redactPath = (path: string): string =>
  redactKeys(path).replace(/(\/forms\/)([0-9a-fA-F]{8})[0-9a-fA-F-]{28}(?=\/|$)/g, "$1$2…");
