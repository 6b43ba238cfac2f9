import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { newAccount, operatorKey } from "../helpers/accounts";

/** Signs in with `apiKey`; answers the cookie pair ("textwire_session=…"), the CSRF token and the raw response. */
async function signIn(ts: TestServer, apiKey: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ apiKey }) });
  const setCookie = res.headers.get("set-cookie") ?? "";
  const body = await expectStatus(res, 201);
  return { cookie: setCookie.split(";")[0], setCookie, csrf: body.data.csrfToken as string, data: body.data };
}

/** fetch with only the session cookie (no key), and the CSRF token when given. */
function asBrowser(ts: TestServer, cookie: string, csrf?: string) {
  return (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) =>
    fetch(`${ts.base}${path}`, {
      method: init.method ?? "GET",
      headers: {
        Cookie: cookie,
        ...(csrf ? { "X-CSRF-Token": csrf } : {}),
        ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}),
        ...init.headers,
      },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
}

describe("dashboard sessions", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ authFailuresPerMinute: 3 });
  });
  afterAll(() => ts.stop());

  test("signing in sets an HttpOnly, SameSite=Strict cookie for 7 days (not Secure over plain HTTP) and answers the CSRF token", async () => {
    const s = await signIn(ts, ts.adminKey);
    expect(s.setCookie).toMatch(/^textwire_session=[A-Za-z0-9_-]{43}; /);
    expect(s.setCookie).toContain("HttpOnly");
    expect(s.setCookie).toContain("SameSite=Strict");
    expect(s.setCookie).toContain("Path=/");
    expect(s.setCookie).toContain("Max-Age=604800");
    expect(s.setCookie).not.toContain("Secure");
    expect(s.data.accountId).toBe(ts.accountId);
    expect(s.data.permission).toBe("admin_access");
    expect(typeof s.csrf).toBe("string");
    expect(Date.parse(s.data.expiresAt) - Date.parse(s.data.createdAt)).toBe(7 * 24 * 3600_000);
    // (Only the hash of the token is stored: test/db/secrets-at-rest.test.ts reads the database file for it.)
  });

  test("the session cookie authenticates reads, and GET /v1/session answers the session with its CSRF token", async () => {
    const s = await signIn(ts, ts.adminKey);
    const browser = asBrowser(ts, s.cookie);
    await expectStatus(await browser("/forms"), 200);
    const me = await expectStatus(await browser("/session"), 200);
    expect(me.data.csrfToken).toBe(s.csrf);
    expect(me.data.id).toBe(s.data.id);
  });

  test("a message path with a session reads its first segment as an id, not as a key", async () => {
    const created = await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550101", content: "Hello" } }), 201);
    const s = await signIn(ts, ts.adminKey);
    const got = await expectStatus(await asBrowser(ts, s.cookie)(`/messages/${created.data.messageId}`), 200);
    expect(got.data.message.id).toBe(created.data.messageId);
  });

  test("a change with the session needs X-CSRF-Token: none or a wrong one is 403 CSRF_TOKEN_INVALID and changes nothing", async () => {
    const s = await signIn(ts, ts.adminKey);
    const formCount = async () => (await expectStatus(await ts.api("/forms"), 200)).data.total as number;
    const before = await formCount();
    const form = formBody();
    const none = await expectStatus(await asBrowser(ts, s.cookie)("/forms", { method: "POST", json: form }), 403);
    expect(none.code).toBe("CSRF_TOKEN_INVALID");
    const wrong = await expectStatus(await asBrowser(ts, s.cookie, s.csrf.slice(0, -1) + (s.csrf.endsWith("A") ? "B" : "A"))("/forms", { method: "POST", json: form }), 403);
    expect(wrong.code).toBe("CSRF_TOKEN_INVALID");
    // Another session's token is not this one's.
    const other = await signIn(ts, ts.adminKey);
    expect((await asBrowser(ts, s.cookie, other.csrf)("/forms", { method: "POST", json: form })).status).toBe(403);
    expect(await formCount()).toBe(before);
    await expectStatus(await asBrowser(ts, s.cookie, s.csrf)("/forms", { method: "POST", json: form }), 201);
  });

  test("a Bearer key keeps working without any CSRF token (the API is unchanged)", async () => {
    await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550102", content: "Hi" } }), 201);
    const noSession = await expectStatus(await ts.api("/session"), 404);
    expect(noSession.code).toBe("SESSION_NOT_FOUND");
  });

  test("sign-in errors: a missing or non-string apiKey is 400, a wrong key 401, and neither sets a cookie", async () => {
    for (const body of [{}, { apiKey: "" }, { apiKey: 42 }]) {
      const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const b = await expectStatus(res, 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    const form = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "x" });
    expect((await expectStatus(form, 415)).code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("without a cookie or key the API is 401; an unknown cookie is 401 and the cookie is cleared", async () => {
    expect((await fetch(`${ts.base}/forms`)).status).toBe(401);
    const res = await asBrowser(ts, "textwire_session=" + "x".repeat(43))("/forms");
    expect((await expectStatus(res, 401)).code).toBe("AUTHENTICATION_ERROR");
    expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
  });

  test("signing out ends the session: the cookie no longer works and is cleared", async () => {
    const s = await signIn(ts, ts.adminKey);
    const noCsrf = await asBrowser(ts, s.cookie)("/session", { method: "DELETE" });
    expect((await expectStatus(noCsrf, 403)).code).toBe("CSRF_TOKEN_INVALID");
    const out = await asBrowser(ts, s.cookie, s.csrf)("/session", { method: "DELETE" });
    await expectStatus(out, 200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await asBrowser(ts, s.cookie)("/forms")).status).toBe(401);
  });

  test("admins list the account's sessions and end one; a standard key's session may do neither", async () => {
    const admin = await signIn(ts, ts.adminKey);
    const std = operatorKey(ts, ts.accountId, "standard_access");
    const stdSession = await signIn(ts, std.apiKey);
    expect(stdSession.data.permission).toBe("standard_access");
    const list = await expectStatus(await asBrowser(ts, admin.cookie)("/sessions"), 200);
    const mine = list.data.sessions.find((x: any) => x.id === admin.data.id);
    expect(mine.current).toBe(true);
    expect(mine.keyLast4).toBe(ts.adminKey.slice(-4));
    expect(list.data.sessions.some((x: any) => x.id === stdSession.data.id && !x.current)).toBe(true);
    expect(JSON.stringify(list)).not.toContain(admin.csrf);

    expect((await expectStatus(await asBrowser(ts, stdSession.cookie)("/sessions"), 403)).code).toBe("PERMISSION_ERROR");
    // A standard session can read but not do admin things.
    await expectStatus(await asBrowser(ts, stdSession.cookie)("/forms"), 200);
    const adminOnly = await asBrowser(ts, stdSession.cookie, stdSession.csrf)(`/sessions/${admin.data.id}`, { method: "DELETE" });
    expect((await expectStatus(adminOnly, 403)).code).toBe("PERMISSION_ERROR");

    await expectStatus(await asBrowser(ts, admin.cookie, admin.csrf)(`/sessions/${stdSession.data.id}`, { method: "DELETE" }), 200);
    expect((await asBrowser(ts, stdSession.cookie)("/forms")).status).toBe(401);
    const again = await asBrowser(ts, admin.cookie, admin.csrf)(`/sessions/${stdSession.data.id}`, { method: "DELETE" });
    expect((await expectStatus(again, 404)).code).toBe("SESSION_NOT_FOUND");
  });

  test("revoking the API key ends its sessions at once", async () => {
    const key = (await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission: "admin_access" } }), 201)).data;
    const s = await signIn(ts, key.apiKey);
    await expectStatus(await asBrowser(ts, s.cookie)("/forms"), 200);
    await expectStatus(await ts.api(`/api-keys/${key.keyId}`, { method: "DELETE" }), 200);
    expect((await asBrowser(ts, s.cookie)("/forms")).status).toBe(401);
    const list = await expectStatus(await ts.api("/sessions"), 200);
    expect(list.data.sessions.some((x: any) => x.id === s.data.id)).toBe(false);
    // And the revoked key cannot open a new one.
    expect((await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey }) })).status).toBe(401);
  });
});

describe("sign-in attempts are limited per client address", () => {
  test("after the failed-sign-in allowance, even the right key is refused 429 until the bucket refills", async () => {
    const ts = await startTestServer({ authFailuresPerMinute: 2 });
    try {
      const wrong = "txwire_sk_" + "A".repeat(40);
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: wrong }) });
        expect((await expectStatus(res, 401)).code).toBe("AUTHENTICATION_ERROR");
      }
      const res = await fetch(`${ts.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: ts.adminKey }) });
      const b = await expectStatus(res, 429);
      expect(b.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(b.retryAfter).toBeGreaterThan(0);
    } finally {
      await ts.stop();
    }
  });
});

describe("sliding expiry", () => {
  test("a session used within 7 days lives on; one unused for 7 days has ended", async () => {
    let now = Date.parse("2026-03-01T12:00:00Z");
    const ts = await startTestServer({}, { clock: () => now });
    try {
      const s = await signIn(ts, ts.adminKey);
      now += 6 * 24 * 3600_000;
      const res = await asBrowser(ts, s.cookie)("/forms");
      await expectStatus(res, 200);
      // The cookie is sent again with a fresh 7 days.
      expect(res.headers.get("set-cookie")).toContain("Max-Age=604800");
      now += 6 * 24 * 3600_000; // 12 days after sign-in, 6 after the last use
      await expectStatus(await asBrowser(ts, s.cookie)("/forms"), 200);
      const me = await expectStatus(await asBrowser(ts, s.cookie)("/session"), 200);
      expect(Date.parse(me.data.expiresAt)).toBe(now + 7 * 24 * 3600_000);
      now += 7 * 24 * 3600_000 + 1000;
      expect((await asBrowser(ts, s.cookie)("/forms")).status).toBe(401);
    } finally {
      await ts.stop();
    }
  });
});

describe("Secure cookie", () => {
  test("behind a trusted https proxy the cookie is Secure", async () => {
    const ts = await startTestServer({ trustProxy: true });
    try {
      const s = await signIn(ts, ts.adminKey, { "X-Forwarded-Proto": "https" });
      expect(s.setCookie).toContain("; Secure");
    } finally {
      await ts.stop();
    }
  });
});

describe("live message feed (Server-Sent Events)", () => {
  test("a session's stream tells of a new message and of a status change, and only its own account's", async () => {
    const ts = await startTestServer();
    try {
      const s = await signIn(ts, ts.adminKey);
      const other = newAccount(ts, { name: "Other shop" });
      const ctrl = new AbortController();
      const res = await fetch(`${ts.base}/live/messages`, { headers: { Cookie: s.cookie }, signal: ctrl.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const reader = res.body!.getReader();
      let text = "";
      const readUntil = async (re: RegExp) => {
        const deadline = Date.now() + 10_000;
        while (!re.test(text)) {
          if (Date.now() > deadline) throw new Error("no event: " + text);
          const { value, done } = await reader.read();
          if (done) throw new Error("stream ended: " + text);
          text += new TextDecoder().decode(value);
        }
      };
      await readUntil(/: connected/);
      // Another account's message tells this stream nothing.
      await expectStatus(await ts.api("/messages", { method: "POST", key: other.apiKey, json: { phoneNumber: "+14155550111", content: "Other" } }), 201);
      const created = await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155550112", content: "Mine" } }), 201);
      await readUntil(/event: message\ndata: \{"source":"queue"/);
      text = "";
      await expectStatus(await ts.api(`/messages/${created.data.messageId}/status`, { method: "PUT", json: { status: "failed", failureReason: "no service" } }), 200);
      await readUntil(/event: message\ndata: \{"source":"(api|queue)"/);
      ctrl.abort();
      // That the subscriber is gone once the browser leaves is read inside: test/services/message-feed.test.ts.
    } finally {
      await ts.stop();
    }
  });

  test("the stream needs a session or a key, and the server stops with a stream open", async () => {
    const ts = await startTestServer();
    expect((await fetch(`${ts.base}/live/messages`)).status).toBe(401);
    const res = await fetch(`${ts.base}/live/messages`, { headers: { Authorization: `Bearer ${ts.adminKey}` } });
    expect(res.status).toBe(200);
    const started = Date.now();
    await ts.stop();
    // An open stream never holds the stop (that would be the test's timeout); this is no speed.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
