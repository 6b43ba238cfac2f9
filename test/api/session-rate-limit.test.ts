import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";

/**
 * The dashboard is not a way around the API limit. Requests made with a session cookie
 * count against the hourly (and per-minute) limit of the key that signed in, in the same bucket
 * as that key's Bearer requests, and are refused with the same 429.
 */
describe("dashboard requests count against the signed-in key's API limit", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());

  async function signIn(apiKey: string) {
    const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey }) });
    const body = await expectStatus(res, 201);
    return { cookie: (res.headers.get("set-cookie") ?? "").split(";")[0], csrf: body.data.csrfToken as string };
  }
  const viaSession = (s: { cookie: string; csrf: string }, path: string, init: { method?: string; json?: unknown; csrf?: string } = {}) =>
    fetch(`${ts.base}${path}`, {
      method: init.method ?? "GET",
      headers: { Cookie: s.cookie, "X-CSRF-Token": init.csrf ?? s.csrf, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
  const viaBearer = (key: string, path: string) => fetch(`${ts.base}${path}`, { headers: { Authorization: `Bearer ${key}` } });

  test("one hourly bucket for the key: Bearer and session requests both spend it, then both get the same 429", async () => {
    const acct = ts.running.deps.accounts.createAccount({ name: "Small shop", apiLimitPerHour: 6, apiBurstPerMinute: 100 });
    // Signing in is not an API request (it is limited per IP as a sign-in).
    const s = await signIn(acct.apiKey);
    let r = await viaBearer(acct.apiKey, "/forms");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("6");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("5");
    r = await viaSession(s, "/forms");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("6");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("4");
    // A second session of the same key (another browser) shares the bucket too.
    const s2 = await signIn(acct.apiKey);
    await expectStatus(await viaSession(s2, "/session"), 200);
    // A change made from the dashboard counts like a read.
    r = await viaSession(s, "/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hello" } });
    await expectStatus(r, 201);
    expect(r.headers.get("x-ratelimit-remaining")).toBe("2");
    // A change refused for its CSRF token is refused before the limit is counted.
    await expectStatus(await viaSession(s, "/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hello" }, csrf: "wrong" }), 403);
    await expectStatus(await viaBearer(acct.apiKey, "/contacts"), 200);
    r = await viaSession(s, "/contacts");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
    const fromSession = await expectStatus(await viaSession(s, "/forms"), 429);
    const fromBearer = await expectStatus(await viaBearer(acct.apiKey, "/forms"), 429);
    for (const b of [fromSession, fromBearer]) {
      expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(b.details.window).toBe("1 hour");
      expect(b.details.limit).toBe(6);
      expect(b.retryAfter).toBeGreaterThan(0);
    }
    // The limit is the key's: another key of the account (and its sessions) keeps its own bucket.
    const other = ts.running.deps.accounts.createKey(acct.account.id, "standard_access");
    const r2 = await viaSession(await signIn(other.apiKey), "/forms");
    await expectStatus(r2, 200);
    expect(r2.headers.get("x-ratelimit-remaining")).toBe("5");
  });

  test("the per-minute burst applies to session requests as to Bearer ones", async () => {
    const acct = ts.running.deps.accounts.createAccount({ name: "Burst shop", apiLimitPerHour: 1000, apiBurstPerMinute: 2 });
    const s = await signIn(acct.apiKey);
    await expectStatus(await viaSession(s, "/forms"), 200);
    await expectStatus(await viaBearer(acct.apiKey, "/forms"), 200);
    const b = await expectStatus(await viaSession(s, "/forms"), 429);
    expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(b.details.window).toBe("1 minute");
  });
});
