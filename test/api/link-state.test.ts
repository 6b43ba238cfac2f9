/**
 * One-time links read without using them (POST /v1/invitations/state, /v1/setup/state), the
 * invitation link's address, and what a person's session may do (GET /v1/session `can`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { setupLink } from "../helpers/scenario";

const OWNER = { name: "Rosa Owner", email: "rosa@bakery.example", password: "blue-bicycle-42" };

async function post(ts: TestServer, path: string, json: unknown, headers: Record<string, string> = {}) {
  return fetch(`${ts.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(json) });
}

/** A signed-in browser: fetch with its cookie and CSRF token. */
async function browserOf(ts: TestServer, res: Response) {
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const body = await expectStatus(res, 201);
  const csrf = body.data.csrfToken as string;
  return (path: string, init: { method?: string; json?: unknown } = {}) =>
    fetch(`${ts.base}${path}`, {
      method: init.method ?? "GET",
      headers: { Cookie: cookie, "X-CSRF-Token": csrf, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
}

describe("the setup link's state", () => {
  let now = Date.parse("2026-05-01T10:00:00Z");
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ authFailuresPerMinute: 1000 }, { clock: () => now });
  });
  afterAll(() => ts.stop());

  test("ready, replaced (unknown), expired and used — reading it never uses it", async () => {
    const old = setupLink(ts)!;
    const link = setupLink(ts)!;
    expect((await expectStatus(await post(ts, "/setup/state", { token: old.token }), 200)).data.state).toBe("unknown");
    expect((await expectStatus(await post(ts, "/setup/state", { token: link.token }), 200)).data.state).toBe("ready");
    expect((await expectStatus(await post(ts, "/setup/state", { token: link.token }), 200)).data.state).toBe("ready");
    now += 24 * 3600_000 + 1;
    expect((await expectStatus(await post(ts, "/setup/state", { token: link.token }), 200)).data.state).toBe("expired");
    const fresh = setupLink(ts)!;
    await expectStatus(await post(ts, "/setup", { token: fresh.token, businessName: "Rosa's Bakery", ...OWNER }), 201);
    expect((await expectStatus(await post(ts, "/setup/state", { token: fresh.token }), 200)).data.state).toBe("used");
  });

  test("hostile input: no token, a number, a huge string, broken JSON — 400 or unknown, never a 500", async () => {
    await expectStatus(await post(ts, "/setup/state", {}), 400);
    await expectStatus(await post(ts, "/invitations/state", {}), 400);
    await expectStatus(await post(ts, "/setup/state", { token: 42 }), 400);
    await expectStatus(await post(ts, "/invitations/state", { token: ["a"] }), 400);
    await expectStatus(await post(ts, "/invitations/state", { token: "x".repeat(5000) }), 400);
    expect((await expectStatus(await post(ts, "/invitations/state", { token: "x" }), 200)).data.state).toBe("unknown");
    const broken = await fetch(`${ts.base}/invitations/state`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{nope" });
    expect(broken.status).toBe(400);
  });
});

describe("invitation links", () => {
  let now = Date.parse("2026-05-01T10:00:00Z");
  let ts: TestServer;
  let owner: Awaited<ReturnType<typeof browserOf>>;
  beforeAll(async () => {
    ts = await startTestServer({ authFailuresPerMinute: 1000 }, { clock: () => now });
    const link = setupLink(ts)!;
    owner = await browserOf(ts, await post(ts, "/setup", { token: link.token, businessName: "Rosa's Bakery", country: "US", ...OWNER }));
  });
  afterAll(() => ts.stop());

  let invited = 0;
  async function invite(role: string, email = `${role}-${++invited}@bakery.example`) {
    return (await expectStatus(await owner("/invitations", { method: "POST", json: { role, email } }), 201)).data as { url: string; addressSet: boolean };
  }
  const tokenOf = (url: string) => url.split("#")[1]!;

  test("without a server address the link says so; with one the link uses it, not the browser's address", async () => {
    const before = await invite("staff");
    expect(before.addressSet).toBe(false);
    expect(before.url.startsWith(ts.url)).toBe(true);
    await expectStatus(await ts.api("/admin/server-address", { method: "PUT", json: { url: "https://sms.rosas-bakery.example" } }), 200);
    const after = await invite("staff");
    expect(after.addressSet).toBe(true);
    expect(after.url.startsWith("https://sms.rosas-bakery.example/invite#")).toBe(true);
  });

  test("a working link names the business and the role; used and expired links say so and name nothing", async () => {
    const inv = await invite("staff");
    const state = await expectStatus(await post(ts, "/invitations/state", { token: tokenOf(inv.url) }), 200);
    expect(state.data).toMatchObject({ state: "ready", businessName: "Rosa's Bakery", role: "staff" });
    await expectStatus(await post(ts, "/invitations/accept", { token: tokenOf(inv.url), name: "Sam", email: "sam@bakery.example", password: "green-teapot-77" }), 201);
    const used = await expectStatus(await post(ts, "/invitations/state", { token: tokenOf(inv.url) }), 200);
    expect(used.data).toEqual({ state: "used", businessName: null, role: null, expiresAt: null });
    const late = await invite("viewer");
    now += 72 * 3600_000 + 1;
    expect((await expectStatus(await post(ts, "/invitations/state", { token: tokenOf(late.url) }), 200)).data.state).toBe("expired");
    expect((await expectStatus(await post(ts, "/invitations/state", { token: "A".repeat(43) }), 200)).data.state).toBe("unknown");
  });

  test("a staff session's `can` holds broadcasts, not forms' changes; a refusal names the roles that may", async () => {
    now = Date.parse("2026-05-01T12:00:00Z");
    const inv = await invite("staff", "stan@bakery.example");
    const staff = await browserOf(ts, await post(ts, "/invitations/accept", { token: tokenOf(inv.url), name: "Stan", email: "stan@bakery.example", password: "green-teapot-77" }));
    const me = (await expectStatus(await staff("/session"), 200)).data;
    expect(me.can).toContain("broadcasts.write");
    expect(me.can).toContain("contacts.write");
    expect(me.can).not.toContain("forms.write");
    expect(me.can).not.toContain("settings.read");
    expect(me.operator).toBe(false);
    const refused = await expectStatus(await staff("/forms", { method: "POST", json: { name: "X" } }), 403);
    expect(refused.message).toBe("Your role (staff) cannot do this: an owner or an admin of the account can");
    expect(refused.details.allowedRoles).toEqual(["owner", "admin"]);
    const keys = await expectStatus(await staff("/api-keys"), 403);
    expect(keys.message).toContain("only an owner");
    const ownerMe = (await expectStatus(await owner("/session"), 200)).data;
    expect(ownerMe.operator).toBe(true);
    expect(ownerMe.can).toContain("operator");
  });
});
