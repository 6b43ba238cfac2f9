import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { newApiKey } from "../../helpers/reads";
import { newAccount, operatorKey } from "../../helpers/accounts";

let s: TestServer;
let standardKey: string;

beforeAll(async () => {
  s = await startTestServer();
  standardKey = await newApiKey(s, "standard_access");
});
afterAll(() => s.stop());

describe("authentication", () => {
  test("missing key: 401 with provided 'none' and the expected format", async () => {
    const body = await expectStatus(await s.api("/forms", { key: null }), 401);
    expect(body).toMatchObject({ status: "error", code: "AUTHENTICATION_ERROR" });
    expect(body.details.provided).toBe("none");
    expect(body.details.expected).toContain("txwire_sk_");
  });

  test("wrong key: 401 showing only the first 10 characters", async () => {
    const wrong = "txwire_sk_" + "A".repeat(40);
    const body = await expectStatus(await s.api("/forms", { key: wrong }), 401);
    expect(body.details.provided).toBe("txwire_sk_…");
    expect(JSON.stringify(body)).not.toContain("AAAA");
    const body2 = await expectStatus(await s.api("/forms", { key: "garbage-token-value" }), 401);
    expect(body2.details.provided).toBe("garbage-to…");
  });

  test("a key off by one character is refused", async () => {
    const k = s.adminKey;
    const flipped = k.slice(0, -1) + (k.endsWith("a") ? "b" : "a");
    await expectStatus(await s.api("/forms", { key: flipped }), 401);
  });

  test("a revoked key stops working at once", async () => {
    const k = (await expectStatus(await s.api("/api-keys", { method: "POST", json: { permission: "standard_access" } }), 201)).data;
    await expectStatus(await s.api("/forms", { key: k.apiKey }), 200);
    await expectStatus(await s.api(`/api-keys/${k.keyId}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api("/forms", { key: k.apiKey }), 401);
  });

  test("auth is checked before the body: an unauthenticated bad body is 401, not 400", async () => {
    await expectStatus(await s.api("/forms", { key: null, method: "POST", body: "{bad", headers: { "Content-Type": "application/json" } }), 401);
  });
});

describe("permissions", () => {
  test("standard keys may not create, update or delete forms: 403 with the spec's details", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const post = await expectStatus(await s.api("/forms", { key: standardKey, method: "POST", json: formBody() }), 403);
    expect(post).toMatchObject({ code: "PERMISSION_ERROR", details: { required: "admin_access", current: "standard_access" } });
    expect(post.details.endpoint).toBe("POST /forms");
    await expectStatus(await s.api(`/forms/${f.id}`, { key: standardKey, method: "PUT", json: { name: "x" } }), 403);
    await expectStatus(await s.api(`/forms/${f.id}`, { key: standardKey, method: "DELETE" }), 403);
    await expectStatus(await s.api(`/forms/${f.id}`), 200);
  });

  test("permission is checked before validation: a standard key with a bad body gets 403", async () => {
    await expectStatus(await s.api("/forms", { key: standardKey, method: "POST", json: {} }), 403);
  });
});

describe("every response", () => {
  test("carries X-Request-Id and X-API-Version: v1, errors included", async () => {
    for (const res of [await s.api("/forms"), await s.api("/forms", { key: null }), await fetch(`${s.url}/nowhere`)]) {
      expect(res.headers.get("x-api-version")).toBe("v1");
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get("content-type")).toContain("application/json");
    }
  });

  test("unknown routes are 404 NOT_FOUND in the envelope", async () => {
    const body = await expectStatus(await s.api("/nothing-here"), 404);
    expect(body).toMatchObject({ status: "error", code: "NOT_FOUND" });
    const root = await expectStatus(await fetch(`${s.url}/v2/forms`), 404);
    expect(root.code).toBe("NOT_FOUND");
  });

  test("no stack traces leak", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", body: "{", headers: { "Content-Type": "application/json" } }), 400);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe("API rate limits", () => {
  test("all five headers on success; 429 with Retry-After and retryAfter when the burst is spent", async () => {
    const t = await startTestServer();
    try {
      const acct = newAccount(t, { name: "Tiny", apiBurstPerMinute: 3, apiLimitPerHour: 50 });
      const res = await t.api("/forms", { key: acct.apiKey });
      await expectStatus(res, 200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("50");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("49");
      expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
      expect(res.headers.get("x-ratelimit-burst-limit")).toBe("3");
      expect(res.headers.get("x-ratelimit-burst-remaining")).toBe("2");
      await expectStatus(await t.api("/forms", { key: acct.apiKey }), 200);
      await expectStatus(await t.api("/forms", { key: acct.apiKey }), 200);
      const limited = await t.api("/forms", { key: acct.apiKey });
      const body = await expectStatus(limited, 429);
      expect(body.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(body.retryAfter).toBeGreaterThanOrEqual(1);
      expect(body.details.retryAfter).toBe(body.retryAfter);
      expect(body.details.limit).toBe(3);
      expect(limited.headers.get("retry-after")).toBe(String(body.retryAfter));
      expect(limited.headers.get("x-ratelimit-burst-remaining")).toBe("0");
      // Another key of the same account has its own buckets.
      const other = operatorKey(t, acct.account.id, "standard_access");
      await expectStatus(await t.api("/forms", { key: other.apiKey }), 200);
    } finally {
      await t.stop();
    }
  });

  test("the hourly plan limit refuses once spent", async () => {
    const t = await startTestServer();
    try {
      const acct = newAccount(t, { name: "Hourly", apiLimitPerHour: 2 });
      await expectStatus(await t.api("/forms", { key: acct.apiKey }), 200);
      await expectStatus(await t.api("/forms", { key: acct.apiKey }), 200);
      const body = await expectStatus(await t.api("/forms", { key: acct.apiKey }), 429);
      expect(body.details.limit).toBe(2);
      expect(body.retryAfter).toBeGreaterThan(60);
    } finally {
      await t.stop();
    }
  });
});

describe("access log", () => {
  test("one line per request, API keys redacted from every path", async () => {
    const { createLogger } = await import("../../../src/lib/log");
    const lines: string[] = [];
    const t = await startTestServer({}, { logger: createLogger("json", (l) => lines.push(l)) });
    try {
      await fetch(`${t.base}/messages/${t.adminKey}`);
      await fetch(`${t.base}/messages/${t.adminKey}/some-id/status`, { method: "PUT", body: "{}", headers: { "Content-Type": "application/json" } });
      await t.api("/forms");
      const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
      expect(requests.length).toBe(3);
      for (const r of requests) {
        expect(r).toHaveProperty("status");
        expect(r).toHaveProperty("ms");
        expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      }
      expect(requests[0].path).toBe(`/v1/messages/txwire_sk_…${t.adminKey.slice(-4)}`);
      expect(lines.join("\n")).not.toContain(t.adminKey);
    } finally {
      await t.stop();
    }
  });
});
