import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../../src/lib/log";
import { SCHEMA_VERSION } from "../../../src/db/migrate";
import { DEFAULT_AUTH_FAILURES_PER_MINUTE } from "../../../src/config";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { insertMessage, iso } from "../../helpers/fixtures";
import { rawRequest } from "../../helpers/raw-http";
import { messageOf, newApiKey } from "../../helpers/reads";

const T0 = Date.parse("2026-11-20T12:00:00.000Z");

describe("keys never reach the log", () => {
  let s: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    s = await startTestServer({}, { logger: createLogger("json", (l) => lines.push(l)) });
  });
  afterAll(() => s.stop());

  test("upper-cased, percent-encoded, Bearer and path keys: no log line holds a whole key; a percent-encoded key authenticates", async () => {
    const key = s.adminKey;
    const body = key.slice("txwire_sk_".length);
    const port = Number(new URL(s.url).port);
    // One character percent-encoded: the decoded key authenticates (decoded once).
    const enc = await fetch(`${s.base}/messages/%74xwire_sk_${body}/next`, { method: "POST" });
    expect([200, 204]).toContain(enc.status);
    await enc.text();
    // Every character encoded, and the key's prefix encoded twice (not decoded twice: 401).
    const all = [...key].map((c) => "%" + c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
    expect((await fetch(`${s.base}/messages/${all}`)).status).toBe(200);
    expect((await fetch(`${s.base}/messages/%2574xwire_sk_${body}`)).status).toBe(401);
    // Upper-cased (refused), lower-cased prefix with upper-case body, Bearer, and a raw target.
    expect((await fetch(`${s.base}/messages/${key.toUpperCase()}/next`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${s.base}/forms`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${s.base}/messages/${key}`)).status).toBe(200);
    await rawRequest(port, `GET /v1/messages/${key.replace("s", "%73")}/nope/x HTTP/1.1\r\nHost: 127.0.0.1`);
    await rawRequest(port, `GET /v1/messages/%E0%A4%A/${key} HTTP/1.1\r\nHost: 127.0.0.1`);
    expect(lines.length).toBeGreaterThanOrEqual(8);
    const forms = [key, key.toUpperCase(), body, encodeURIComponent(key), all];
    for (const l of lines) for (const f of forms) expect(l.toLowerCase()).not.toContain(f.toLowerCase());
    expect(lines.some((l) => l.includes(`txwire_sk_…${key.slice(-4)}`))).toBe(true);
  });
});

describe("failed sign-ins are limited per client IP", () => {
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => clock.now });
  });
  afterAll(() => s.stop());

  test(`after ${DEFAULT_AUTH_FAILURES_PER_MINUTE} refused keys in a minute every key from that IP gets 429 with Retry-After; missing keys do not count`, async () => {
    const wrong = "txwire_sk_" + "x".repeat(40);
    for (let i = 0; i < 30; i++) await expectStatus(await s.api("/forms", { key: null }), 401);
    for (let i = 0; i < DEFAULT_AUTH_FAILURES_PER_MINUTE; i++) await expectStatus(await s.api("/forms", { key: wrong }), 401);
    const limited = await s.api("/forms", { key: wrong });
    expect(limited.headers.get("retry-after")).toBe("3");
    const body = await expectStatus(limited, 429);
    expect(body).toMatchObject({ status: "error", code: "RATE_LIMIT_EXCEEDED", retryAfter: 3, details: { limit: DEFAULT_AUTH_FAILURES_PER_MINUTE, window: "1 minute" } });
    // The right key is refused too while the bucket is empty: a guess cannot be told apart.
    await expectStatus(await s.api("/forms"), 429);
    await expectStatus(await fetch(`${s.base}/messages/${"txwire_sk_" + "y".repeat(40)}/next`, { method: "POST" }), 429);
    // The webhook and public routes are not affected.
    await expectStatus(await fetch(`${s.url}/health`), 200);
    // One token back after 3 s (20 per minute): one more try.
    clock.now += 3_000;
    await expectStatus(await s.api("/forms"), 200);
    clock.now += 60_000;
    await expectStatus(await s.api("/forms"), 200);
  });

  test("--auth-failures-per-minute sets the limit", async () => {
    const t = await startTestServer({ authFailuresPerMinute: 2 });
    try {
      const wrong = "txwire_sk_" + "z".repeat(40);
      await expectStatus(await t.api("/forms", { key: wrong }), 401);
      await expectStatus(await t.api("/forms", { key: wrong }), 401);
      await expectStatus(await t.api("/forms", { key: wrong }), 429);
    } finally {
      await t.stop();
    }
  });
});

describe("malformed requests are answered, never 500", () => {
  let s: TestServer;
  let port: number;
  beforeAll(async () => {
    s = await startTestServer();
    port = Number(new URL(s.url).port);
  });
  afterAll(() => s.stop());
  const json = (r: { body: string }) => JSON.parse(r.body);
  const auth = () => `Authorization: Bearer ${s.adminKey}`;

  test("bad percent-encoding: 400 on messages paths (any method, no key), 404 on the webhook", async () => {
    for (const m of ["GET", "POST", "PUT", "DELETE"]) {
      const r = await rawRequest(port, `${m} /v1/messages/%E0%A4%A/next HTTP/1.1\r\nHost: 127.0.0.1`);
      expect(r.status).toBe(400);
      expect(json(r)).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "path" } });
    }
    const w = await rawRequest(port, "POST /v1/forms/%E0%A4%A/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json", "{}");
    expect(w.status).toBe(404);
    expect(json(w).code).toBe("NOT_FOUND");
  });

  test("CONNECT is 400: this server is not a proxy", async () => {
    for (const target of ["*", "127.0.0.1:443"]) {
      const r = await rawRequest(port, `CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1`);
      expect(r.status).toBe(400);
      expect(json(r).code).toBe("VALIDATION_ERROR");
    }
  });

  test("huge page numbers on forms and messages lists: 400 naming page and its bounds", async () => {
    for (const p of ["/forms", "/messages", "/contacts"]) {
      const b = await expectStatus(await s.api(`${p}?page=99999999999999999999`), 400);
      expect(b).toMatchObject({ code: "VALIDATION_ERROR", message: "page must be an integer from 1 to 1000000", details: { field: "page", requirement: "integer 1-1000000" } });
    }
  });

  test("list and next parameter errors name the parameter and its range", async () => {
    const cases: Array<[string, RequestInit & { json?: unknown }, string, string]> = [
      ["/forms?limit=500", {}, "limit", "limit must be an integer from 1 to 100"],
      ["/messages?limit=0", {}, "limit", "limit must be an integer from 1 to 100"],
      ["/messages?page=abc", {}, "page", "page must be an integer from 1 to 1000000"],
      ["/messages/next?wait=99", {}, "wait", "wait must be an integer from 0 to 30"],
      ["/messages/next?leaseSeconds=5", {}, "leaseSeconds", "leaseSeconds must be an integer from 30 to 3600"],
      ["/messages/next", { method: "POST", json: { limit: 99 } }, "limit", "limit must be an integer from 1 to 50"],
    ];
    for (const [path, init, field, message] of cases) {
      const b = await expectStatus(await s.api(path, init), 400);
      expect(b.details.field).toBe(field);
      expect(b.message).toBe(message);
      expect(b.errors).toEqual([{ field, message }]);
    }
  });

  test("a method a path does not take: 405 with Allow (standard and extension methods)", async () => {
    for (const m of ["PATCH", "PROPFIND", "TRACE", "OPTIONS"]) {
      const r = await rawRequest(port, `${m} /v1/forms HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth()}`);
      expect(r.status).toBe(405);
      expect(r.headers).toMatch(/\r\nallow: GET, HEAD, POST/i);
      expect(json(r)).toMatchObject({ code: "METHOD_NOT_ALLOWED", details: { allowed: ["GET", "HEAD", "POST"] } });
    }
    const patch = await s.api("/messages/bulk", { method: "PATCH" });
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toContain("PUT");
    // HEAD is GET without the body (what uptime monitors send); Allow lists it wherever GET is.
    const head = await fetch(`${s.url}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect((await fetch(`${s.base}/forms`, { method: "HEAD" })).status).toBe(401);
    expect((await fetch(`${s.base}/forms`, { method: "HEAD", headers: { Authorization: `Bearer ${s.adminKey}` } })).status).toBe(200);
    const postOnly = await fetch(`${s.base}/admin/backup`, { method: "HEAD", headers: { Authorization: `Bearer ${s.adminKey}` } });
    expect(postOnly.status).toBe(405);
    expect(postOnly.headers.get("allow")).toBe("POST");
  });

  test("a short Host header cannot make the router see another path than the one checked", async () => {
    const r = await rawRequest(port, "GET /health/v1/forms HTTP/1.1\r\nHost: x");
    expect(r.status).toBe(404);
    const ok = await rawRequest(port, `GET /v1/forms HTTP/1.1\r\nHost: x\r\n${auth()}`);
    expect(ok.status).toBe(200);
  });

  test("an unknown route answers 404 with or without a key", async () => {
    for (const key of [null, undefined, "txwire_sk_" + "q".repeat(40)]) {
      const b = await expectStatus(await s.api("/nothing-here", { key }), 404);
      expect(b.code).toBe("NOT_FOUND");
    }
  });
});

describe("phone protocol: the lease is judged first; every error carries a code", () => {
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => clock.now });
  });
  afterAll(() => s.stop());
  const next = async (json: Record<string, unknown>) => (await expectStatus(await s.api("/messages/next", { method: "POST", json }), 200)).data.messages[0];
  const report = (id: string, json: Record<string, unknown>) => s.api(`/messages/${id}/status`, { method: "PUT", json });

  test("a late report after the lease moved to a phone that already reported: 409 LEASE_CONFLICT, nothing recorded", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    const a = await next({ leaseSeconds: 30, deviceId: "A" });
    clock.now += 31_000;
    const b = await next({ leaseSeconds: 30, deviceId: "B" });
    expect(b.id).toBe(id);
    const sentAt = iso(clock.now);
    await expectStatus(await report(id, { status: "sent", sentAt, leaseToken: b.leaseToken }), 200);
    const before = await messageOf(s, id);
    for (const late of [{ status: "failed", failureReason: "network-error" }, { status: "sent", sentAt: iso(clock.now - 1000) }, { status: "sent", sentAt }]) {
      const body = await expectStatus(await report(id, { ...late, leaseToken: a.leaseToken }), 409);
      expect(body.code).toBe("LEASE_CONFLICT");
    }
    expect(await messageOf(s, id)).toEqual(before);
    // B's own repeat stays a harmless 200.
    await expectStatus(await report(id, { status: "sent", sentAt, leaseToken: b.leaseToken }), 200);
  });

  test("an illegal move answers 400 'Invalid status transition' with code INVALID_TRANSITION", async () => {
    const id = insertMessage(s.running.deps, s.accountId);
    await expectStatus(await report(id, { status: "cancelled" }), 200);
    const body = await expectStatus(await report(id, { status: "sent", sentAt: iso(clock.now) }), 400);
    expect(body).toMatchObject({ status: "error", code: "INVALID_TRANSITION", message: "Invalid status transition" });
  });
});

describe("smaller deviations", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  test("form settings defaults delayMinutes 0 and timezone UTC are filled in on create", async () => {
    const { settings: _omit, ...noSettings } = formBody();
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: noSettings }), 201)).data.form;
    expect(f.settings).toMatchObject({ delayMinutes: 0, timezone: "UTC" });
    const g = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 5 } }) }), 201)).data.form;
    expect(g.settings).toMatchObject({ delayMinutes: 5, timezone: "UTC" });
  });

  test("form definition errors show the value provided", async () => {
    const b = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: -3 } }) }), 400);
    expect(b.details).toMatchObject({ field: "settings.delayMinutes", provided: -3 });
    const c = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ fields: [{ name: "x", type: "colour" }] }) }), 400);
    expect(c.details).toMatchObject({ field: "fields[0].type", provided: "colour" });
  });

  test("a permission error names the real method and path", async () => {
    const std = await newApiKey(s, "standard_access");
    const id = crypto.randomUUID();
    const b = await expectStatus(await s.api(`/forms/${id}`, { method: "DELETE", key: std }), 403);
    expect(b.details.endpoint).toBe(`DELETE /forms/${id}`);
    const c = await expectStatus(await s.api("/admin/backup", { method: "POST", key: std }), 403);
    expect(c.details.endpoint).toBe("POST /admin/backup");
  });

  test("webhook 404 and 413 answers carry the rate-limit headers", async () => {
    const port = Number(new URL(s.url).port);
    const missing = await fetch(`${s.base}/forms/${crypto.randomUUID()}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(missing.status).toBe(404);
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const big = await rawRequest(port, `POST /v1/forms/${f.id}/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json`, JSON.stringify({ phoneNumber: "+12015550100", x: "a".repeat(20_000) }));
    expect(big.status).toBe(413);
    for (const h of [missing.headers, new Headers(big.headers.split("\r\n").slice(1).map((l) => l.split(/:\s*/, 2) as [string, string]))]) {
      for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) expect(h.get(name)).toBeTruthy();
    }
  });

  test("the operations guide's /health example shows the current schemaVersion", () => {
    const readme = readFileSync(join(import.meta.dir, "..", "..", "..", "docs", "operations.md"), "utf8");
    const shown = [...readme.matchAll(/"schemaVersion":\s*(\d+)/g)].map((m) => Number(m[1]));
    expect(shown.length).toBeGreaterThan(0);
    for (const v of shown) expect(v).toBe(SCHEMA_VERSION);
  });
});
