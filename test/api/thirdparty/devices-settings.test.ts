/**
 * SMSGate's third-party API: devices, health, settings, inbox export and logs, through the real
 * server and the SMSGate phone emulator (docs/api-decisions.md, "SMSGate third-party API: devices,
 * health, settings").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { insertMessage } from "../../helpers/fixtures";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";
import { BARRIER_MAX_WAIT_MS } from "../../../src/services/intake/intake";
import { newApiKey, messageOf } from "../../helpers/reads";
import { newAccount } from "../../helpers/accounts";

let ts: TestServer;
let other: { accountId: string; key: string };
let standardKey: string;
const phones: SmsGateEmulator[] = [];

beforeAll(async () => {
  ts = await startTestServer({ sendRatePerMinute: 600 });
  const o = newAccount(ts, { name: "Other shop" });
  other = { accountId: o.account.id, key: o.apiKey };
  standardKey = await newApiKey(ts, "standard_access");
});
afterAll(async () => {
  for (const p of phones) p.disconnect();
  await ts.stop();
});

const basic = (login: string, password: string) => `Basic ${btoa(`${login}:${password}`)}`;
const tp = (path: string, init: { method?: string; json?: unknown; auth?: string | null } = {}) => {
  const headers: Record<string, string> = {};
  const auth = init.auth === undefined ? basic(ts.accountId, ts.adminKey) : init.auth;
  if (auth) headers.Authorization = auth;
  if (init.json !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${ts.url}/3rdparty/v1${path}`, { method: init.method ?? "GET", headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
};
const asOther = () => basic(other.accountId, other.key);
/** The document as an admin key reads it: with the account's signing key in `webhooks`. */
const withKey = (doc: Record<string, any>) => ({ ...doc, webhooks: { ...doc.webhooks, signing_key: expect.any(String) } });

/** SMSGate's error body: {message, code: <integer>, data: Textwire's code}. */
async function expectSmsgateError(res: Response, status: number, data: string) {
  const body = await expectStatus(res, status);
  expect(body).toEqual({ message: expect.any(String), code: status, data });
  return body as { message: string; code: number; data: string };
}

async function phone(key = ts.adminKey, behaviour: "deliver" | "hold" = "deliver", name = "Counter phone") {
  const token = (await expectStatus(await ts.api("/devices/registration-tokens", { method: "POST", json: {}, key }), 201)).data.token;
  const p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, behaviour, name });
  await p.register(token);
  phones.push(p);
  return p;
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe("GET /devices", () => {
  test("a bare array of the account's phones in SMSGate's shape; another account's phones are not in it", async () => {
    const mine = await phone();
    expect(await mine.patchDevice()).toBe(204);
    const theirs = await phone(other.key);
    const list = await expectStatus(await tp("/devices"), 200);
    expect(Array.isArray(list)).toBe(true);
    const d = list.find((x: { id: string }) => x.id === mine.id);
    expect(Object.keys(d).sort()).toEqual(["createdAt", "id", "lastSeen", "name", "simCards", "updatedAt"]);
    expect(d).toMatchObject({ id: mine.id, name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String), lastSeen: expect.any(String) });
    expect(d.simCards[0]).toMatchObject({ slotIndex: 0, simNumber: 1 });
    expect(list.some((x: { id: string }) => x.id === theirs.id)).toBe(false);
    const theirList = await expectStatus(await tp("/devices", { auth: asOther() }), 200);
    expect(theirList.map((x: { id: string }) => x.id)).toEqual([theirs.id]);
  });

  test("a standard key may list; no key is a 401 in SMSGate's body", async () => {
    await expectStatus(await tp("/devices", { auth: basic(ts.accountId, standardKey) }), 200);
    await expectSmsgateError(await tp("/devices", { auth: null }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("DELETE /devices/{id}", () => {
  test("204; the phone's token stops working and the message it held goes back to the queue", async () => {
    const p = await phone(ts.adminKey, "hold", "Drawer phone");
    const id = insertMessage(ts.running.deps, ts.accountId);
    await p.pull();
    expect(p.taken).toContain(id);
    const held = (await messageOf(ts, id))!;
    expect(held.stage).toBe("with-phone");
    expect(held.timeline.at(-1)).toMatchObject({ kind: "leased", deviceId: p.id });
    const res = await tp(`/devices/${p.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await messageOf(ts, id))!.stage).toBe("queued");
    expect((await expectStatus(await ts.api(`/messages/${id}`), 200)).data.message.status).toBe("queued");
    const again = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } });
    expect(again.status).toBe(401);
    const list = await expectStatus(await tp("/devices"), 200);
    expect(list.some((x: { id: string }) => x.id === p.id)).toBe(false);
    await expectStatus(await ts.api(`/messages/${id}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
  });

  test("an unknown id, or another account's phone: 404, and that phone stays", async () => {
    const theirs = await phone(other.key, "deliver", "Their phone");
    await expectSmsgateError(await tp(`/devices/${theirs.id}`, { method: "DELETE" }), 404, "DEVICE_NOT_FOUND");
    await expectSmsgateError(await tp("/devices/not-a-phone", { method: "DELETE" }), 404, "DEVICE_NOT_FOUND");
    const theirList = await expectStatus(await tp("/devices", { auth: asOther() }), 200);
    expect(theirList.some((x: { id: string }) => x.id === theirs.id)).toBe(true);
  });

});

describe("GET /health", () => {
  test("no key needed (and a key sent along is fine): SMSGate's shape with database, queue and applier checks", async () => {
    for (const auth of [null, basic(ts.accountId, ts.adminKey), "Basic garbage"]) {
      const body = await expectStatus(await tp("/health", { auth }), 200);
      // (Bun's toMatchObject writes its matchers into what it checks: checked on a copy.)
      expect(structuredClone(body)).toMatchObject({ status: "pass", version: expect.any(String), releaseId: expect.any(Number), checks: expect.any(Object) });
      expect(Number.isInteger(body.releaseId)).toBe(true);
      expect(Object.keys(body.checks).sort()).toEqual(["applier", "database", "queue"]);
      for (const c of Object.values(body.checks) as Array<Record<string, unknown>>) {
        expect(c).toEqual({ description: expect.any(String), observedUnit: expect.any(String), observedValue: expect.any(Number), status: "pass" });
      }
    }
  });

  test("a stuck applier is a fail and a 503, answered at once in SMSGate's shape (not held at the read barrier)", async () => {
    const formId = (await expectStatus(await ts.api("/forms", { method: "POST", json: formBody({ settings: { timezone: "UTC", duplicateWindowMinutes: 0, recipientLimitPerDay: null } }) }), 201)).data.form.id;
    // arrange: the intake's applier stuck, as a wedged worker leaves it (a test-only hook)
    const intake = ts.running.deps.intake;
    intake.wedgeApplierForTest(BARRIER_MAX_WAIT_MS + 4_000);
    const wedgedAt = performance.now();
    await expectStatus(await fetch(`${ts.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550199", firstName: "Wes" }) }), 200);
    await Bun.sleep(BARRIER_MAX_WAIT_MS + 300);
    // Whether the request waited at the read barrier is seen, not timed (a loaded machine is slow either way).
    let barrierCalls = 0;
    // arrange: the read barrier wrapped to count its calls (the wait is seen, not timed), put back after
    const realBarrier = intake.barrier.bind(intake);
    intake.barrier = (...args: Parameters<typeof intake.barrier>) => {
      barrierCalls++;
      return realBarrier(...args);
    };
    let res: Response;
    try {
      res = await tp("/health", { auth: null });
    } finally {
      intake.barrier = realBarrier; // arrange: the real barrier back
    }
    const body = await res.json();
    if (performance.now() - wedgedAt < BARRIER_MAX_WAIT_MS + 4_000) {
      expect(res.status).toBe(503);
      expect(body).toMatchObject({ status: "fail", checks: { applier: { status: "fail", observedValue: 1 }, database: { status: "pass" } } });
      // Not held at the read barrier: answered from what the server knows now.
      expect(barrierCalls).toBe(0);
    }
    await until("the applier to catch up", async () => (await tp("/health", { auth: null })).status === 200);
  }, 30_000);
});

describe("GET/PUT/PATCH /settings", () => {
  test("empty at first; PUT stores the document and answers it; GET reads it back; another account sees its own", async () => {
    expect(await expectStatus(await tp("/settings"), 200)).toEqual(withKey({}));
    const doc = { messages: { limitPeriod: "PerMinute", limitValue: 30, simSelectionMode: "RoundRobin" }, webhooks: { retryCount: 4 }, myOwn: { note: "kept" } };
    // Answered in SMSGate's snake_case, as its server and client-go/client-py read it (docs/api-decisions.md, "The SMSGate ecosystem, every call").
    const answer = { messages: { limit_period: "PerMinute", limit_value: 30, sim_selection_mode: "RoundRobin" }, webhooks: { retry_count: 4 }, myOwn: { note: "kept" } };
    expect(await expectStatus(await tp("/settings", { method: "PUT", json: doc }), 200)).toEqual(withKey(answer));
    expect(await expectStatus(await tp("/settings"), 200)).toEqual(withKey(answer));
    expect(await expectStatus(await tp("/settings", { auth: basic(ts.accountId, standardKey) }), 200)).toEqual(answer);
    expect(await expectStatus(await tp("/settings", { auth: asOther() }), 200)).toEqual(withKey({}));
  });

  test("PATCH merges (client-go's snake_case spellings too); null removes a key", async () => {
    const after = await expectStatus(await tp("/settings", { method: "PATCH", json: { messages: { limit_value: 12, simSelectionMode: null }, ping: { intervalSeconds: 20 } } }), 200);
    expect(after).toEqual(withKey({ messages: { limit_period: "PerMinute", limit_value: 12 }, webhooks: { retry_count: 4 }, myOwn: { note: "kept" }, ping: { interval_seconds: 20 } }));
    expect(await expectStatus(await tp("/settings"), 200)).toEqual(after);
  });

  test("bad values: 400 in SMSGate's body naming each, and nothing changes", async () => {
    const before = await expectStatus(await tp("/settings"), 200);
    const bad = await expectSmsgateError(await tp("/settings", { method: "PATCH", json: { messages: { limitPeriod: "PerWeek", limitValue: 0 } } }), 400, "VALIDATION_ERROR");
    expect(bad.message).toContain("messages.limitPeriod");
    expect(bad.message).toContain("messages.limitValue");
    await expectSmsgateError(await tp("/settings", { method: "PUT", json: { webhooks: { signingKey: "mine" } } }), 400, "VALIDATION_ERROR");
    await expectSmsgateError(await tp("/settings", { method: "PUT", json: { gateway: { cloudUrl: "https://elsewhere.example" } } }), 400, "VALIDATION_ERROR");
    await expectSmsgateError(await tp("/settings", { method: "PUT", json: [1, 2] }), 400, "VALIDATION_ERROR");
    await expectSmsgateError(await tp("/settings", { method: "PATCH", json: { messages: { sendIntervalMin: 10, sendIntervalMax: 2 } } }), 400, "VALIDATION_ERROR");
    await expectSmsgateError(await tp("/settings", { method: "PUT", json: { big: "x".repeat(20_000) } }), 400, "VALIDATION_ERROR");
    const notJson = await fetch(`${ts.url}/3rdparty/v1/settings`, { method: "PUT", headers: { Authorization: basic(ts.accountId, ts.adminKey), "Content-Type": "application/json" }, body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(await expectStatus(await tp("/settings"), 200)).toEqual(before);
  });

  test("the phones get them: SettingsUpdated on their stream, then their own settings carry the values", async () => {
    const p = await phone();
    await p.loadSettings();
    await p.connect();
    const seen = p.events.length;
    await expectStatus(await tp("/settings", { method: "PUT", json: { messages: { limitPeriod: "PerMinute", limitValue: 20, simSelectionMode: "Random", sendIntervalMin: 2, sendIntervalMax: 5 }, ping: { intervalSeconds: 3600 }, webhooks: { retryCount: 2, internetRequired: false }, logs: { lifetimeDays: 9 } } }), 200);
    await until("SettingsUpdated", () => p.events.slice(seen).some((e) => e.event === "SettingsUpdated"));
    await p.loadSettings();
    expect(p.settings).toMatchObject({
      messages: { limit_period: "PerMinute", limit_value: 20, sim_selection_mode: "Random", send_interval_min: 2, send_interval_max: 5 },
      webhooks: { retry_count: 2, internet_required: false, signing_key: expect.any(String) },
      logs: { lifetime_days: 9 },
      gateway: { notification_channel: "SSE_ONLY" },
    });
    // An hour between pings would make the phone look offline: it gets Textwire's longest.
    expect(p.settings.ping.interval_seconds).toBeLessThanOrEqual(60);
    // Textwire hands the phone no more than the settings let it send (20 a minute, one every 2 s or more: 20).
    const view = (await expectStatus(await ts.api(`/devices/${p.id}`), 200)).data.device;
    expect(view.sendRatePerMinute).toBe(20);
    // Another account's phones hear nothing of it.
    p.disconnect();
  });

  test("the account's signing key set in the document stays off the phones: each keeps its own", async () => {
    const p = await phone();
    await p.loadSettings();
    const own = p.settings.webhooks.signing_key;
    expect(own).toEqual(expect.any(String));
    await expectStatus(await tp("/settings", { method: "PATCH", json: { webhooks: { signingKey: "account-key-for-receivers" } } }), 200);
    expect((await (await ts.api("/account/smsgate-clients")).json() as any).data.signingKey).toBe("account-key-for-receivers");
    await p.loadSettings();
    expect(p.settings.webhooks.signing_key).toBe(own);
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") })); // the test server speaks plain HTTP
    // Its callbacks are still checked with its own key.
    expect((await p.webhook("system:ping", { health: {} })).status).toBeLessThan(300);
    await expectStatus(await tp("/settings", { method: "PUT", json: {} }), 200);
  });

  test("another account's phone keeps Textwire's own settings and hears nothing", async () => {
    const theirs = await phone(other.key);
    await theirs.loadSettings();
    await theirs.connect();
    const seen = theirs.events.length;
    await expectStatus(await tp("/settings", { method: "PATCH", json: { messages: { limitValue: 7 } } }), 200);
    await Bun.sleep(200);
    expect(theirs.events.slice(seen).some((e) => e.event === "SettingsUpdated")).toBe(false);
    await theirs.loadSettings();
    expect(theirs.settings.messages.limit_value).toBe(600);
    expect(theirs.settings.messages.sim_selection_mode).toBeUndefined();
    theirs.disconnect();
    await expectStatus(await tp("/settings", { method: "PUT", json: {} }), 200);
  });
});

describe("POST /inbox/export and /inbox/refresh", () => {
  const since = "2026-11-01T00:00:00.000Z";
  const until = "2026-11-02T00:00:00Z";

  test("202, and the phone hears MessagesExportRequested over its stream; the texts it sends again are stored once", async () => {
    const p = await phone();
    await p.loadSettings();
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") })); // the test server speaks plain HTTP
    await p.connect();
    const seen = p.events.length;
    const res = await tp("/inbox/export", { method: "POST", json: { deviceId: p.id, since, until } });
    expect(res.status).toBe(202);
    const ev = await until2(p, seen, "MessagesExportRequested");
    expect(JSON.parse(ev.data)).toEqual({ since: "2026-11-01T00:00:00Z", until: "2026-11-02T00:00:00Z", messageTypes: "SMS", webhookDelivery: "Individual", triggerWebhooks: "true" });
    // The phone sends a text it already sent once, with the same message id: applied once.
    const payload = { messageId: "exp-1", message: "Is the shop open Sunday?", phoneNumber: "+14155550123", simNumber: 1, receivedAt: "2026-11-01T10:00:00.000+00:00" };
    await expectStatus(await p.webhook("sms:received", payload), 200);
    await expectStatus(await p.webhook("sms:received", payload), 200);
    const stored = (await expectStatus(await ts.api("/inbound?limit=100"), 200)).data.messages.filter((m: any) => m.externalId === "exp-1");
    expect(stored).toHaveLength(1);
    p.disconnect();
  });

  test("refresh without deviceId asks every connected phone of the account, and no other account's", async () => {
    const a = await phone();
    await a.loadSettings();
    await a.connect();
    const theirs = await phone(other.key);
    await theirs.loadSettings();
    await theirs.connect();
    const [seenA, seenT] = [a.events.length, theirs.events.length];
    expect((await tp("/inbox/refresh", { method: "POST", json: { since, until } })).status).toBe(202);
    await until2(a, seenA, "MessagesExportRequested");
    await Bun.sleep(200);
    expect(theirs.events.slice(seenT).some((e) => e.event === "MessagesExportRequested")).toBe(false);
    a.disconnect();
    theirs.disconnect();
  });

  test("a phone that is not connected: 409 said plainly (never acknowledged and lost)", async () => {
    const p = await phone();
    const body = await expectSmsgateError(await tp("/inbox/export", { method: "POST", json: { deviceId: p.id, since, until } }), 409, "INVALID_STATE");
    expect(body.message).toContain("not connected");
  });

  test("another account's phone or an unknown id: 404; bad bodies: 400", async () => {
    const theirs = await phone(other.key);
    await theirs.connect();
    const seen = theirs.events.length;
    await expectSmsgateError(await tp("/inbox/export", { method: "POST", json: { deviceId: theirs.id, since, until } }), 404, "DEVICE_NOT_FOUND");
    await expectSmsgateError(await tp("/inbox/export", { method: "POST", json: { deviceId: "nope", since, until } }), 404, "DEVICE_NOT_FOUND");
    expect(theirs.events.slice(seen).some((e) => e.event === "MessagesExportRequested")).toBe(false);
    theirs.disconnect();
    for (const json of [
      { since, until },
      { deviceId: 5, since, until },
      { deviceId: theirs.id, since: "yesterday", until },
      { deviceId: theirs.id, since: until, until: since },
      { deviceId: theirs.id },
      [1],
    ]) {
      await expectSmsgateError(await tp("/inbox/export", { method: "POST", json }), 400, "VALIDATION_ERROR");
    }
  });
});

describe("GET /logs", () => {
  test("501 as SMSGate's cloud server answers, in its body", async () => {
    const body = await expectSmsgateError(await tp("/logs?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"), 501, "NOT_IMPLEMENTED");
    expect(body.message).toContain("logs");
  });
});

async function until2(p: SmsGateEmulator, from: number, event: string) {
  return until(event, () => p.events.slice(from).find((e) => e.event === event));
}
