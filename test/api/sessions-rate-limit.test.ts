import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../helpers/server";
import { SESSION_BURST, SESSION_REQUESTS_PER_MINUTE } from "../../src/limits/api-limiter";
import { newAccount } from "../helpers/accounts";

/**
 * The dashboard never locks itself out (docs/api-decisions.md, "The dashboard never locks itself
 * out; honest status"): a session's requests count against the session's own limiter, sized for a
 * person, never the key's API limit; the key used directly keeps its limits exactly. (These tests
 * once asserted one shared bucket for a key and its sessions; the intent kept is that neither way
 * is unlimited, and that a key's direct limit is the same as before.)
 */
describe("a dashboard session has its own limiter; a key's direct requests keep the key's limit", () => {
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

  test("a session makes 700 requests in a minute without a 429 while the key's direct requests get 429 at its limit", async () => {
    const acct = newAccount(ts, { name: "Busy shop", apiLimitPerHour: 1000, apiBurstPerMinute: 100 });
    const s = await signIn(acct.apiKey);
    // 700 dashboard requests, 20 at a time: more than the key's hourly and burst limits together.
    for (let i = 0; i < 700; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => viaSession(s, "/forms")));
      for (const r of batch) {
        if (r.status !== 200) throw new Error(`request ${i} got ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
      }
    }
    // The key's own burst is untouched by the session: exactly 100 pass, the 101st is refused.
    for (let i = 0; i < 100; i++) {
      const r = await viaBearer(acct.apiKey, "/forms");
      if (r.status !== 200) throw new Error(`Bearer request ${i + 1} got ${r.status}`);
      if (i === 0) expect(r.headers.get("x-ratelimit-burst-limit")).toBe("100");
      await r.arrayBuffer();
    }
    const refused = await viaBearer(acct.apiKey, "/forms");
    const b = await expectStatus(refused, 429);
    expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(b.details.window).toBe("1 minute");
    expect(refused.headers.get("retry-after")).not.toBeNull();
    // The session still works while its key is refused.
    await expectStatus(await viaSession(s, "/forms"), 200);
  });

  test("a key's hourly limit is exactly today's for Bearer requests; its sessions do not spend it", async () => {
    const acct = newAccount(ts, { name: "Small shop", apiLimitPerHour: 6, apiBurstPerMinute: 100 });
    const s = await signIn(acct.apiKey);
    let r = await viaBearer(acct.apiKey, "/forms");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-limit")).toBe("6");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("5");
    // A session's answers show the session's limit, and leave the key's bucket as it was.
    r = await viaSession(s, "/forms");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-limit")).toBe(String(SESSION_BURST));
    for (let i = 0; i < 10; i++) await expectStatus(await viaSession(s, "/contacts"), 200);
    // A change made from the dashboard counts like a read; one refused for its CSRF token too is refused first.
    await expectStatus(await viaSession(s, "/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hello" } }), 201);
    await expectStatus(await viaSession(s, "/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hello" }, csrf: "wrong" }), 403);
    r = await viaBearer(acct.apiKey, "/forms");
    await expectStatus(r, 200);
    expect(r.headers.get("x-ratelimit-remaining")).toBe("4");
    for (let i = 0; i < 4; i++) await expectStatus(await viaBearer(acct.apiKey, "/contacts"), 200);
    const b = await expectStatus(await viaBearer(acct.apiKey, "/forms"), 429);
    expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(b.details.window).toBe("1 hour");
    expect(b.details.limit).toBe(6);
    expect(b.retryAfter).toBeGreaterThan(0);
    await expectStatus(await viaSession(s, "/forms"), 200);
  });

  test("a session has a limit too: past its per-minute figure it gets a 429 with Retry-After, and another session does not", async () => {
    const acct = newAccount(ts, { name: "Session shop" });
    const s = await signIn(acct.apiKey);
    // arrange: the session's bucket spent directly (600 HTTP requests would only repeat the first test)
    const row = ts.running.deps.sessionLimiter;
    const sessionId = [...(ts.running.deps.sqlite.query("SELECT id FROM sessions WHERE account_id = ?").all(acct.account.id) as Array<{ id: string }>)][0].id;
    for (let i = 0; i < SESSION_BURST; i++) row.check(sessionId);
    const r = await viaSession(s, "/forms");
    const b = await expectStatus(r, 429);
    expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(b.details.window).toBe("1 minute");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    await expectStatus(await viaSession(await signIn(acct.apiKey), "/forms"), 200);
    // The key used directly is not affected by its session's limit.
    await expectStatus(await viaBearer(acct.apiKey, "/forms"), 200);
  });
});
