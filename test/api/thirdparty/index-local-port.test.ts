/**
 * `serve --smsgate-local-port`: the SMSGate app's local-server API at the root of its own port, so
 * Home Assistant integrations that take only a host and a port work unchanged. Their exact
 * requests are replayed: pawelszulik/SMSGateHA (custom_components/sms_gate/api.py:
 * async_get_health, async_send_sms, async_get_messages, async_get_message) and
 * Micka41/ha-smsgateway (custom_components/smsgate/api.py: async_health,
 * async_check_credentials, async_send_sms, async_register_webhook, async_delete_webhook)
 * (docs/phones.md, "Home Assistant").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";
import { newAccount } from "../../helpers/accounts";

let ts: TestServer;
let local: string;
let other: { accountId: string; key: string };

beforeAll(async () => {
  ts = await startTestServer({ smsgateLocalPort: 0, allowPrivateWebhookUrls: true });
  local = `http://127.0.0.1:${ts.running.smsgateLocalServer!.port}`;
  const o = newAccount(ts, { name: "Other shop" });
  other = { accountId: o.account.id, key: o.apiKey };
});
afterAll(async () => {
  await ts.stop();
});

/** aiohttp.BasicAuth(username, password): the account id and an API key. */
const auth = (login = ts.accountId, password = ts.adminKey) => `Basic ${btoa(`${login}:${password}`)}`;

async function req(method: string, path: string, opts: { auth?: string | null; json?: unknown } = {}) {
  const headers: Record<string, string> = {};
  const a = opts.auth === undefined ? auth() : opts.auth;
  if (a) headers.Authorization = a;
  if (opts.json !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${local}${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, headers: res.headers, body };
}

describe("pawelszulik/SMSGateHA", () => {
  test("GET /health: 200 with the checks its sensors read (battery:level, messages:failed)", async () => {
    const token = (await expectStatus(await ts.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
    const p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, name: "Kitchen phone" });
    await p.register(token);
    await p.loadSettings();
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
    expect((await p.webhook("system:ping", { health: { checks: { "battery:level": { observedValue: 81 } } } })).status).toBe(200);
    const h = await req("GET", "/health");
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: "pass", version: expect.any(String), releaseId: expect.any(Number) });
    expect(h.body.checks["battery:level"]).toEqual({ description: expect.any(String), observedUnit: "percent", observedValue: 81, status: "pass" });
    expect(h.body.checks["messages:failed"]).toEqual({ description: expect.any(String), observedUnit: "messages", observedValue: 0, status: "pass" });
    // Its fallback path, and the probes, are served too.
    expect((await req("GET", "/health/ready")).status).toBe(200);
    // The credentials are checked: a wrong key is 401 (its config flow says "invalid_auth").
    const wrong = await req("GET", "/health", { auth: auth(ts.accountId, "txwire_sk_" + "x".repeat(40)) });
    expect([wrong.status, wrong.body.code]).toEqual([401, 401]);
    // Another account's credentials see that account's phones only.
    expect((await req("GET", "/health", { auth: auth(other.accountId, other.key) })).body.checks["battery:level"].observedValue).toBe(0);
  });

  test("POST /messages?skipPhoneValidation=true → 202 with Location; GET /messages?limit=20&offset=0; GET /messages/{id}", async () => {
    const sent = await req("POST", "/messages?skipPhoneValidation=true", { json: { phoneNumbers: ["+12025550150"], textMessage: { text: "The garage door is open" }, priority: 100, ttl: 3600 } });
    expect(sent.status).toBe(202);
    const id = sent.headers.get("location")!.split("/").pop()!;
    expect(id).toBe(sent.body.id);
    const list = await req("GET", "/messages?limit=20&offset=0");
    expect(list.status).toBe(200);
    expect(list.body.map((m: any) => m.id)).toContain(id);
    const one = await req("GET", `/messages/${id}`);
    // sensor.py reads id, state, recipients[].phoneNumber and deviceId.
    expect(one.body).toMatchObject({ id, state: "Pending", recipients: [{ phoneNumber: "+12025550150", state: "Pending" }], deviceId: expect.any(String) });
    // Its legacy fallback path works too.
    expect((await req("POST", "/message", { json: { phoneNumbers: ["+12025550151"], textMessage: { text: "Legacy" } } })).status).toBe(202);
  });
});

describe("Micka41/ha-smsgateway", () => {
  test("GET /webhooks checks the credentials; POST /webhooks {id, url, event}; DELETE /webhooks/{id}", async () => {
    expect((await req("GET", "/webhooks")).status).toBe(200);
    const bad = await req("GET", "/webhooks", { auth: null });
    expect([bad.status, bad.body.code]).toEqual([401, 401]);
    for (const event of ["sms:received", "sms:sent", "sms:delivered", "sms:failed", "mms:received", "mms:downloaded"]) {
      const r = await req("POST", "/webhooks", { json: { id: `ha_${event.replace(":", "_")}`, url: "http://192.168.1.20:8123/api/webhook/abc123", event } });
      expect([event, r.status]).toEqual([event, 201]);
    }
    expect((await req("GET", "/webhooks")).body.map((w: any) => w.id)).toContain("ha_mms_received");
    expect((await req("DELETE", "/webhooks/ha_sms_received")).status).toBe(204);
    // An MMS is refused plainly (Textwire's phones send texts only).
    const mms = await req("POST", "/messages", { json: { phoneNumbers: ["+12025550152"], mmsMessage: { attachments: [{ contentType: "image/png", name: "a.png", data: "iVBORw0KGgo=" }] } } });
    expect([mms.status, mms.body.code]).toEqual([400, 400]);
  });

  test("nothing of the dashboard answers here: unknown paths are SMSGate's JSON 404", async () => {
    for (const path of ["/", "/contacts", "/v1/messages"]) {
      const r = await req("GET", path);
      expect([path, r.status, r.body.code]).toEqual([path, 404, 404]);
    }
  });
});
