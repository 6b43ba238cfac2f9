import type { Permission } from "../services/accounts";
import type { Role } from "../domain/people";

/**
 * Who may call each route and which limiter it counts against, as the route itself declares it
 * (`permission` and `rateLimit` in its options, through plugins/route-access.ts). The outer
 * handler reads the matched route's declaration before any body is read; a route that declares
 * nothing stops the server at start (docs/api-decisions.md, "Permissions declared on each route").
 */

/** The key kinds of today: what a key (or the key behind a dashboard session) holds. */
export type KeyLevel = Permission | "operator";

/**
 * Permissions of the routes a key (or a dashboard session) calls, named for what they let the
 * caller do, each with the key kind it needs. Roles will plug in as a second map from these names
 * to the roles that hold them; a key keeps its kind, so these levels stay what keys are checked by.
 */
export const KEY_PERMISSIONS = {
  "account.read": "standard_access",
  "settings.read": "admin_access",
  "settings.write": "admin_access",
  "forms.read": "standard_access",
  "forms.write": "admin_access",
  /** The embed snippet shows the form's intake address. */
  "forms.embed": "admin_access",
  "messages.read": "standard_access",
  /** What visitors sent through the forms (the inbox), and its unread mark. */
  "submissions.read": "standard_access",
  "messages.send": "standard_access",
  "messages.write": "standard_access",
  /** A phone polling with a key: asking for work, and reporting what it sent or received. */
  "phone.work": "standard_access",
  "phone.report": "standard_access",
  "conversations.read": "standard_access",
  "conversations.write": "standard_access",
  "contacts.read": "standard_access",
  "contacts.write": "standard_access",
  "contacts.delete": "admin_access",
  "contacts.export": "admin_access",
  "contacts.import": "admin_access",
  "broadcasts.read": "standard_access",
  "broadcasts.write": "admin_access",
  "automations.read": "standard_access",
  "automations.write": "admin_access",
  "devices.read": "standard_access",
  "devices.write": "admin_access",
  /** The caller's own dashboard session (see who is signed in, sign out). */
  "session.own": "standard_access",
  /** Every dashboard session of the account. */
  "sessions.manage": "admin_access",
  "api-keys.manage": "admin_access",
  /** The account's people: invitations, roles, removal (owners only). */
  "people.manage": "admin_access",
  /** Outbound event endpoints hold signing secrets, and their log shows what left. */
  "event-endpoints.read": "admin_access",
  "event-endpoints.write": "admin_access",
  /** Backups and the server-wide metrics: every account's data. */
  operator: "operator",
} as const satisfies Record<string, KeyLevel>;

export type KeyPermission = keyof typeof KEY_PERMISSIONS;

const ALL = Object.keys(KEY_PERMISSIONS) as KeyPermission[];
/** What staff do all day: messages, conversations, contacts and broadcasts (no settings, no forms' protections). */
const STAFF: readonly KeyPermission[] = [
  "account.read", "forms.read", "devices.read", "session.own",
  "messages.read", "messages.send", "messages.write",
  "submissions.read",
  // The dashboard's Retry and Cancel of one message use PUT /v1/messages/:id/status.
  "phone.report",
  "conversations.read", "conversations.write",
  "contacts.read", "contacts.write",
  "broadcasts.read", "broadcasts.write",
  "automations.read",
];

/**
 * The permissions each role of a person holds (a person's session acts with their role; keys keep
 * their kind): owner everything (operator only on the server's first account, checked in
 * authorize.ts), admin everything but people, keys and the account's sessions, staff the day's
 * work, viewer the reading part of it (docs/api-decisions.md, "People, roles and the first run").
 */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<KeyPermission>> = {
  owner: new Set(ALL),
  admin: new Set(ALL.filter((p) => !["people.manage", "api-keys.manage", "sessions.manage", "operator"].includes(p))),
  staff: new Set(STAFF),
  viewer: new Set(STAFF.filter((p) => p.endsWith(".read") || p === "session.own")),
};

/** The roles that hold a permission, most powerful first ("owner", "admin"): a refusal names them. */
export function rolesHolding(p: KeyPermission): Role[] {
  return (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((r) => ROLE_PERMISSIONS[r].has(p));
}

/**
 * Routes the outer handler asks no key for: `public` (anyone), `webhook` (a form's intake address:
 * the form id is the credential), `device` (the SMSGate app's mobile API: the route checks the
 * device token), `sign-in` (the key is in the body, checked by the route).
 */
export const OPEN_ACCESS = ["public", "webhook", "device", "sign-in"] as const;
export type OpenAccess = (typeof OPEN_ACCESS)[number];

export type RoutePermission = KeyPermission | OpenAccess;

/**
 * The limiter a route counts against:
 * - `api-key`: the key's hourly limit and per-minute burst; a dashboard session's request counts
 *   against the session's own limiter instead (docs/api-decisions.md, "The dashboard never locks
 *   itself out; honest status");
 * - `device`: the phone's own limiter, never the key's, refused when spent;
 * - `device-report`: counted on the phone's limiter and never refused (a status or a STOP is never
 *   lost to a rate);
 * - `form`: the form's submissions per minute, counted by the webhook route (its CORS preflight
 *   counts nothing);
 * - `registration`: phone registrations per client address, counted by the route;
 * - `sign-in`: failed sign-ins per client address;
 * - `none`: nothing is counted.
 */
export const RATE_LIMITS = ["api-key", "device", "device-report", "form", "registration", "sign-in", "none"] as const;
export type RateLimit = (typeof RATE_LIMITS)[number];

/** Which limiters go with which kind of access (a key route never counts per form, …). */
const LIMITS_FOR: Record<"key" | OpenAccess, readonly RateLimit[]> = {
  key: ["api-key", "device", "device-report"],
  webhook: ["form", "none"],
  device: ["device", "device-report", "registration", "none"],
  "sign-in": ["sign-in"],
  public: ["none"],
};

/** A route's declaration, read once when the route table is built. */
export interface RouteAccess {
  permission: RoutePermission;
  rateLimit: RateLimit;
  /**
   * The key kind the outer handler authenticates and checks before the route runs; null when it
   * asks for no key. Sign-in checks its key itself but takes any key, so it shows standard_access.
   */
  key: KeyLevel | null;
}

interface DeclaredRoute {
  method: string;
  path: string;
  hooks?: Record<string, unknown>;
}

const isKeyPermission = (p: unknown): p is KeyPermission => typeof p === "string" && Object.hasOwn(KEY_PERMISSIONS, p);
const isOpenAccess = (p: unknown): p is OpenAccess => (OPEN_ACCESS as readonly unknown[]).includes(p);

/** What is wrong with a route's declaration, or null when it declares a known permission and a limiter that fits it. */
export function accessProblem(route: DeclaredRoute): string | null {
  const { permission, rateLimit } = route.hooks ?? {};
  const name = `${route.method} ${route.path}`;
  if (permission === undefined) return `${name} declares no permission`;
  if (!isKeyPermission(permission) && !isOpenAccess(permission)) return `${name} declares an unknown permission ${JSON.stringify(permission)}`;
  if (rateLimit === undefined) return `${name} declares no rate limit`;
  const fits = LIMITS_FOR[isKeyPermission(permission) ? "key" : permission];
  if (!fits.includes(rateLimit as RateLimit)) return `${name} declares rate limit ${JSON.stringify(rateLimit)}; ${permission} takes ${fits.join(", ")}`;
  return null;
}

/** The declaration of a registered route; throws when it has none (the route would be unguarded). */
export function routeAccessOf(route: DeclaredRoute): RouteAccess {
  const problem = accessProblem(route);
  if (problem) throw new Error(`${problem} (docs/api-decisions.md, "Permissions declared on each route")`);
  const permission = route.hooks!.permission as RoutePermission;
  const rateLimit = route.hooks!.rateLimit as RateLimit;
  const key: KeyLevel | null = isKeyPermission(permission) ? KEY_PERMISSIONS[permission] : permission === "sign-in" ? "standard_access" : null;
  return { permission, rateLimit, key };
}
