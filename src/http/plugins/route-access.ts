import { Elysia } from "elysia";
import type { RateLimit, RoutePermission } from "../permissions";

/**
 * Lets a route declare, in its own options, the permission it needs and the limiter it counts
 * against: `.get("/x", handler, { permission: "forms.read", rateLimit: "api-key" })`. The macros
 * add no hook (nothing runs per request inside the app): Elysia keeps the values in the route's
 * hooks, and the outer handler reads them from `app.routes` when it builds its route table, so
 * they are checked before any body is read (docs/api-decisions.md, "Permissions declared on each
 * route"). Every route module uses this plugin; test/api/http/route-access.test.ts fails on a route
 * that declares nothing.
 */
export const routeAccess = new Elysia({ name: "route-access" }).macro({
  permission: (_permission: RoutePermission) => ({}),
  rateLimit: (_limit: RateLimit) => ({}),
});
