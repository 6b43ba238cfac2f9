/**
 * The running server's route declarations (src/http/permissions.ts: each route declares its
 * permission) against the policy written out in test/helpers/permission-policy.ts: the table of
 * test/api/http/permissions.test.ts takes its rows from these declarations, so they are checked
 * here, where they are read: enough of them, each with a known permission and a limiter that
 * fits it, every permission they declare in the policy, and no stale name in the policy.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { accessProblem, KEY_PERMISSIONS, routeAccessOf, type KeyPermission } from "../../src/http/permissions";
import type { RouteDef } from "../../src/http/request-guard";
import { startTestServer } from "../helpers/server";
import { POLICY } from "../helpers/permission-policy";

const s = await startTestServer({ metrics: true });
afterAll(() => s.stop());
const routes = (s.running.deps.routes() as RouteDef[])
  .map((r) => ({ method: r.method, path: r.path, access: routeAccessOf(r) }))
  .filter((r) => r.method !== "HEAD");

describe("the table covers every declared route", () => {
  test("the routes are read from their declarations, and the policy names every permission they declare", () => {
    expect(routes.length).toBeGreaterThan(100);
    const declared = new Set(routes.map((r) => r.access.permission).filter((p): p is KeyPermission => Object.hasOwn(KEY_PERMISSIONS, p)));
    expect([...declared].filter((p) => !POLICY[p]).sort()).toEqual([]);
    // Every permission the policy names is used by some route (no stale names).
    expect(Object.keys(POLICY).filter((p) => !declared.has(p as KeyPermission)).sort()).toEqual([]);
  });
});

describe("every route declares who may call it", () => {
  const declared = s.running.deps.routes() as RouteDef[];
  test("each registered route (method + path) declares a known permission and a limiter that fits it", () => {
    expect(declared.length).toBeGreaterThan(70);
    const problems = declared.map((r) => accessProblem(r)).filter((p) => p !== null);
    expect(problems).toEqual([]);
  });
});
