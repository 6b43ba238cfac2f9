/**
 * SMSGate's whole client API, call by call, against a real Textwire server: the exact requests of
 * client-py v3.2.2 and client-go v1.13.2 (neither can run here: each request is replayed as the
 * library writes it, citing its file and method) and of client-ts v3.4.0 (newer than the pinned
 * npm package), checking every field each library parses; the webhook events with SMSGate's
 * payload fields and the device filter; a phone's Failed report at once; the tokens; the health
 * probes (docs/api-decisions.md, "The SMSGate ecosystem, every call").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { expectStatus, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator, gsonDate } from "../../helpers/smsgate-emulator";
import { createLogger } from "../../../src/lib/log";
import { SMSGATE_EVENTS } from "../../../src/domain/smsgate-webhook";
import { requeueForRetry } from "../../../src/db/stores/messages/retries";
import { messageOf, newApiKey, raiseApiLimits } from "../../helpers/reads";
import { newAccount } from "../../helpers/accounts";

let ts: TestServer;
let standardKey: string;
let other: { accountId: string; key: string };
const logLines: string[] = [];
const phones: SmsGateEmulator[] = [];
/** What an SMSGate user's receiver got. */
const received: Array<{ path: string; body: any; timestamp: string | null; signature: string | null; raw: string }> = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const raw = await req.text();
      received.push({ path: new URL(req.url).pathname, body: JSON.parse(raw), raw, timestamp: req.headers.get("x-timestamp"), signature: req.headers.get("x-signature") });
      return new Response("ok");
    },
  });
  ts = await startTestServer({ allowPrivateWebhookUrls: true, sendRatePerMinute: 600 }, { logger: createLogger("json", (l) => logLines.push(l)) });
  standardKey = await newApiKey(ts, "standard_access");
  const o = newAccount(ts, { name: "Other shop" });
  other = { accountId: o.account.id, key: o.apiKey };
  // Every call of three libraries in one file: above a plan's burst limit, which is not what is tested here.
  raiseApiLimits(ts);
});
afterAll(async () => {
  for (const p of phones) p.disconnect();
  await ts.stop();
  receiver.stop(true);
});

const basic = (login: string, password: string) => `Basic ${btoa(`${login}:${password}`)}`;
const admin = () => basic(ts.accountId, ts.adminKey);

/** One request as a client library writes it: method, path below /3rdparty/v1, headers, JSON body. */
async function call(method: string, path: string, opts: { auth?: string | null; json?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const auth = opts.auth === undefined ? admin() : opts.auth;
  if (auth) headers.Authorization = auth;
  if (opts.json !== undefined) headers["Content-Type"] ??= "application/json";
  const res = await fetch(`${ts.url}/3rdparty/v1${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function expectError(r: { status: number; body: any }, status: number) {
  expect([r.status, r.body?.code, typeof r.body?.message]).toEqual([status, status, "string"]);
  return r.body as { message: string; code: number; data: string };
}

async function phone(name: string) {
  const token = (await expectStatus(await ts.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  const p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, name, behaviour: "hold" });
  await p.register(token);
  await p.loadSettings();
  p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
  phones.push(p);
  return p;
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** A phone takes what is due and reports each item's state (the app's PATCH /message). */
async function takeAndReport(p: SmsGateEmulator, state: "Sent" | "Failed", error: string | null = null) {
  const res = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } });
  const items = (await res.json()) as Array<{ id: string; phoneNumbers: string[] }>;
  for (const m of items) {
    const states: Record<string, string> = { Processed: gsonDate(Date.now()), [state]: gsonDate(Date.now()) };
    const r = await fetch(`${ts.url}/api/mobile/v1/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id: m.id, state, recipients: m.phoneNumbers.map((n) => ({ phoneNumber: n, state, error })), states }]),
    });
    expect(r.status).toBe(204);
  }
  return items;
}

/**
 * The phone takes and reports until it has taken the text to `number` (texts other tests left
 * queued are reported too); returns that text as the phone got it.
 */
async function reportUntil(p: SmsGateEmulator, number: string, state: "Sent" | "Failed", error: string | null = null) {
  return until(`the text to ${number}`, async () => (await takeAndReport(p, state, error)).find((m) => m.phoneNumbers.includes(number)));
}

describe("client-py v3.2.2 (android_sms_gateway/client.py, domain.py)", () => {
  test("get_settings, update_settings (PUT) and patch_settings (PATCH) in snake_case; every key DeviceSettings.from_dict reads comes back", async () => {
    // SettingsMessages/SettingsWebhooks/SettingsPing/SettingsLogs.asdict write snake_case.
    const put = await call("PUT", "/settings", { json: { messages: { limit_period: "PerHour", limit_value: 50, send_interval_min: 1, send_interval_max: 3, sim_selection_mode: "RoundRobin", processing_order: "FIFO", log_lifetime_days: 7 }, logs: { lifetime_days: 5 }, ping: { interval_seconds: 60 }, webhooks: { retry_count: 3, internet_required: true } } });
    expect(put.status).toBe(200);
    const patched = await call("PATCH", "/settings", { json: { messages: { work_hours_enabled: true, work_hours_start: "09:00", work_hours_end: "18:30" } } });
    expect(patched.status).toBe(200);
    const got = await call("GET", "/settings");
    expect(got.status).toBe(200);
    expect(got.body.messages).toEqual({ limit_period: "PerHour", limit_value: 50, send_interval_min: 1, send_interval_max: 3, sim_selection_mode: "RoundRobin", processing_order: "FIFO", log_lifetime_days: 7, work_hours_enabled: true, work_hours_start: "09:00", work_hours_end: "18:30" });
    expect(got.body.logs).toEqual({ lifetime_days: 5 });
    expect(got.body.ping).toEqual({ interval_seconds: 60 });
    expect(got.body.webhooks).toEqual({ retry_count: 3, internet_required: true, signing_key: expect.any(String) });
    await expectError(await call("PATCH", "/settings", { json: { messages: { work_hours_start: "9am" } } }), 400);
    // Back to Textwire's own pace for the phones of the tests below (50 an hour would hold them).
    expect((await call("PUT", "/settings", { json: {} })).status).toBe(200);
  });

  test("get_messages with MessagesQueryFilter (from_/to isoformat without a zone, state, device_id) and QueryPagination", async () => {
    const p = await phone("Python phone");
    const sent = await call("POST", "/messages", { json: { textMessage: { text: "Your table is ready" }, phoneNumbers: ["+12025550111"], withDeliveryReport: true } });
    expect(sent.status).toBe(202);
    await reportUntil(p, "+12025550111", "Sent");
    const qs = new URLSearchParams({ from: "2020-01-01T00:00:00", to: "2099-01-01T00:00:00", state: "Sent", deviceId: p.id, limit: "10", offset: "0" });
    const list = await call("GET", `/messages?${qs}`);
    expect(list.status).toBe(200);
    const total = Number(list.headers.get("x-total-count"));
    expect(total).toBe(list.body.length);
    list.body = list.body.filter((m: any) => m.id === sent.body.id);
    // MessageState.from_dict: id, deviceId, state, recipients[].phoneNumber/state/error, isHashed, isEncrypted, states.
    expect(list.body).toEqual([{ id: sent.body.id, deviceId: p.id, state: "Sent", isHashed: false, isEncrypted: false, recipients: [{ phoneNumber: "+12025550111", state: "Sent" }], states: { Pending: expect.any(String), Processed: expect.any(String), Sent: expect.any(String) } }]);
    expect((await call("GET", `/messages?state=Pending&deviceId=${p.id}`)).body).toEqual([]);
    expect((await call("GET", "/messages?deviceId=not-a-phone")).body).toEqual([]);
  });

  test("export_inbox posts to /messages/inbox/export; health_check and the three probes below the base URL", async () => {
    const p = await phone("Export phone");
    await p.connect();
    const since = new Date("2026-11-01T00:00:00Z");
    // MessagesExportRequest.asdict: deviceId, since.isoformat(), until.isoformat().
    const exp = await call("POST", "/messages/inbox/export", { json: { deviceId: p.id, since: "2026-11-01T00:00:00+00:00", until: "2026-11-01T23:59:59+00:00" } });
    expect(exp.status).toBe(202);
    await until("MessagesExportRequested", () => p.events.find((e) => e.event === "MessagesExportRequested"));
    expect(since.getTime()).toBeGreaterThan(0);
    // Gone from the account (a connected phone would take the other tests' texts).
    p.disconnect();
    expect((await call("DELETE", `/devices/${p.id}`)).status).toBe(204);
    await expectError(await call("POST", "/messages/inbox/export", { json: { since: "2026-11-01T00:00:00" } }), 400);
    for (const path of ["/health", "/health/live", "/health/ready", "/health/startup"]) {
      const h = await call("GET", path, { auth: null });
      // HealthResponse.from_dict: status, version, releaseId, checks{name: status, description, observedValue, observedUnit}.
      expect([path, h.status, h.body.status]).toEqual([path, 200, "pass"]);
      expect(h.body).toMatchObject({ version: expect.any(String), releaseId: expect.any(Number), checks: expect.any(Object) });
      for (const c of Object.values(h.body.checks) as any[]) expect(c).toEqual({ status: "pass", description: expect.any(String), observedValue: expect.any(Number), observedUnit: expect.any(String) });
    }
    // SMSGate's server also answers the probes at its root.
    for (const path of ["/health/live", "/health/ready", "/health/startup"]) {
      const res = await fetch(`${ts.url}${path}`);
      expect([path, res.status, ((await res.json()) as any).status]).toEqual([path, 200, "pass"]);
    }
  });

  test("generate_token, refresh_token and revoke_token: TokenResponse.from_dict reads accessToken, tokenType, id, expiresAt, refreshToken", async () => {
    const gen = await call("POST", "/auth/token", { json: { scopes: ["messages:send", "messages:read"], ttl: 600 } });
    expect(gen.status).toBe(201);
    expect([typeof gen.body.accessToken, gen.body.tokenType, typeof gen.body.id, typeof gen.body.expiresAt, typeof gen.body.refreshToken]).toEqual(["string", "Bearer", "string", "string", "string"]);
    expect(Date.parse(gen.body.expiresAt) - Date.now()).toBeLessThanOrEqual(600_000);
    // refresh_token: the refresh token replaces the Authorization header.
    const ref = await call("POST", "/auth/token/refresh", { auth: `Bearer ${gen.body.refreshToken}` });
    expect(ref.status).toBe(201);
    expect(ref.body.id).not.toBe(gen.body.id);
    const del = await call("DELETE", `/auth/token/${ref.body.id}`);
    expect([del.status, del.body]).toEqual([204, undefined]);
    await expectError(await call("GET", `/messages/whatever`, { auth: `Bearer ${ref.body.accessToken}` }), 401);
  });

  test("list_devices, get_webhooks, create_webhook, delete_webhook (Device.from_dict: id, name, createdAt, updatedAt, deletedAt, lastSeen)", async () => {
    const devices = await call("GET", "/devices");
    expect(devices.body.length).toBeGreaterThan(0);
    for (const d of devices.body) expect(d).toMatchObject({ id: expect.any(String), name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String), lastSeen: expect.any(String) });
    // Webhook.asdict: url, event, and id / deviceId only when set.
    const created = await call("POST", "/webhooks", { json: { url: `http://127.0.0.1:${receiver.port}/py`, event: "sms:data-received" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), url: `http://127.0.0.1:${receiver.port}/py`, event: "sms:data-received", deviceId: null });
    expect((await call("GET", "/webhooks")).body.map((w: any) => w.id)).toContain(created.body.id);
    expect((await call("DELETE", `/webhooks/${created.body.id}`)).status).toBe(204);
  });
});

describe("client-go v1.13.2 (smsgateway/client.go)", () => {
  test("ListInboxMessages: GET /inbox?type&limit&offset&from&to&deviceId, X-Total-Count; IncomingMessage fields", async () => {
    const p = await phone("Inbox phone");
    expect((await p.webhook("sms:received", { messageId: "go-in-1", message: "Is the shop open?", sender: "+14155550101", recipient: "+14155550999", simNumber: 2, receivedAt: gsonDate(Date.now() - 1000) })).status).toBe(200);
    expect((await p.webhook("sms:received", { messageId: "go-in-2", message: "Thanks!", phoneNumber: "+14155550102", receivedAt: gsonDate(Date.now()) })).status).toBe(200);
    const qs = new URLSearchParams({ type: "SMS", limit: "1", offset: "0", from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z", deviceId: p.id });
    const page = await call("GET", `/inbox?${qs}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("x-total-count")).toBe("2");
    expect(page.body).toEqual([{ id: expect.any(String), type: "SMS", sender: "+14155550102", contentPreview: "Thanks!", createdAt: expect.any(String) }]);
    const second = await call("GET", `/inbox?limit=1&offset=1&deviceId=${p.id}`);
    expect(second.body).toEqual([{ id: expect.any(String), type: "SMS", sender: "+14155550101", recipient: "+14155550999", simNumber: 2, contentPreview: "Is the shop open?", createdAt: expect.any(String) }]);
    expect((await call("GET", `/inbox?type=MMS&deviceId=${p.id}`)).body).toEqual([]);
    // Another account's list never shows them.
    expect((await call("GET", `/inbox?deviceId=${p.id}`, { auth: basic(other.accountId, other.key) })).body).toEqual([]);
    for (const q of ["limit=0", "limit=501", "type=FAX", "from=yesterday", "offset=-1"]) await expectError(await call("GET", `/inbox?${q}`), 400);
  });

  test("GenerateToken (snake_case TokenResponse), RefreshToken (the refresh token as Bearer), RevokeToken; the token works wherever a key does, within its scopes", async () => {
    const gen = await call("POST", "/auth/token", { json: { scopes: ["messages:send", "messages:list", "webhooks:list"] } });
    expect(gen.status).toBe(201);
    expect([typeof gen.body.id, gen.body.token_type, typeof gen.body.access_token, typeof gen.body.refresh_token, typeof gen.body.expires_at]).toEqual(["string", "Bearer", "string", "string", "string"]);
    expect(gen.body.id).toHaveLength(21);
    // Without ttl: SMSGate's default access lifetime (15 minutes).
    expect(Math.abs(Date.parse(gen.body.expires_at) - Date.now() - 15 * 60_000)).toBeLessThan(60_000);
    const bearer = `Bearer ${gen.body.access_token}`;
    expect((await call("POST", "/messages?skipPhoneValidation=false", { auth: bearer, json: { message: "Sent with a token", phoneNumbers: ["+12025550112"] } })).status).toBe(202);
    expect((await call("GET", "/messages?limit=1", { auth: bearer })).status).toBe(200);
    expect((await call("GET", "/webhooks", { auth: bearer })).status).toBe(200);
    // Outside its scopes: 403 "scope required", as SMSGate answers.
    const refused = await expectError(await call("GET", "/settings", { auth: bearer }), 403);
    expect(refused.message).toContain("settings:read");
    await expectError(await call("GET", "/devices", { auth: bearer }), 403);
    // A token cannot mint tokens without tokens:manage, nor refresh with an access token.
    await expectError(await call("POST", "/auth/token", { auth: bearer, json: { scopes: ["all:any"] } }), 403);
    await expectError(await call("POST", "/auth/token/refresh", { auth: bearer }), 403);
    // Only Textwire's SMSGate API takes it: /v1 does not.
    expect((await ts.api("/messages", { key: gen.body.access_token })).status).toBe(401);

    const refreshed = await call("POST", "/auth/token/refresh", { auth: `Bearer ${gen.body.refresh_token}` });
    expect(refreshed.status).toBe(201);
    expect(refreshed.body.refresh_token).not.toBe(gen.body.refresh_token);
    // A refresh token is spent once: presenting it again is a 401.
    await expectError(await call("POST", "/auth/token/refresh", { auth: `Bearer ${gen.body.refresh_token}` }), 401);
    expect((await call("GET", "/messages?limit=1", { auth: `Bearer ${refreshed.body.access_token}` })).status).toBe(200);

    // RevokeToken: 204 with no body; the token and its refresh token stop at once.
    const revoke = await call("DELETE", `/auth/token/${refreshed.body.id}`);
    expect([revoke.status, revoke.body]).toEqual([204, undefined]);
    await expectError(await call("GET", "/messages?limit=1", { auth: `Bearer ${refreshed.body.access_token}` }), 401);
    await expectError(await call("POST", "/auth/token/refresh", { auth: `Bearer ${refreshed.body.refresh_token}` }), 401);
    // The first access token was not revoked and still works.
    expect((await call("GET", "/messages?limit=1", { auth: bearer })).status).toBe(200);
  });

  test("tokens: bad requests 400, another account's jti 404, a token dies with its key, a standard key's token keeps the key's limits, no token in the logs", async () => {
    for (const body of [{}, { scopes: [] }, { scopes: ["everything"] }, { scopes: ["messages:send"], ttl: "long" }, { scopes: ["messages:send"], ttl: -5 }, [1], { scopes: "messages:send" }]) {
      await expectError(await call("POST", "/auth/token", { json: body }), 400);
    }
    const mine = (await call("POST", "/auth/token", { json: { scopes: ["all:any"] } })).body;
    await expectError(await call("DELETE", `/auth/token/${mine.id}`, { auth: basic(other.accountId, other.key) }), 404);
    await expectError(await call("DELETE", `/auth/token/${"x".repeat(300)}`), 400);
    expect((await call("GET", "/settings", { auth: `Bearer ${mine.access_token}` })).status).toBe(200);
    // all:any does not refresh.
    await expectError(await call("POST", "/auth/token/refresh", { auth: `Bearer ${mine.access_token}` }), 403);

    // A token signed with another secret, or tampered with, is refused.
    const [h, p] = mine.access_token.split(".");
    const forged = `${h}.${p}.${createHmac("sha256", "not-the-secret").update(`${h}.${p}`).digest("base64url")}`;
    await expectError(await call("GET", "/messages", { auth: `Bearer ${forged}` }), 401);
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const otherSub = Buffer.from(JSON.stringify({ ...claims, sub: other.accountId })).toString("base64url");
    await expectError(await call("GET", "/messages", { auth: `Bearer ${h}.${otherSub}.${mine.access_token.split(".")[2]}` }), 401);

    // Another account's token sees only that account.
    const theirs = (await call("POST", "/auth/token", { auth: basic(other.accountId, other.key), json: { scopes: ["all:any"] } })).body;
    const sentHere = (await call("POST", "/messages", { json: { message: "Only mine", phoneNumbers: ["+12025550113"] } })).body;
    await expectError(await call("GET", `/messages/${sentHere.id}`, { auth: `Bearer ${theirs.access_token}` }), 404);

    // A standard key's token cannot do what the key cannot (register webhooks).
    const std = (await call("POST", "/auth/token", { auth: basic(ts.accountId, standardKey), json: { scopes: ["all:any"] } })).body;
    await expectError(await call("POST", "/webhooks", { auth: `Bearer ${std.access_token}`, json: { url: "https://example.com/hook", event: "sms:sent" } }), 403);
    // Revoking the key ends its tokens.
    const listed = (await (await ts.api("/api-keys")).json() as any).data.keys;
    const keyId = listed.find((k: any) => !k.revokedAt && k.key.endsWith(standardKey.slice(-4))).keyId as string;
    expect((await call("GET", "/messages?limit=1", { auth: `Bearer ${std.access_token}` })).status).toBe(200);
    expect((await ts.api(`/api-keys/${keyId}`, { method: "DELETE" })).status).toBe(200);
    await expectError(await call("GET", "/messages?limit=1", { auth: `Bearer ${std.access_token}` }), 401);
    standardKey = await newApiKey(ts, "standard_access");

    // At most 1,000 live tokens per account (each request makes two): then 409 until some are revoked or expire.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    // arrange: 999 live tokens at once (the API makes two per request: 500 requests would be this
    // test's whole run); the count of the live ones only says where to start.
    const db = ts.running.deps.sqlite;
    const live = (db.query("SELECT count(*) AS n FROM smsgate_tokens WHERE account_id = ? AND revoked_at IS NULL").get(other.accountId) as { n: number }).n;
    const fill = db.query("INSERT INTO smsgate_tokens (jti, account_id, key_id, token_use, parent_jti, scopes, expires_at, revoked_at, created_at) VALUES (?, ?, 'k', 'access', NULL, '[]', ?, NULL, ?)");
    db.transaction(() => {
      for (let i = live; i < 999; i++) fill.run(`fill-${i}`, other.accountId, later, new Date().toISOString());
    })();
    const full = await expectError(await call("POST", "/auth/token", { auth: basic(other.accountId, other.key), json: { scopes: ["all:any"] } }), 409);
    expect(full.message).toContain("1000");
    db.query("DELETE FROM smsgate_tokens WHERE jti LIKE 'fill-%'").run(); // arrange: the filler tokens gone again
    const expired = await call("GET", "/messages", { auth: `Bearer ${forged}` });
    expect(expired.body.message).toContain("token");

    const log = logLines.join("\n");
    for (const t of [mine.access_token, mine.refresh_token, theirs.access_token, std.access_token]) expect(log).not.toContain(t.split(".")[2]);
  });

  test("RegisterWebhook takes every one of SMSGate's 14 events; ListWebhooks takes a standard key (registering still needs an admin key)", async () => {
    expect(SMSGATE_EVENTS).toHaveLength(14);
    const ids: string[] = [];
    for (const event of SMSGATE_EVENTS) {
      const r = await call("POST", "/webhooks", { json: { id: `all-${event.replace(/:/g, "-")}`, url: `http://127.0.0.1:${receiver.port}/all`, event } });
      expect([event, r.status, r.body.event]).toEqual([event, 201, event]);
      ids.push(r.body.id);
    }
    const listed = await call("GET", "/webhooks", { auth: basic(ts.accountId, standardKey) });
    expect(listed.status).toBe(200);
    expect(listed.body.filter((w: any) => ids.includes(w.id)).map((w: any) => w.event).sort()).toEqual([...SMSGATE_EVENTS].sort());
    await expectError(await call("POST", "/webhooks", { auth: basic(ts.accountId, standardKey), json: { url: "https://example.com/x", event: "sms:sent" } }), 403);
    await expectError(await call("POST", "/webhooks", { json: { url: "https://example.com/x", event: "sms:teleported" } }), 400);
    // Another account sees none of them.
    expect((await call("GET", "/webhooks", { auth: basic(other.accountId, other.key) })).body).toEqual([]);
    for (const id of ids) expect((await call("DELETE", `/webhooks/${id}`)).status).toBe(204);
  });
});

describe("client-ts v3.4.0 (src/client.ts)", () => {
  test("listMessages(state, deviceId, includeContent, sort), listInboxMessages(includeAttachments), generateToken/revokeToken", async () => {
    const p = await phone("TS phone");
    await call("POST", "/message", { json: { textMessage: { text: "Pick-up at 5" }, phoneNumbers: ["+12025550114"] } });
    await reportUntil(p, "+12025550114", "Sent");
    const url = new URL(`${ts.url}/3rdparty/v1/messages`);
    url.searchParams.append("from", new Date(Date.now() - 60_000).toISOString());
    url.searchParams.append("state", "Sent");
    url.searchParams.append("deviceId", p.id);
    url.searchParams.append("limit", "100");
    url.searchParams.append("offset", "0");
    url.searchParams.append("includeContent", "true");
    url.searchParams.append("sort", "-created_at");
    const res = await fetch(url, { headers: { Authorization: admin() } });
    const body = (await res.json()) as any[];
    expect(res.status).toBe(200);
    expect(body.every((m) => m.deviceId === p.id && m.state === "Sent")).toBe(true);
    expect(body.find((m) => m.recipients[0].phoneNumber === "+12025550114")?.textMessage).toEqual({ text: "Pick-up at 5" });
    const inbox = new URL(`${ts.url}/3rdparty/v1/inbox`);
    inbox.searchParams.append("deviceId", p.id);
    inbox.searchParams.append("includeAttachments", "false");
    inbox.searchParams.append("limit", "10");
    const ir = await fetch(inbox, { headers: { Authorization: admin() } });
    expect([ir.status, await ir.json()]).toEqual([200, []]);
    const tok = await call("POST", "/auth/token", { json: { scopes: ["devices:list"], ttl: 3600 } });
    expect([typeof tok.body.access_token, tok.body.token_type, typeof tok.body.id, typeof tok.body.expires_at]).toEqual(["string", "Bearer", "string", "string"]);
    // ttl 3600 is kept (at most an hour is given).
    expect(Math.abs(Date.parse(tok.body.expires_at) - Date.now() - 3_600_000)).toBeLessThan(60_000);
    expect((await call("GET", "/devices", { auth: `Bearer ${tok.body.access_token}` })).status).toBe(200);
    expect((await call("DELETE", `/auth/token/${tok.body.id}`)).status).toBe(204);
  });
});

describe("webhook payloads as SMSGate sends them", () => {
  test("sms:received carries sender, recipient, simNumber, partsCount; a registration's deviceId keeps only that phone's events", async () => {
    const a = await phone("Front desk");
    const b = await phone("Back office");
    expect((await call("POST", "/webhooks", { json: { id: "only-a", url: `http://127.0.0.1:${receiver.port}/only-a`, event: "sms:received", deviceId: a.id } })).status).toBe(201);
    expect((await call("POST", "/webhooks", { json: { id: "any-phone", url: `http://127.0.0.1:${receiver.port}/any`, event: "sms:received" } })).status).toBe(201);
    await expectError(await call("POST", "/webhooks", { auth: basic(other.accountId, other.key), json: { url: `http://127.0.0.1:${receiver.port}/x`, event: "sms:received", deviceId: a.id } }), 400);
    await a.webhook("sms:received", { messageId: "pa-1", message: "From A", sender: "+14155550131", recipient: "+14155550900", simNumber: 1, receivedAt: gsonDate(Date.now()) });
    await b.webhook("sms:received", { messageId: "pb-1", message: "From B", phoneNumber: "+14155550132", simNumber: 2, receivedAt: gsonDate(Date.now()) });
    await until("both deliveries to the unfiltered hook", () => received.filter((r) => r.path === "/any").length >= 2);
    await until("A's delivery", () => received.some((r) => r.path === "/only-a"));
    await Bun.sleep(300);
    const onlyA = received.filter((r) => r.path === "/only-a");
    expect(onlyA.map((r) => r.body.payload.message)).toEqual(["From A"]);
    expect(onlyA[0].body).toEqual({
      deviceId: a.id,
      event: "sms:received",
      id: expect.any(String),
      webhookId: "only-a",
      payload: { messageId: "pa-1", message: "From A", phoneNumber: "+14155550131", sender: "+14155550131", recipient: "+14155550900", simNumber: 1, partsCount: 1, receivedAt: expect.any(String) },
    });
    const fromB = received.find((r) => r.path === "/any" && r.body.payload.message === "From B")!;
    expect(fromB.body.payload).toMatchObject({ sender: "+14155550132", recipient: null, simNumber: 2, partsCount: 1 });
    // Signed with the account's SMSGate key, as before.
    const key = ((await (await ts.api("/account/smsgate-clients")).json()) as any).data.signingKey as string;
    expect(fromB.signature).toBe(createHmac("sha256", key).update(fromB.raw + fromB.timestamp).digest("hex"));
    await call("DELETE", "/webhooks/only-a");
    await call("DELETE", "/webhooks/any-phone");
  });

  test("sms:data-received and mms:received, as the phone reports them, reach the registrations of that event only", async () => {
    const p = await phone("Data phone");
    expect(p.webhooks.map((w) => w.event)).toEqual(expect.arrayContaining(["sms:data-received", "mms:received"]));
    expect((await call("POST", "/webhooks", { json: { id: "data-in", url: `http://127.0.0.1:${receiver.port}/data`, event: "sms:data-received" } })).status).toBe(201);
    expect((await call("POST", "/webhooks", { json: { id: "mms-in", url: `http://127.0.0.1:${receiver.port}/mms`, event: "mms:received", deviceId: p.id } })).status).toBe(201);
    // Textwire's own endpoints never take them, even with "*".
    const star = (await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", json: { url: `http://127.0.0.1:${receiver.port}/star`, events: ["*"], allowInsecure: true } }), 201)).data.endpoint;
    expect((await p.webhook("sms:data-received", { messageId: "d-1", data: "SGVsbG8=", phoneNumber: "+14155550141", simNumber: 1, receivedAt: gsonDate(Date.now()), extra: "x".repeat(10) })).status).toBe(200);
    expect((await p.webhook("mms:received", { messageId: "m-1", phoneNumber: "+14155550142", sender: "+14155550142", recipient: null, simNumber: 2, transactionId: "T1", subject: "Photo", contentClass: "IMAGE_BASIC", size: 20480, receivedAt: gsonDate(Date.now()) })).status).toBe(200);
    const data = await until("sms:data-received", () => received.find((r) => r.path === "/data"));
    expect(data.body).toEqual({ deviceId: p.id, event: "sms:data-received", id: expect.any(String), webhookId: "data-in", payload: { messageId: "d-1", data: "SGVsbG8=", phoneNumber: "+14155550141", sender: "+14155550141", simNumber: 1, receivedAt: expect.any(String) } });
    const mms = await until("mms:received", () => received.find((r) => r.path === "/mms"));
    expect(mms.body.payload).toEqual({ messageId: "m-1", phoneNumber: "+14155550142", sender: "+14155550142", recipient: null, simNumber: 2, transactionId: "T1", subject: "Photo", contentClass: "IMAGE_BASIC", size: 20480, receivedAt: expect.any(String) });
    await Bun.sleep(200);
    expect(received.filter((r) => r.path === "/star" && ["sms:data-received", "mms:received"].includes(r.body.type))).toEqual([]);
    expect((await ts.api(`/webhook-endpoints/${star.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    // Nothing was stored as a received text.
    expect((await call("GET", `/inbox?deviceId=${p.id}`)).body).toEqual([]);
    await call("DELETE", "/webhooks/data-in");
    await call("DELETE", "/webhooks/mms-in");
  });

  test("a phone's Failed report: Failed at once on the SMSGate API and sms:failed at once; Textwire's retry shows as a resend (Processed, then Sent)", async () => {
    const p = await phone("Failing phone");
    expect((await call("POST", "/webhooks", { json: { id: "fails", url: `http://127.0.0.1:${receiver.port}/fails`, event: "sms:failed", deviceId: p.id } })).status).toBe(201);
    expect((await call("POST", "/webhooks", { json: { id: "sent", url: `http://127.0.0.1:${receiver.port}/sent`, event: "sms:sent" } })).status).toBe(201);
    const sent = (await call("POST", "/messages", { json: { id: "retry-me", textMessage: { text: "See you at 6" }, phoneNumbers: ["+12025550115"], simNumber: 1 } })).body;
    expect(sent.id).toBe("retry-me");
    const taken = [await reportUntil(p, "+12025550115", "Failed", "RESULT_ERROR_GENERIC_FAILURE")];
    // Textwire will try again (a transient failure, and one generic failure does not pause the
    // phone: docs/phones.md, pauses and failover), yet the client reads Failed now.
    const state = await call("GET", "/messages/retry-me");
    expect(state.body).toMatchObject({ state: "Failed", recipients: [{ phoneNumber: "+12025550115", state: "Failed", error: "RESULT_ERROR_GENERIC_FAILURE" }], states: { Failed: expect.any(String) } });
    const msg = (await messageOf(ts, taken[0].id))!;
    expect(msg.status).toBe("queued");
    expect((await call("GET", "/messages?state=Failed&limit=100")).body.map((m: any) => m.id)).toContain("retry-me");
    const failed = await until("sms:failed", () => received.find((r) => r.path === "/fails"));
    expect(failed.body).toMatchObject({ event: "sms:failed", deviceId: p.id, webhookId: "fails", payload: { messageId: "retry-me", phoneNumber: "+12025550115", recipient: "+12025550115", simNumber: 1, partsCount: 1, reason: "RESULT_ERROR_GENERIC_FAILURE", failedAt: expect.any(String) } });
    // Textwire records the attempt on the text (its timeline), and will try again later.
    expect(msg.timeline.map((e: any) => e.kind)).toContain("attempt_failed");
    expect(Date.parse(msg.scheduledFor)).toBeGreaterThan(Date.now());

    // The retry comes due: a new attempt, as SMSGate shows a resend.
    // arrange: the retry brought due now in the queue (the server's clock is real here; the retry
    // waits minutes)
    const queue = ts.running.deps.queue;
    const entry = queue.get(taken[0].id)!;
    queue.remove(entry.id);
    queue.insert({ ...entry, scheduledFor: Date.now() - 1000 });
    const again = await until("the retry handed out", async () => {
      const res = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } });
      const items = (await res.json()) as any[];
      return items.some((m) => m.id === taken[0].id) ? items : false;
    });
    expect(again.map((m) => m.id)).toContain(taken[0].id);
    expect((await call("GET", "/messages/retry-me")).body).toMatchObject({ state: "Processed", recipients: [{ state: "Processed" }] });
    const r = await fetch(`${ts.url}/api/mobile/v1/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id: taken[0].id, state: "Sent", recipients: [{ phoneNumber: "+12025550115", state: "Sent", error: null }], states: { Sent: gsonDate(Date.now()) } }]),
    });
    expect(r.status).toBe(204);
    expect((await call("GET", "/messages/retry-me")).body.state).toBe("Sent");
    await until("sms:sent", () => received.find((x) => x.path === "/sent" && x.body.payload.messageId === "retry-me"));

    // A lease that ran out unreported is no failure report (the phone may have sent it): the retry reads Pending, no sms:failed.
    const quiet = (await call("POST", "/messages", { json: { id: "no-report", textMessage: { text: "Are you coming?" }, phoneNumbers: ["+12025550116"] } })).body;
    expect(quiet.id).toBe("no-report");
    const textId = ((await expectStatus(await ts.api("/messages?limit=100&status=queued"), 200)).data.messages as any[]).find((m) => m.content === "Are you coming?")!.id as string;
    const failsBefore = received.filter((r) => r.path === "/fails").length;
    // arrange: its lease ran out unreported, as the lease sweep leaves it (no request makes a lease end early)
    ts.running.deps.sqlite.transaction(() =>
      requeueForRetry(ts.running.deps.sqlite, { id: textId, reason: "no-report", retryCount: 1, scheduledFor: new Date(Date.now() + 60_000).toISOString(), updatedAt: new Date().toISOString(), failedAt: new Date().toISOString(), leaseToken: null }),
    )();
    expect((await call("GET", "/messages/no-report")).body).toMatchObject({ state: "Pending", recipients: [{ state: "Pending" }] });
    await Bun.sleep(200);
    expect(received.filter((r) => r.path === "/fails").length).toBe(failsBefore);
    await call("DELETE", "/webhooks/fails");
    await call("DELETE", "/webhooks/sent");
  }, 20_000);
});

describe("health with the account's phones (the local server's /health checks)", () => {
  test("/health/phones needs a key and adds battery:level and messages:failed", async () => {
    await expectError(await call("GET", "/health/phones", { auth: null }), 401);
    const p = await phone("Battery phone");
    await p.webhook("system:ping", { health: { checks: { "battery:level": { observedValue: 12 } } } });
    const h = await call("GET", "/health/phones");
    expect(h.status).toBe(200);
    expect(h.body.checks["battery:level"]).toEqual({ description: expect.any(String), observedUnit: "percent", observedValue: 12, status: "warn" });
    expect(h.body.checks["messages:failed"]).toMatchObject({ observedUnit: "messages", observedValue: expect.any(Number) });
    expect(h.body.status).toBe("warn");
    // Another account's phones are not its.
    const theirs = await call("GET", "/health/phones", { auth: basic(other.accountId, other.key) });
    expect(theirs.body.checks["battery:level"].observedValue).toBe(0);
  });
});
