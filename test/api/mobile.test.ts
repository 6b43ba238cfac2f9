import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertMessage, iso } from "../helpers/fixtures";
import { SmsGateEmulator, APP_USER_AGENT, gsonDate } from "../helpers/smsgate-emulator";

const mobile = (s: TestServer) => `${s.url}/api/mobile/v1`;

async function regToken(s: TestServer, json: Record<string, unknown> = {}) {
  return (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json }), 201)).data;
}

async function phone(s: TestServer, opts: ConstructorParameters<typeof SmsGateEmulator>[0] extends infer O ? Partial<O> : never = {}) {
  const p = new SmsGateEmulator({ base: mobile(s), ...opts });
  await p.register((await regToken(s)).token);
  await p.loadSettings();
  return p;
}

describe("registration tokens and POST /device", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("a one-time token registers one phone; the second use, a wrong or an expired token is 401", async () => {
    const t = await regToken(s);
    expect(t.token).toStartWith("txwire_reg_");
    expect(t.reusable).toBe(false);
    // (Stored only as a hash: test/db/secrets-at-rest.test.ts reads the database file for it.)
    const body = { name: "Google/sdk", pushToken: "fcm-x", simCards: [{ slotIndex: 0, simNumber: 1 }] };
    const r1 = await fetch(`${mobile(s)}/device`, { method: "POST", headers: { Authorization: `Bearer ${t.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const d = await expectStatus(r1, 201);
    expect(Object.keys(d).sort()).toEqual(["id", "login", "password", "token"]);
    expect(d.login).toBe(s.accountId);
    const again = await fetch(`${mobile(s)}/device`, { method: "POST", headers: { Authorization: `Bearer ${t.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    expect((await expectStatus(again, 401)).code).toBe("AUTHENTICATION_ERROR");
    const wrong = await fetch(`${mobile(s)}/device`, { method: "POST", headers: { Authorization: "Bearer txwire_reg_nope", "Content-Type": "application/json" }, body: "{}" });
    await expectStatus(wrong, 401);
    const expired = await regToken(s, { expiresInHours: 0.0001 });
    await Bun.sleep(500);
    const r3 = await fetch(`${mobile(s)}/device`, { method: "POST", headers: { Authorization: `Bearer ${expired.token}`, "Content-Type": "application/json" }, body: "{}" });
    await expectStatus(r3, 401);
  });

  test("a reusable token registers several phones", async () => {
    const t = await regToken(s, { reusable: true });
    for (let i = 0; i < 2; i++) {
      const p = new SmsGateEmulator({ base: mobile(s) });
      await p.register(t.token);
      expect(p.token).toStartWith("txwire_dev_");
    }
  });

  test("bad token bodies are 400 and create nothing", async () => {
    for (const json of [{ reusable: "yes" }, { expiresInHours: 0 }, { expiresInHours: "24" }, { expiresInHours: 1e9 }]) {
      const r = await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json }), 400);
      expect(r.code).toBe("VALIDATION_ERROR");
    }
  });

});

describe("the device token", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("PATCH /device with an unknown token is 401 (the app registers again); another device's id is 403", async () => {
    const p = await phone(s);
    expect(await p.patchDevice()).toBe(204);
    const other = await fetch(`${mobile(s)}/device`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify({ id: "someone-else" }) });
    await expectStatus(other, 403);
    const bad = await fetch(`${mobile(s)}/device`, { method: "PATCH", headers: { Authorization: "Bearer txwire_dev_unknown", "Content-Type": "application/json" }, body: "{}" });
    await expectStatus(bad, 401);
    const none = await fetch(`${mobile(s)}/message`);
    await expectStatus(none, 401);
  });

  test("GET /device answers the caller's address and the device", async () => {
    const p = await phone(s, { name: "Pixel/7" });
    const r = await expectStatus(await fetch(`${mobile(s)}/device`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
    expect(r.externalIp).toBe("127.0.0.1");
    expect(r.device.id).toBe(p.id);
    expect(r.device.name).toBe("Pixel/7");
    const anon = await expectStatus(await fetch(`${mobile(s)}/device`), 200);
    expect(anon.device).toBeNull();
  });

  test("GET /settings is snake_case with the device's rate; GET /webhooks lists Textwire's receiver", async () => {
    const p = await phone(s);
    expect(p.settings.gateway.notification_channel).toBe("SSE_ONLY");
    expect(p.settings.messages.limit_period).toBe("PerMinute");
    expect(p.settings.messages.limit_value).toBe(50);
    expect(p.settings.ping.interval_seconds).toBe(60);
    expect(typeof p.settings.webhooks.signing_key).toBe("string");
    expect(p.webhooks.map((w) => w.event).sort()).toEqual(["mms:received", "sms:data-received", "sms:delivered", "sms:failed", "sms:received", "sms:sent", "system:ping"]);
    for (const w of p.webhooks) expect(w.url).toBe(`https://127.0.0.1:${s.running.port}/api/mobile/v1/webhooks/${p.id}`);
  });

  test("deleting the device revokes its token", async () => {
    const p = await phone(s);
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "DELETE" }), 200);
    expect(await p.patchDevice()).toBe(401);
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "DELETE" }), 404);
  });
});

describe("GET and PATCH /message", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("due messages are leased to the phone in the app's shape, priority mapped; nobody else gets them", async () => {
    const d = s.running.deps;
    const now = Date.now();
    const low = insertMessage(d, s.accountId, { priority: "low", createdAt: iso(now - 5000), scheduledFor: iso(now - 5000) });
    const urgent = insertMessage(d, s.accountId, { priority: "urgent", createdAt: iso(now - 1000), scheduledFor: iso(now - 1000) });
    const p = await phone(s, { behaviour: "hold" });
    const res = await fetch(`${mobile(s)}/message?order=fifo`, { headers: { Authorization: `Bearer ${p.token}` } });
    const msgs = await expectStatus(res, 200);
    expect(msgs.map((m: any) => m.id)).toEqual([urgent, low]);
    expect(msgs[0]).toMatchObject({ textMessage: { text: expect.any(String) }, withDeliveryReport: true, priority: 100 });
    expect(msgs[1].priority).toBe(-50);
    expect(msgs[0].phoneNumbers[0]).toMatch(/^\+\d+$/);
    const held = (await expectStatus(await s.api(`/messages/${urgent}`), 200)).data.timeline.at(-1);
    expect(held).toMatchObject({ kind: "leased", deviceId: p.id });
    // The same lease rules as /next: a key poller gets nothing while the phone holds them.
    const viaKey = await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 10 } }), 200);
    expect(viaKey.data.messages).toEqual([]);
    // Bad order is a 400, malformed JSON to PATCH a 400, unknown ids and states a 204.
    await expectStatus(await fetch(`${mobile(s)}/message?order=random`, { headers: { Authorization: `Bearer ${p.token}` } }), 400);
    const patch = (body: string) => fetch(`${mobile(s)}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body });
    await expectStatus(await patch("[{"), 400);
    await expectStatus(await patch(JSON.stringify([{ id: "nope", state: "Sent" }, { id: urgent, state: "Exploded" }, 7])), 204);
    expect((await expectStatus(await s.api(`/messages/${urgent}`), 200)).data.message.status).toBe("queued");
    // Sent with the phone's own zone; repeats change nothing; Delivered sets metadata.deliveredAt.
    const sentMs = Math.floor(Date.now() / 1000) * 1000 - 250;
    const sent = { id: urgent, state: "Sent", recipients: [], states: { Sent: gsonDate(sentMs, 120) } };
    await expectStatus(await patch(JSON.stringify([sent])), 204);
    await expectStatus(await patch(JSON.stringify([sent])), 204);
    const m = (await expectStatus(await s.api(`/messages/${urgent}`), 200)).data.message;
    expect(m.status).toBe("sent");
    expect(m.sentAt).toBe(iso(sentMs));
    await expectStatus(await patch(JSON.stringify([{ id: urgent, state: "Delivered", recipients: [], states: { Delivered: gsonDate(sentMs + 30_000) } }])), 204);
    expect((await expectStatus(await s.api(`/messages/${urgent}`), 200)).data.message.metadata.deliveredAt).toBe(iso(sentMs + 30_000));
    // Failed takes the recipient's error as the reason.
    await expectStatus(await patch(JSON.stringify([{ id: low, state: "Failed", recipients: [{ phoneNumber: "+1", state: "Failed", error: "RESULT_ERROR_INVALID_DESTINATION" }], states: {} }])), 204);
    const f = (await expectStatus(await s.api(`/messages/${low}`), 200)).data.message;
    expect(f.status).toBe("failed");
    expect(f.failureReason).toBe("RESULT_ERROR_INVALID_DESTINATION");
    const list = (await expectStatus(await s.api("/devices"), 200)).data.devices;
    const mine = list.find((x: any) => x.id === p.id);
    expect(mine).toMatchObject({ kind: "smsgate", sentToday: 1, failedToday: 1, online: true, sendRatePerMinute: 50, appVersion: "1.68.0" });
    const metrics = await (await s.api("/../metrics")).text();
    expect(metrics).toContain(`textwire_device_messages_total{device="${p.id}",result="sent"} 1`);
    expect(metrics).toContain("textwire_devices_online");
    expect(metrics).toContain("textwire_oldest_due_seconds");
  });

  test("per-device sendRatePerMinute caps what the phone is handed", async () => {
    const d = s.running.deps;
    const p = await phone(s, { behaviour: "hold" });
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { sendRatePerMinute: 2 } }), 200);
    const now = Date.now();
    // New numbers: the earlier tests' phones (still online) keep their own contacts (sticky sender).
    for (let i = 0; i < 5; i++) insertMessage(d, s.accountId, { createdAt: iso(now - 100 + i), scheduledFor: iso(now - 100), phone: `+1415555${3100 + i}` });
    const msgs = await expectStatus(await fetch(`${mobile(s)}/message`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
    expect(msgs.length).toBe(2);
    const st = await expectStatus(await fetch(`${mobile(s)}/settings`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
    expect(st.messages.limit_value).toBe(2);
    for (const bad of [{ sendRatePerMinute: 0 }, { sendRatePerMinute: 1.5 }, { name: "" }]) {
      expect((await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: bad }), 400)).code).toBe("VALIDATION_ERROR");
    }
    await expectStatus(await s.api(`/devices/00000000-0000-0000-0000-000000000000`, { method: "PATCH", json: {} }), 404);
  });
});

describe("signed webhooks from the phone", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("system:ping sets battery and version; bad signatures, stale timestamps and unknown devices are 401; repeats are deduped", async () => {
    const p = await phone(s);
    const payload = { health: { version: "1.68.0", releaseId: 1, status: "pass", checks: { "battery:level": { status: "pass", observedValue: 77, observedUnit: "percent", description: "" } } } };
    const local = (url: string) => url.replace(/^https:/, "http:");
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: local(w.url) }));
    const ok = await expectStatus(await p.webhook("system:ping", payload, { id: "evt-1" }), 200);
    expect(ok.data).toEqual({ duplicate: false, event: "system:ping" });
    expect((await expectStatus(await p.webhook("system:ping", payload, { id: "evt-1" }), 200)).data.duplicate).toBe(true);
    await expectStatus(await p.webhook("system:ping", payload, { key: "wrong-key" }), 401);
    await expectStatus(await p.webhook("system:ping", payload, { timestamp: Math.floor(Date.now() / 1000) - 600 }), 401);
    const dev = (await expectStatus(await s.api(`/devices/${p.id}`), 200)).data.device;
    expect(dev.battery).toBe(77);
    const body = "{}";
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", p.signingKey).update(body + ts).digest("hex");
    const unknown = await fetch(`${mobile(s)}/webhooks/00000000-0000-0000-0000-000000000000`, { method: "POST", headers: { "X-Timestamp": ts, "X-Signature": sig, "User-Agent": APP_USER_AGENT }, body });
    await expectStatus(unknown, 401);
    const malformed = await fetch(local(p.webhooks[0].url), { method: "POST", headers: { "X-Timestamp": ts, "X-Signature": createHmac("sha256", p.signingKey).update("{" + ts).digest("hex") }, body: "{" });
    await expectStatus(malformed, 400);
  });

  test("sms:sent, sms:delivered and sms:failed change the message", async () => {
    const d = s.running.deps;
    const p = await phone(s, { behaviour: "hold" });
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
    const now = Date.now();
    const a = insertMessage(d, s.accountId, { scheduledFor: iso(now - 10), createdAt: iso(now - 10) });
    const b = insertMessage(d, s.accountId, { scheduledFor: iso(now - 10), createdAt: iso(now - 9) });
    await p.pull();
    const at = Math.floor(Date.now() / 1000) * 1000;
    await expectStatus(await p.webhook("sms:sent", { messageId: a, recipient: "+15551234567", simNumber: 1, partsCount: 1, sentAt: gsonDate(at, 60) }), 200);
    await expectStatus(await p.webhook("sms:delivered", { messageId: a, recipient: "+15551234567", deliveredAt: gsonDate(at + 5_000) }), 200);
    await expectStatus(await p.webhook("sms:failed", { messageId: b, recipient: "+15551234567", failedAt: gsonDate(at + 5_000), reason: "RESULT_ERROR_INVALID_DESTINATION" }), 200);
    const ma = (await expectStatus(await s.api(`/messages/${a}`), 200)).data.message;
    expect(ma.status).toBe("sent");
    expect(ma.sentAt).toBe(iso(at));
    expect(ma.metadata.deliveredAt).toBe(iso(at + 5_000));
    const mb = (await expectStatus(await s.api(`/messages/${b}`), 200)).data.message;
    expect(mb).toMatchObject({ status: "failed", failureReason: "RESULT_ERROR_INVALID_DESTINATION" });
  });
});

describe("a phone callback whose effect fails", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("a database error after the event id is read stores neither: the resend is applied once", async () => {
    const d = s.running.deps;
    const p = await phone(s);
    p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
    let fail = true;
    // arrange: SQLite refusing to go on after the text was written, once (no request makes the
    // database fail mid-callback): the inbox's receive wrapped, and put back after.
    const real = d.inbound.receive.bind(d.inbound);
    d.inbound.receive = ((accountId: string, input: any) => {
      const out = real(accountId, input);
      if (fail) {
        fail = false;
        // The text was written (in the callback's transaction); the database then refuses to go on.
        throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      }
      return out;
    }) as typeof d.inbound.receive; // arrange: (the wrapper's end)
    try {
      const payload = { messageId: "in-1", message: "STOP", phoneNumber: "+14155550142", simNumber: 1, receivedAt: gsonDate(Date.now()) };
      const first = await p.webhook("sms:received", payload, { id: "evt-fail-1" });
      expect(first.status).toBeGreaterThanOrEqual(500);
      const none = (await expectStatus(await s.api("/inbound"), 200)).data;
      expect(none.messages.filter((m: any) => m.externalId === "in-1")).toHaveLength(0);
      const again = await expectStatus(await p.webhook("sms:received", payload, { id: "evt-fail-1" }), 200);
      expect(again.data).toEqual({ duplicate: false, event: "sms:received" });
      const third = await expectStatus(await p.webhook("sms:received", payload, { id: "evt-fail-1" }), 200);
      expect(third.data.duplicate).toBe(true);
      const stored = (await expectStatus(await s.api("/inbound"), 200)).data.messages.filter((m: any) => m.externalId === "in-1");
      expect(stored).toHaveLength(1);
      expect(stored[0].keyword).toBe("opt-out");
    } finally {
      d.inbound.receive = real; // arrange: the real receive back
    }
  });
});

describe("Processed", () => {
  test("extends a lease that is past half its length, and only the holder's", async () => {
    const clock = { now: Date.parse("2026-11-23T12:00:00.000Z") };
    const s = await startTestServer({}, { clock: () => clock.now });
    try {
      const d = s.running.deps;
      const id = insertMessage(d, s.accountId, { scheduledFor: iso(clock.now - 1000), createdAt: iso(clock.now - 1000) });
      const p = new SmsGateEmulator({ base: mobile(s), behaviour: "hold" });
      await p.register((await regToken(s)).token);
      await expectStatus(await fetch(`${mobile(s)}/message`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
      /** The lease's end as the text's timeline shows it (its live expiry). */
      const expiry = async () => (await expectStatus(await s.api(`/messages/${id}`), 200)).data.timeline.filter((e: any) => e.kind === "leased").at(-1).expiresAt;
      const first = await expiry();
      expect(first).toBe("2026-11-23T12:05:00.000Z");
      const processed = () =>
        fetch(`${mobile(s)}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify([{ id, state: "Processed", recipients: [], states: {} }]) });
      clock.now += 60_000;
      await expectStatus(await processed(), 204);
      expect(await expiry()).toBe(first);
      clock.now += 120_000;
      await expectStatus(await processed(), 204);
      expect(await expiry()).toBe("2026-11-23T12:08:00.000Z");
      const other = new SmsGateEmulator({ base: mobile(s), behaviour: "hold" });
      await other.register((await regToken(s)).token);
      clock.now += 200_000;
      await fetch(`${mobile(s)}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${other.token}`, "Content-Type": "application/json" }, body: JSON.stringify([{ id, state: "Processed", recipients: [], states: {} }]) });
      expect(await expiry()).toBe("2026-11-23T12:08:00.000Z");
    } finally {
      await s.stop();
    }
  });
});

describe("GET /events", () => {
  test("MessageEnqueued when a scheduled message falls due; the phone then takes it", async () => {
    const s = await startTestServer();
    try {
      const p = await phone(s, { behaviour: "hold" });
      await p.connect();
      await p.idle();
      const due = Date.now() + 1_500;
      const r = await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155550150", content: "Later", scheduledFor: new Date(due).toISOString() } }), 201);
      const end = Date.now() + 6_000;
      while (!p.taken.includes(r.data.messageId) && Date.now() < end) await Bun.sleep(20);
      expect(p.taken).toContain(r.data.messageId);
      const last = p.events.filter((e) => e.event === "MessageEnqueued").at(-1)!;
      // Woken by the due timer, not by polling: the event came at (or just after) the due time.
      expect(performance.timeOrigin + last.at).toBeGreaterThanOrEqual(due - 50);
      expect(performance.timeOrigin + last.at).toBeLessThan(due + 1_000);
      p.disconnect();
    } finally {
      await s.stop();
    }
  });
});
