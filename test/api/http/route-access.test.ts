import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { classify } from "../../../src/http/access";
import { routeAccessOf, type RouteAccess } from "../../../src/http/permissions";
import { RouteTable, type RouteDef } from "../../../src/http/request-guard";
import { expectStatus, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

// Permissions and limiters are declared on each route (docs/api-decisions.md, "Permissions
// declared on each route"); these tests walk every route the app registers.

let s: TestServer;
let routes: RouteDef[];
let table: RouteTable<RouteAccess>;

beforeAll(async () => {
  s = await startTestServer({ metrics: true });
  routes = s.running.deps.routes() as RouteDef[]; // arrange: the routes as declared, the table's rows
  table = new RouteTable(() => routes, routeAccessOf);
});
afterAll(() => s.stop());

/** A path the route's pattern matches: every parameter becomes "x". */
const concrete = (path: string) => path.replace(/:[^/]+/g, "x").replace(/\/+$/, "") || "/";

describe("every route declares who may call it", () => {
  // Each registered route declaring a known permission and a fitting limiter is read from the
  // declarations themselves (test/services/permissions.test.ts); a route without a declaration,
  // named and stopping the server at start, is a rule of the plugin on an app of its own
  // (test/unit/http/route-access.test.ts).

  test("the declaration agrees with the path family the outer handler sorts requests by before matching", () => {
    const disagree: string[] = [];
    for (const r of routes) {
      const a = routeAccessOf(r);
      const kind = classify(concrete(r.path));
      const expected =
        kind === "api" || kind === "messages" ? a.key !== null
        // SMSGate's third-party API: a key, except its health check (open, as on SMSGate's server).
        : kind === "thirdparty" ? a.key !== null || a.permission === "public"
        : kind === "webhook" ? a.permission === "webhook" : a.permission === "public" || a.permission === "device";
      if (!expected) disagree.push(`${r.method} ${r.path}: ${kind} but ${a.permission}`);
    }
    expect(disagree).toEqual([]);
  });

  test("the route table hands over each route's own declaration (a static segment wins over a parameter)", () => {
    const wrong: string[] = [];
    for (const r of routes) {
      const m = table.match(r.method, concrete(r.path));
      if (m.kind !== "ok" || m.route.permission !== routeAccessOf(r).permission) wrong.push(`${r.method} ${r.path}`);
    }
    expect(wrong).toEqual([]);
  });

  test("the webhook, the phone API and the public pages declare their own kinds", () => {
    const of = (method: string, path: string) => {
      const m = table.match(method, path);
      if (m.kind !== "ok") throw new Error(`${method} ${path}: ${m.kind}`);
      return `${m.route.permission} ${m.route.rateLimit}`;
    };
    expect(of("POST", "/v1/forms/abc/webhook")).toBe("webhook form");
    expect(of("OPTIONS", "/v1/forms/abc/webhook")).toBe("webhook none");
    expect(of("GET", "/api/mobile/v1/message")).toBe("device device");
    expect(of("PATCH", "/api/mobile/v1/message")).toBe("device device-report");
    expect(of("POST", "/api/mobile/v1/device")).toBe("device registration");
    expect(of("POST", "/v1/messages/next")).toBe("phone.work device");
    expect(of("PUT", "/v1/messages/m1/status")).toBe("phone.report device-report");
    expect(of("POST", "/v1/messages/inbound")).toBe("phone.report device-report");
    expect(of("PUT", "/v1/messages/bulk")).toBe("messages.write api-key");
    expect(of("POST", "/v1/session")).toBe("sign-in sign-in");
    expect(of("GET", "/health")).toBe("public none");
    expect(of("GET", "/ca.crt")).toBe("public none");
  });

});

describe("the route table", () => {
  const def = (method: string, path: string, name: string) => ({ method, path, hooks: { name } });
  const build = (defs: RouteDef[]) => new RouteTable(() => defs, (r) => String(r.hooks!.name));

  test("a static segment wins over a parameter, and a parameter over a wildcard, whatever the registration order", () => {
    const t = build([def("GET", "/v1/things/*", "wild"), def("GET", "/v1/things/:id", "one"), def("GET", "/v1/things/export", "export"), def("PUT", "/v1/things/bulk", "bulk")]);
    expect(t.match("GET", "/v1/things/export")).toEqual({ kind: "ok", route: "export" });
    expect(t.match("GET", "/v1/things/t1")).toEqual({ kind: "ok", route: "one" });
    expect(t.match("GET", "/v1/things/t1/more")).toEqual({ kind: "ok", route: "wild" });
    expect(t.match("PUT", "/v1/things/bulk")).toEqual({ kind: "ok", route: "bulk" });
    // The static path has no GET: the parameter route serves it, as Elysia's router does.
    expect(t.match("GET", "/v1/things/bulk")).toEqual({ kind: "ok", route: "one" });
    expect(t.match("DELETE", "/v1/things/bulk")).toEqual({ kind: "method", allow: ["GET", "HEAD", "PUT"] });
    expect(t.match("GET", "/v1/other")).toEqual({ kind: "unknown" });
  });
});

describe("the phone API counts against the limiter each route declares", () => {
  test("asking for work is refused once the phone's limit is spent; its reports (device-report) never are", async () => {
    const srv = await startTestServer({ deviceLimitPerMinute: 3 });
    try {
      const token = (await expectStatus(await srv.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
      const phone = new SmsGateEmulator({ base: `${srv.url}/api/mobile/v1` });
      await phone.register(token);
      const auth = { Authorization: `Bearer ${phone.token}` };
      let refused: Response | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        const res = await fetch(`${srv.url}/api/mobile/v1/message`, { headers: auth });
        if (res.status === 429) refused = res;
        else await expectStatus(res, 200);
      }
      expect(refused).toBeDefined();
      expect((await expectStatus(refused!, 429)).message).toStartWith("Device rate limit exceeded");
      for (let i = 0; i < 3; i++) {
        const report = await fetch(`${srv.url}/api/mobile/v1/message`, { method: "PATCH", headers: { ...auth, "Content-Type": "application/json" }, body: "[]" });
        await expectStatus(report, 204);
      }
      await expectStatus(await fetch(`${srv.url}/api/mobile/v1/settings`, { headers: auth }), 429);
    } finally {
      await srv.stop();
    }
  });
});
