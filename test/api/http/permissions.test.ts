import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { routeAccessOf, type KeyPermission, type RouteAccess } from "../../../src/http/permissions";
import type { RouteDef } from "../../../src/http/request-guard";
import { THIRDPARTY_PREFIX } from "../../../src/http/access";
import { startTestServer, type TestServer } from "../../helpers/server";
import { KEYS_HOLDING, POLICY } from "../../helpers/permission-policy";
import { CALLERS, KEY_ROLES, makeCallers, runScenario, SESSION_ROLES, type Caller, type Callers, type SessionRole } from "../../helpers/scenario";

/**
 * Every route × every caller, as one table (docs/api-decisions.md, "The house, round two: tests
 * through the API"). The routes come from their own declarations (the server's route list, each
 * with the permission it declares); who may hold each permission is written out below, in the
 * product's words, independently of src/http/permissions.ts — so a route that declares the wrong
 * permission, or a role map that drifts, fails here. Each route is called by the owner, an admin,
 * staff, a viewer, the operator key, an admin key, a standard key and nobody, and must let in
 * exactly the callers the policy names (any answer but 401/403/429) and refuse the others with the
 * envelope's 403 (or 401 when signed out).
 */

// Who may hold each permission: test/helpers/permission-policy.ts.

/** A path the route's pattern matches: every parameter (and a wildcard) becomes "x". */
const concrete = (path: string) => path.replace(/:[^/]+/g, "x").replace(/\*/g, "x").replace(/\/+$/, "") || "/";

let s: TestServer;
let callers: Callers;
let now = Date.parse("2026-06-01T09:00:00Z");

// The route list is read before the tests are declared: one test per route.
const boot = startTestServer({ metrics: true, authFailuresPerMinute: 10_000 }, { clock: () => now });
s = await boot;
// arrange: the routes as declared are the table's rows (each is then called through HTTP)
const routes = (s.running.deps.routes() as RouteDef[])
  .map((r) => ({ method: r.method, path: r.path, access: routeAccessOf(r) }))
  .filter((r) => r.method !== "HEAD");

/** Signing out (here, or everywhere) ends the sessions the later rows use: they sign in again after it. */
const endsSessions = (r: { method: string; path: string }) =>
  (r.method === "DELETE" && r.path === "/v1/session") || r.path === "/v1/session/sign-out-everywhere";

beforeAll(async () => {
  callers = await makeCallers(s);
});
afterAll(() => s.stop());

// That the declared routes name exactly the policy's permissions is read from the declarations
// themselves: test/services/permissions.test.ts.

/** The error code of either envelope: ours ({code: "…"}) or SMSGate's ({code: 401, data: "…"}). */
const errorCode = (body: any): unknown => (typeof body?.code === "string" ? body.code : body?.data);

/** The expectation of one caller on one route. */
function expected(path: string, access: RouteAccess, who: Caller): "allowed" | "refused" | "signed out" | "open" {
  if (access.key === null && access.permission !== "sign-in") return "open";
  if (access.permission === "sign-in") return "open";
  if (who === "signed out") return "signed out";
  // SMSGate's third-party API takes a key (or one of its tokens), never the dashboard's session.
  if (path.startsWith(THIRDPARTY_PREFIX + "/") && (SESSION_ROLES as readonly string[]).includes(who)) return "signed out";
  const policy = POLICY[access.permission as KeyPermission];
  const allowed = (SESSION_ROLES as readonly string[]).includes(who) ? policy.roles.includes(who as SessionRole) : KEYS_HOLDING[policy.key].includes(who);
  return allowed ? "allowed" : "refused";
}

describe("route × caller", () => {
  for (const r of routes) {
    test(`${r.method} ${r.path} (${r.access.permission})`, async () => {
      const path = concrete(r.path);
      const body = ["GET", "OPTIONS", "DELETE"].includes(r.method) ? undefined : {};
      const open: Record<string, number> = {};
      for (const who of CALLERS) {
        // Each caller's key or session is well within its per-minute limits: the table is not a load test.
        now += 1000;
        const want = expected(r.path, r.access, who);
        const base = { as: who, method: r.method, path, body, name: `${who} ${r.method} ${r.path}` } as const;
        if (want === "allowed") {
          // Let in: any answer of the route itself (a made-up id is 404, an empty body 400, SMSGate's
          // logs 501), never a refusal or a crash. Refreshing an SMSGate token takes the refresh
          // token as its credential: a key gets past the permission and is refused by the route.
          const refresh = r.path === THIRDPARTY_PREFIX + "/auth/token/refresh";
          const res = await runScenario(s, callers, { ...base, status: (st) => (st !== 401 || refresh) && st !== 403 && st !== 429 && st !== 500 });
          if (res.status === 401) expect(res.body.message).toContain("refresh token");
        } else if (want === "refused") {
          const required = (SESSION_ROLES as readonly string[]).includes(who) ? r.access.permission : r.access.key;
          const res = await runScenario(s, callers, { ...base, status: 403 });
          expect(errorCode(res.body)).toBe("PERMISSION_ERROR");
          // SMSGate's API answers in SMSGate's envelope ({message, code, data}); ours names what was needed.
          if (!r.path.startsWith(THIRDPARTY_PREFIX + "/")) expect(res.body.details.required).toBe(required);
          // A person is told their role and who may (docs/api-decisions.md, "The owner hears back: each role sees what it can do").
          if ((SESSION_ROLES as readonly string[]).includes(who)) expect(res.body.details.role).toBe(who);
        } else if (want === "signed out") {
          // Without any credential the first segment under /v1/messages/ is read as the key (the
          // SMSGate-style address, docs/api.md): the rest of the path may then take no such method.
          const keyInPath = r.path.startsWith("/v1/messages/");
          const res = await runScenario(s, callers, { ...base, status: (st) => st === 401 || (keyInPath && st === 405) });
          expect(errorCode(res.body)).toBe(res.status === 401 ? "AUTHENTICATION_ERROR" : "METHOD_NOT_ALLOWED");
        } else {
          // An open route (the intake address, the phone's API, sign-in, public pages) asks no one's
          // role: it answers every caller alike and never with a permission refusal.
          const res = await runScenario(s, callers, { ...base, status: (st) => st < 500 });
          expect(errorCode(res.body)).not.toBe("PERMISSION_ERROR");
          open[who] = res.status;
        }
      }
      // (Signing in again hashes each password: the row is given the time that takes on a busy machine.)
      if (endsSessions(r)) for (const who of SESSION_ROLES) await callers.refresh(who);
      if (Object.keys(open).length) {
        // Callers that send the same credential get the same answer: the phone's API reads a Bearer
        // as the phone's token (so a key is an unknown phone), and no open route reads a session.
        const sent = (who: Caller) => ((KEY_ROLES as readonly string[]).includes(who) ? "a key" : "no key");
        const answers = (k: string) => [...new Set(CALLERS.filter((w) => sent(w) === k).map((w) => open[w]))];
        expect({ route: `${r.method} ${r.path}`, withoutKey: answers("no key"), withKey: answers("a key") }).toEqual({
          route: `${r.method} ${r.path}`,
          withoutKey: [open["signed out"]!],
          withKey: [open["operator key"]!],
        });
      }
    }, 60_000);
  }
});
