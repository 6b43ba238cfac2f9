import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import Client, { ProcessState, WebHookEventType, type HttpClient } from "android-sms-gateway";
import { startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator, gsonDate } from "../../helpers/smsgate-emulator";
import { newApiKey } from "../../helpers/reads";
import { newAccount } from "../../helpers/accounts";

/**
 * SMSGate's own clients against Textwire, unchanged but for the base URL and the credentials: the
 * published npm package `android-sms-gateway` (pinned in package.json), and the exact requests
 * client-go makes (smsgateway/client.go, rest/client.go: plural paths, `?` after /messages, JSON
 * bodies, integer error codes). docs/api-decisions.md, "SMSGate third-party API".
 */
let ts: TestServer;
/** What an SMSGate user's own receiver got: the raw body and the signature headers. */
const received: Array<{ path: string; body: string; timestamp: string | null; signature: string | null }> = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, body: await req.text(), timestamp: req.headers.get("x-timestamp"), signature: req.headers.get("x-signature") });
      return new Response("ok");
    },
  });
  ts = await startTestServer({ allowPrivateWebhookUrls: true });
});
afterAll(async () => {
  await ts.stop();
  receiver.stop(true);
});

/** The HttpClient the package's README shows, over fetch: JSON in and out, an error for anything not 2xx. */
class FetchClient implements HttpClient {
  private async call<T>(method: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw Object.assign(new Error(`${method} ${url}: ${res.status} ${text}`), { status: res.status, body: text });
    return (text ? JSON.parse(text) : undefined) as T;
  }
  get<T>(url: string, headers?: Record<string, string>) {
    return this.call<T>("GET", url, undefined, headers);
  }
  post<T>(url: string, body: any, headers?: Record<string, string>) {
    return this.call<T>("POST", url, body, headers);
  }
  put<T>(url: string, body: any, headers?: Record<string, string>) {
    return this.call<T>("PUT", url, body, headers);
  }
  patch<T>(url: string, body: any, headers?: Record<string, string>) {
    return this.call<T>("PATCH", url, body, headers);
  }
  delete<T>(url: string, headers?: Record<string, string>) {
    return this.call<T>("DELETE", url, undefined, headers);
  }
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

/** The account's signing key for SMSGate-format webhooks, as Settings → SMSGate clients shows it. */
const signingKey = async () => ((await (await ts.api("/account/smsgate-clients")).json()) as any).data.signingKey as string;

describe("the npm package android-sms-gateway 3.0", () => {
  let client: Client;
  let phone: SmsGateEmulator;
  beforeAll(async () => {
    client = new Client(ts.accountId, ts.adminKey, new FetchClient(), `${ts.url}/3rdparty/v1`);
    phone = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, behaviour: "hold" });
    const token = ((await (await ts.api("/devices/registration-tokens", { method: "POST", json: {} })).json()) as any).data.token;
    await phone.register(token);
  });

  const report = async (id: string, state: string, numbers: string[], states: Record<string, string>) => {
    const res = await fetch(`${ts.url}/api/mobile/v1/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${phone.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id, state, recipients: numbers.map((p) => ({ phoneNumber: p, state, error: null })), states }]),
    });
    expect(res.status).toBe(204);
  };

  test("send to two numbers, then the state through Pending → Processed → Sent → Delivered; a registered sms:sent webhook gets a signed body", async () => {
    // webhooks: register (201, the same object back), list, and it shows in /v1/webhook-endpoints as format "smsgate".
    const hook = await client.registerWebhook({ id: "my-sent-hook", event: WebHookEventType.SmsSent, url: `http://127.0.0.1:${receiver.port}/sms` });
    expect(hook).toEqual({ id: "my-sent-hook", event: WebHookEventType.SmsSent, url: `http://127.0.0.1:${receiver.port}/sms`, deviceId: null });
    expect(await client.getWebhooks()).toEqual([hook]);
    const endpoints = ((await (await ts.api("/webhook-endpoints")).json()) as any).data.endpoints;
    expect(endpoints.map((e: any) => [e.format, e.url, e.events])).toEqual([["smsgate", hook.url, ["message.sent"]]]);

    const sent = await client.send({ message: "Your table is ready", phoneNumbers: ["+12025550143", "+12025550144"] });
    expect(sent.state).toBe(ProcessState.Pending);
    expect(sent.recipients).toEqual([
      { phoneNumber: "+12025550143", state: ProcessState.Pending },
      { phoneNumber: "+12025550144", state: ProcessState.Pending },
    ]);
    expect((await client.getState(sent.id)).state).toBe(ProcessState.Pending);

    const res = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } });
    const handed = (await res.json()) as any[];
    expect(handed).toHaveLength(2);
    expect((await client.getState(sent.id)).state).toBe(ProcessState.Processed);
    const t0 = Date.now();
    for (const m of handed) await report(m.id, "Sent", m.phoneNumbers, { Processed: gsonDate(t0), Sent: gsonDate(t0 + 1) });
    expect((await client.getState(sent.id)).state).toBe(ProcessState.Sent);
    for (const m of handed) await report(m.id, "Delivered", m.phoneNumbers, { Processed: gsonDate(t0), Sent: gsonDate(t0 + 1), Delivered: gsonDate(t0 + 2) });
    const delivered = await client.getState(sent.id);
    expect(delivered.state).toBe(ProcessState.Delivered);
    expect(delivered.recipients.map((r) => r.state)).toEqual([ProcessState.Delivered, ProcessState.Delivered]);

    // One sms:sent per number, in SMSGate's body, verified by the documented scheme (the package has no helper).
    await until("two sms:sent deliveries", () => received.length >= 2);
    const key = (await signingKey());
    const bodies = received.map((r) => {
      expect(r.timestamp).toMatch(/^\d+$/);
      expect(r.signature).toBe(createHmac("sha256", key).update(r.body + r.timestamp).digest("hex"));
      return JSON.parse(r.body);
    });
    expect(bodies.map((b) => [b.event, b.webhookId, b.deviceId, b.payload.messageId]).sort()).toEqual([
      ["sms:sent", "my-sent-hook", phone.id, sent.id],
      ["sms:sent", "my-sent-hook", phone.id, sent.id],
    ]);
    expect(bodies.map((b) => b.payload.phoneNumber).sort()).toEqual(["+12025550143", "+12025550144"]);
    for (const b of bodies) {
      expect(Object.keys(b).sort()).toEqual(["deviceId", "event", "id", "payload", "webhookId"]);
      expect(b.payload.sentAt).toEqual(expect.any(String));
    }
    expect(new Set(bodies.map((b) => b.id)).size).toBe(2);

    // A known id replaces; delete removes it (and a second delete is still 204).
    const moved = await client.registerWebhook({ id: "my-sent-hook", event: WebHookEventType.SmsDelivered, url: `http://127.0.0.1:${receiver.port}/delivered` });
    expect(await client.getWebhooks()).toEqual([moved]);
    await client.deleteWebhook("my-sent-hook");
    expect(await client.getWebhooks()).toEqual([]);
    await client.deleteWebhook("my-sent-hook");
  });

  test("a signing key set like SMSGate's settings signs the next delivery (here the endpoint's test ping, as system:ping)", async () => {
    const hook = await client.registerWebhook({ id: "ping-hook", event: WebHookEventType.SmsDelivered, url: `http://127.0.0.1:${receiver.port}/ping` });
    await client.patchSettings({ webhooks: { signingKey: "my-own-signing-key" } });
    const short = (await client.patchSettings({ webhooks: { signingKey: "short" } }).catch((e) => e)) as { status: number; body: string };
    expect(short.status).toBe(400);
    expect(JSON.parse(short.body).message).toContain("signingKey");
    const endpoint = ((await (await ts.api("/webhook-endpoints")).json()) as any).data.endpoints.find((e: any) => e.url === hook.url);
    const before = received.length;
    const tr = await ts.api(`/webhook-endpoints/${endpoint.id}/test`, { method: "POST" });
    expect(tr.status).toBeLessThan(300);
    await until("the test delivery", () => received.length > before);
    const got = received[received.length - 1];
    expect(got.signature).toBe(createHmac("sha256", "my-own-signing-key").update(got.body + got.timestamp).digest("hex"));
    expect(JSON.parse(got.body)).toMatchObject({ event: "system:ping", webhookId: "ping-hook", payload: {} });
    await client.deleteWebhook("ping-hook");
  });

  test("the signing key set through the settings document (updateSettings, patchSettings) signs the next sms:sent delivery", async () => {
    const path = "/keyed";
    await client.registerWebhook({ id: "keyed-hook", event: WebHookEventType.SmsSent, url: `http://127.0.0.1:${receiver.port}${path}` });
    // The key is part of the document an admin reads, as on SMSGate's server.
    const current = (await signingKey());
    expect(((await client.getSettings()).webhooks as Record<string, unknown> | undefined)?.signing_key).toBe(current);

    // One text sent and reported Sent: its sms:sent delivery must verify with `key`.
    const sendAndVerify = async (key: string, number: string) => {
      const sent = await client.send({ message: "Your order is ready", phoneNumbers: [number] });
      const res = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${phone.token}` } });
      const handed = ((await res.json()) as any[]).filter((m) => m.phoneNumbers.includes(number));
      expect(handed).toHaveLength(1);
      const t0 = Date.now();
      await report(handed[0].id, "Sent", [number], { Processed: gsonDate(t0), Sent: gsonDate(t0 + 1) });
      const got = await until("the sms:sent delivery", () => received.find((r) => r.path === path && JSON.parse(r.body).payload.messageId === sent.id));
      expect(got.signature).toBe(createHmac("sha256", key).update(got.body + got.timestamp).digest("hex"));
    };

    // patchSettings: only the key changes; the document keeps what it had.
    await client.updateSettings({ messages: { limitValue: 100 } });
    await client.patchSettings({ webhooks: { signingKey: "patched-key-1234" } });
    expect(await client.getSettings()).toEqual({ messages: { limit_value: 100 }, webhooks: { signing_key: "patched-key-1234" } } as never);
    await sendAndVerify("patched-key-1234", "+12025550160");

    // updateSettings (PUT): the whole document, the key with it (client-go spells it signing_key).
    await client.updateSettings({ webhooks: { signingKey: "replaced-key-5678", retryCount: 2 } });
    expect(await client.getSettings()).toEqual({ webhooks: { signing_key: "replaced-key-5678", retry_count: 2 } } as never);
    await sendAndVerify("replaced-key-5678", "+12025550161");
    const go = await fetch(`${ts.url}/3rdparty/v1/settings`, {
      method: "PATCH",
      headers: { Authorization: `Basic ${btoa(`${ts.accountId}:${ts.adminKey}`)}`, "Content-Type": "application/json" },
      body: JSON.stringify({ webhooks: { signing_key: "go-spelled-key-0001" } }),
    });
    expect(go.status).toBe(200);
    expect((await signingKey())).toBe("go-spelled-key-0001");
    // Shown in Settings → SMSGate clients too: one key.
    expect(((await (await ts.api("/account/smsgate-clients")).json()) as any).data.signingKey).toBe("go-spelled-key-0001");

    // A key too short: 400, and neither the key nor the rest of the body is applied.
    const bad = (await client.patchSettings({ messages: { limitValue: 5 }, webhooks: { signingKey: "short" } }).catch((e) => e)) as { status: number; body: string };
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ code: 400, data: "VALIDATION_ERROR" });
    expect(JSON.parse(bad.body).message).toContain("webhooks.signingKey");
    expect(await client.getSettings()).toEqual({ webhooks: { signing_key: "go-spelled-key-0001", retry_count: 2 } } as never);

    // A standard key reads the document without the key, and may not set it.
    const staff = new Client(ts.accountId, (await newApiKey(ts, "standard_access")), new FetchClient(), `${ts.url}/3rdparty/v1`);
    expect(await staff.getSettings()).toEqual({ webhooks: { retry_count: 2 } } as never);
    const refused = (await staff.patchSettings({ webhooks: { signingKey: "staff-key-12345" } }).catch((e) => e)) as { status: number };
    expect(refused.status).toBe(403);
    expect((await signingKey())).toBe("go-spelled-key-0001");

    await client.updateSettings({});
    await client.deleteWebhook("keyed-hook");
  });

  test("a reused id is refused with 409 and an integer code", async () => {
    await client.send({ id: "npm-1", message: "one", phoneNumbers: ["+12025550150"] });
    const err = (await client.send({ id: "npm-1", message: "two", phoneNumbers: ["+12025550151"] }).catch((e) => e)) as { status: number; body: string };
    expect(err.status).toBe(409);
    expect(JSON.parse(err.body)).toEqual({ message: expect.any(String), code: 409, data: "INVALID_STATE" });
  });

  test("a webhook with a bad event or address is a 400; another account's key cannot see or delete it", async () => {
    const bad = (await client.registerWebhook({ event: "sms:nope" as WebHookEventType, url: "https://example.com/x" }).catch((e) => e)) as { status: number; body: string };
    expect([bad.status, JSON.parse(bad.body).code]).toEqual([400, 400]);
    const meta = (await client.registerWebhook({ event: WebHookEventType.SmsReceived, url: "http://169.254.169.254/latest" }).catch((e) => e)) as { status: number };
    expect(meta.status).toBe(400);
    await client.registerWebhook({ id: "mine", event: WebHookEventType.SmsReceived, url: `http://127.0.0.1:${receiver.port}/in` });
    const other = newAccount(ts, { name: "Other" });
    const theirs = new Client(other.account.id, other.apiKey, new FetchClient(), `${ts.url}/3rdparty/v1`);
    expect(await theirs.getWebhooks()).toEqual([]);
    await theirs.deleteWebhook("mine");
    expect((await client.getWebhooks()).map((w) => w.id)).toEqual(["mine"]);
    // A standard key may send but not register webhooks (403, as /v1/webhook-endpoints).
    const std = ((await (await ts.api("/api-keys", { method: "POST", json: { permission: "standard_access" } })).json()) as any).data.apiKey;
    const staff = new Client(ts.accountId, std, new FetchClient(), `${ts.url}/3rdparty/v1`);
    expect((await staff.send({ message: "ok", phoneNumbers: ["+12025550160"] })).state).toBe(ProcessState.Pending);
    const refused = (await staff.registerWebhook({ event: WebHookEventType.SmsSent, url: "https://example.com/x" }).catch((e) => e)) as { status: number; body: string };
    expect([refused.status, JSON.parse(refused.body).code]).toEqual([403, 403]);
    await client.deleteWebhook("mine");
  });
});

describe("client-go's exact requests", () => {
  // rest.Client.do: JSON body with Content-Type application/json, the Authorization header, no other.
  const go = (method: string, path: string, body?: unknown, auth = `Basic ${Buffer.from(`${ts.accountId}:${ts.adminKey}`).toString("base64")}`) =>
    fetch(`${ts.url}/3rdparty/v1${path}`, {
      method,
      headers: { Authorization: auth, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  test("Send (POST /messages?), GetState, ListMessages with X-Total-Count", async () => {
    // json.Marshal of smsgateway.Message{TextMessage, PhoneNumbers, WithDeliveryReport, SimNumber, TTL}: omitempty drops the rest.
    const res = await go("POST", "/messages?", { textMessage: { text: "From Go" }, phoneNumbers: ["+12025550170", "+12025550171"], simNumber: 1, withDeliveryReport: true, ttl: 3600 });
    expect(res.status).toBe(202);
    const state = (await res.json()) as any;
    expect(state.recipients.map((r: any) => r.state)).toEqual(["Pending", "Pending"]);
    const got = await go("GET", `/messages/${encodeURIComponent(state.id)}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as any).id).toBe(state.id);
    // ListMessagesOptions.ToURLValues: from/to as RFC 3339, limit, offset, includeContent.
    const from = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const list = await go("GET", `/messages?from=${encodeURIComponent(from)}&includeContent=true&limit=2&offset=0`);
    expect(list.status).toBe(200);
    expect(Number(list.headers.get("x-total-count"))).toBeGreaterThanOrEqual(2);
    const items = (await list.json()) as any[];
    expect(items.length).toBe(2);
    // MessageState.States is map[string]time.Time: every value must parse as RFC 3339.
    for (const m of items) for (const v of Object.values(m.states)) expect(Number.isFinite(Date.parse(v as string))).toBe(true);
  });

  test("errors decode into ErrorResponse with an integer code (400, 401, 404, 409)", async () => {
    const cases: Array<[Response, number]> = [
      [await go("POST", "/messages?", { textMessage: { text: "x" }, phoneNumbers: [] }), 400],
      [await go("GET", "/messages", undefined, `Basic ${Buffer.from(`${ts.accountId}:wrong`).toString("base64")}`), 401],
      [await go("GET", "/messages/unknown-id"), 404],
    ];
    await go("POST", "/messages?", { id: "go-dup", textMessage: { text: "x" }, phoneNumbers: ["+12025550172"] });
    cases.push([await go("POST", "/messages?", { id: "go-dup", textMessage: { text: "x" }, phoneNumbers: ["+12025550172"] }), 409]);
    for (const [res, status] of cases) {
      expect(res.status).toBe(status);
      const body = (await res.json()) as { message: unknown; code: unknown; data: unknown };
      expect(typeof body.message).toBe("string");
      expect(Number.isInteger(body.code)).toBe(true);
      expect(body.code).toBe(status);
    }
  });

  test("RegisterWebhook, ListWebhooks, DeleteWebhook (Bearer token config)", async () => {
    const bearer = `Bearer ${ts.adminKey}`;
    const reg = await go("POST", "/webhooks", { id: "go-hook", url: `http://127.0.0.1:${receiver.port}/go`, event: "sms:failed" }, bearer);
    expect(reg.status).toBe(201);
    expect(await reg.json()).toEqual({ id: "go-hook", url: `http://127.0.0.1:${receiver.port}/go`, event: "sms:failed", deviceId: null });
    const list = await go("GET", "/webhooks", undefined, bearer);
    expect(((await list.json()) as any[]).map((w) => w.id)).toEqual(["go-hook"]);
    const del = await go("DELETE", "/webhooks/go-hook", undefined, bearer);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
  });

  test("cancel (DELETE /messages/{id}) as SMSGate's server serves it", async () => {
    const res = await go("POST", "/messages?", { textMessage: { text: "later" }, phoneNumbers: ["+12025550173"], scheduleAt: new Date(Date.now() + 86_400_000).toISOString() });
    const { id } = (await res.json()) as { id: string };
    const cancelled = await go("DELETE", `/messages/${id}`);
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as any).state).toBe("Cancelled");
  });
});
