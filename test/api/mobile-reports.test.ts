import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { cancelAllQueued, messagesToPhone, raiseApiLimits } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";
import { insertContact, insertMessage, iso } from "../helpers/fixtures";
import { SmsGateEmulator, gsonDate } from "../helpers/smsgate-emulator";
import { waitFor } from "../helpers/event-receiver-client";
import { createLogger } from "../../src/lib/log";

/**
 * Phones' state reports (PATCH /api/mobile/v1/message and the sms:* webhooks): a phone reports
 * only on what it holds, each item is judged on its own, and a sent report tells CRM syncs
 * (contact.updated). docs/devices.md, "Reports".
 */
const mobile = (s: TestServer) => `${s.url}/api/mobile/v1`;

let s: TestServer;
let secret = "";
let endpointId = "";
const got: Array<{ type: string; data: any }> = [];
const rx = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = await req.text();
    got.push(new Webhook(secret).verify(body, Object.fromEntries(req.headers)) as any);
    return new Response("ok");
  },
});
beforeAll(async () => {
  s = await startTestServer({ sendRatePerMinute: 10_000, allowPrivateWebhookUrls: true });
  raiseApiLimits(s);
  const ep = await expectStatus(await s.api("/webhook-endpoints", { method: "POST", json: { url: `http://127.0.0.1:${rx.port}/`, events: ["*"], allowInsecure: true } }), 201);
  secret = ep.data.endpoint.secret;
  endpointId = ep.data.endpoint.id;
});
afterAll(async () => {
  await s.stop();
  rx.stop(true);
});

async function phone() {
  const t = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  const p = new SmsGateEmulator({ base: mobile(s), behaviour: "hold" });
  await p.register(t);
  await p.loadSettings();
  // The test server speaks plain HTTP; the receiver's URL says https for the real app.
  p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") }));
  return p;
}
/** GET /message: what the phone is handed (leased to it). */
const take = async (p: SmsGateEmulator): Promise<string[]> =>
  (await expectStatus(await fetch(`${mobile(s)}/message?order=fifo`, { headers: { Authorization: `Bearer ${p.token}` } }), 200)).map((m: any) => m.id);
const report = (p: SmsGateEmulator, body: unknown) =>
  fetch(`${mobile(s)}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
const message = async (id: string) => (await expectStatus(await s.api(`/messages/${id}`), 200)).data;
/** A text's status as GET /v1/messages/:id shows it (the server's API limits are raised for the fuzz loop). */
const statusOf = async (id: string) => (await message(id)).message.status as string;
let numbers = 0;
/** A due text to a number no phone has texted yet (a contact's texts stay on its own phone: sticky sender). */
const due = (o: Parameters<typeof insertMessage>[2] = {}) =>
  insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 1_000), createdAt: iso(Date.now() - 1_000), phone: `+1415555${String(2000 + numbers++)}`, ...o });
async function refused(reason: string): Promise<number> {
  const text = await (await s.api("/../metrics")).text();
  const m = new RegExp(`^textwire_device_reports_refused_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}
/** Leaves nothing queued for the next test's phones (the dashboard's bulk cancel). */
const clearQueue = () => cancelAllQueued(s);

describe("a phone reports only on what it holds", () => {
  test("D2's Failed for D1's message changes nothing (counted, 204); D1's Sent then applies", async () => {
    await clearQueue();
    const d1 = await phone();
    const d2 = await phone();
    const m = due();
    expect(await take(d1)).toEqual([m]);
    const before = await refused("not_holder");
    await expectStatus(await report(d2, [{ id: m, state: "Failed", recipients: [{ phoneNumber: "+14155552671", state: "Failed", error: "RESULT_ERROR_NO_SERVICE" }], states: {} }]), 204);
    expect((await message(m)).message.status).toBe("queued");
    expect(await refused("not_holder")).toBe(before + 1);
    // The webhook way is held to the same rule.
    await expectStatus(await d2.webhook("sms:sent", { messageId: m, sentAt: gsonDate(Date.now()) }), 200);
    expect((await message(m)).message.status).toBe("queued");
    expect(await refused("not_holder")).toBe(before + 2);
    await expectStatus(await report(d1, [{ id: m, state: "Sent", recipients: [], states: { Sent: gsonDate(Date.now()) } }]), 204);
    const after = (await message(m)).message;
    expect(after.status).toBe("sent");
    // Its device count is the holder's only.
    const devices = (await expectStatus(await s.api("/devices"), 200)).data.devices;
    expect(devices.find((d: any) => d.id === d1.id)).toMatchObject({ sentToday: 1, failedToday: 0 });
    expect(devices.find((d: any) => d.id === d2.id)).toMatchObject({ sentToday: 0, failedToday: 0 });
  });

  test("a phone cannot report a message leased through an API key; the key holder's report with its lease token still applies", async () => {
    await clearQueue();
    const d1 = await phone();
    const m = due();
    const leased = (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 1 } }), 200)).data.messages;
    expect(leased.map((x: any) => x.id)).toEqual([m]);
    await expectStatus(await report(d1, [{ id: m, state: "Sent", states: { Sent: gsonDate(Date.now()) } }]), 204);
    expect((await message(m)).message.status).toBe("queued");
    const sentAt = new Date().toISOString();
    const ok = await expectStatus(await s.api(`/messages/${m}/status`, { method: "PUT", json: { status: "sent", sentAt, leaseToken: leased[0].leaseToken } }), 200);
    expect(ok.data.status).toBe("sent");
  });

  test("a queued message nobody leased is refused; an unknown id is refused; a late repeat of the holder's own Sent is harmless", async () => {
    await clearQueue();
    const d1 = await phone();
    const free = due({ scheduledFor: iso(Date.now() + 3_600_000) });
    const before = await refused("not_holder");
    await expectStatus(await report(d1, [{ id: free, state: "Sent" }, { id: crypto.randomUUID(), state: "Sent" }]), 204);
    expect((await message(free)).message.status).toBe("queued");
    expect(await refused("not_holder")).toBe(before + 1);
    const m = due();
    expect(await take(d1)).toEqual([m]);
    const sentAt = Math.floor(Date.now() / 1000) * 1000;
    const sent = { id: m, state: "Sent", states: { Sent: gsonDate(sentAt) } };
    await expectStatus(await report(d1, [sent]), 204);
    await expectStatus(await report(d1, [sent, { ...sent, states: { Sent: gsonDate(sentAt + 1_000) } }]), 204);
    expect((await message(m)).message).toMatchObject({ status: "sent", sentAt: iso(sentAt) });
    expect(await refused("not_holder")).toBe(before + 1);
    // Delivered from the phone that sent it still counts after the lease ended.
    await expectStatus(await report(d1, [{ id: m, state: "Delivered", states: { Delivered: gsonDate(sentAt + 2_000) } }]), 204);
    expect((await message(m)).message.metadata.deliveredAt).toBe(iso(sentAt + 2_000));
  });

  test("after the lease ends with nobody else holding it, the late holder's Sent counts; once another phone leased it, it does not", async () => {
    await clearQueue();
    const d1 = await phone();
    const d2 = await phone();
    const a = due();
    expect(await take(d1)).toEqual([a]);
    // D1 goes quiet: its leases are released.
    s.running.deps.leases.releaseHolder(d1.id); // arrange: the offline sweep's release, at once
    await expectStatus(await report(d1, [{ id: a, state: "Sent", states: { Sent: gsonDate(Date.now()) } }]), 204);
    expect((await message(a)).message.status).toBe("sent");
    const b = due();
    expect(await take(d1)).toEqual([b]);
    s.running.deps.leases.releaseHolder(d1.id); // arrange: the offline sweep's release, at once
    expect(await take(d2)).toEqual([b]);
    await expectStatus(await report(d1, [{ id: b, state: "Sent", states: { Sent: gsonDate(Date.now()) } }]), 204);
    expect((await message(b)).message.status).toBe("queued");
    await expectStatus(await report(d2, [{ id: b, state: "Sent", states: { Sent: gsonDate(Date.now()) } }]), 204);
    expect((await message(b)).message.status).toBe("sent");
  });
});

describe("one bad item never blocks its batch", () => {
  test("the poisoned batch: a null recipient is refused, the good item is applied, 204", async () => {
    await clearQueue();
    const d1 = await phone();
    const m1 = due();
    const m2 = due();
    expect((await take(d1)).sort()).toEqual([m1, m2].sort());
    const before = await refused("invalid");
    await expectStatus(await report(d1, [{ id: m1, state: "Failed", recipients: [null] }, { id: m2, state: "Sent" }]), 204);
    expect((await message(m1)).message.status).toBe("queued");
    expect((await message(m2)).message.status).toBe("sent");
    expect(await refused("invalid")).toBe(before + 1);
  });

  test("state must be one of the app's values: a list like [\"Sent\"] is refused", async () => {
    await clearQueue();
    const d1 = await phone();
    const m = due();
    await take(d1);
    for (const state of [["Sent"], "sent", "SENT", { Sent: true }, 1, null, "", "Sent ".repeat(10_000)]) {
      await expectStatus(await report(d1, [{ id: m, state }]), 204);
    }
    expect((await message(m)).message.status).toBe("queued");
    await expectStatus(await report(d1, [{ id: m, state: "Pending" }]), 204);
    expect((await message(m)).message.status).toBe("queued");
  });

  test("every field with wrong types, null and huge values: never a 5xx, the good item beside it always applies", async () => {
    await clearQueue();
    const d1 = await phone();
    // ~70 texts in a few seconds: far past a real phone's budget, which this test is not about.
    const many = { partsPerMinute: 100_000, partsPerHour: 100_000, partsPerDay: 100_000, newRecipientsPerDay: 100_000, newRecipientsPerMonth: 100_000, spacingSeconds: { min: 0, max: 0 } };
    await expectStatus(await s.api(`/devices/${d1.id}`, { method: "PATCH", json: { limits: many } }), 200);
    const huge = "x".repeat(200_000);
    const bad: unknown[] = [
      null, 7, "Sent", true, [], [{ id: "x" }], {},
      { id: null, state: "Sent" }, { id: 7, state: "Sent" }, { id: ["a"], state: "Sent" }, { id: { a: 1 }, state: "Sent" }, { id: huge, state: "Sent" }, { id: "", state: "Sent" },
      { state: "Sent" },
      { id: "__M__", state: "Failed", recipients: [null] }, { id: "__M__", state: "Failed", recipients: [7] }, { id: "__M__", state: "Failed", recipients: ["x"] },
      { id: "__M__", state: "Failed", recipients: [[]] }, { id: "__M__", state: "Failed", recipients: "x" }, { id: "__M__", state: "Failed", recipients: { error: "x" } },
      { id: "__M__", state: "Failed", recipients: [{ error: 7 }] }, { id: "__M__", state: "Failed", recipients: [{ error: { a: 1 } }] }, { id: "__M__", state: "Failed", recipients: [{ error: ["x"] }] },
      { id: "__M__", state: "Failed", recipients: Array.from({ length: 1_000 }, () => ({})) },
      { id: "__M__", state: "Sent", states: "x" }, { id: "__M__", state: "Sent", states: [] }, { id: "__M__", state: "Sent", states: 7 },
      { id: "__M__", state: "Sent", states: { Sent: 7 } }, { id: "__M__", state: "Sent", states: { Sent: true } }, { id: "__M__", state: "Sent", states: { Sent: ["2026-11-23T10:00:00Z"] } },
      { id: "__M__", state: "Sent", states: { Sent: "yesterday" } }, { id: "__M__", state: "Sent", states: { Sent: "2026-13-45T99:99:99Z" } }, { id: "__M__", state: "Sent", states: { Sent: huge } },
      { id: "__M__", state: "Sent", states: { Processed: "nope" } }, { id: "__M__", state: "Delivered", states: { Delivered: {} } },
    ];
    for (const item of bad) {
      const m = due();
      const good = due();
      expect((await take(d1)).sort()).toEqual([m, good].sort());
      const poisoned = JSON.parse(JSON.stringify(item).replaceAll("__M__", m));
      const r = await report(d1, [poisoned, { id: good, state: "Sent", recipients: [{ phoneNumber: "+14155552671", state: "Sent", error: null }], states: { Sent: gsonDate(Date.now()) } }]);
      if (r.status !== 204) throw new Error(`${JSON.stringify(item).slice(0, 200)}: ${r.status} ${(await r.text()).slice(0, 300)}`);
      expect(await statusOf(m)).toBe("queued");
      expect(await statusOf(good)).toBe("sent");
      await clearQueue();
    }
    // A huge failure reason is cut to the stored length, not refused.
    const m = due();
    await take(d1);
    await expectStatus(await report(d1, [{ id: m, state: "Failed", recipients: [{ error: "E".repeat(100_000) }] }]), 204);
    expect((await message(m)).message.failureReason).toBe("E".repeat(200));
    // The body as a whole must still be an array.
    for (const body of ['{"id":"x","state":"Sent"}', "null", '"x"', "7"]) await expectStatus(await report(d1, body), 400);
  });

  test("dates outside [lease − 5 min, now + 5 min] give way to the server's time; the phone's is kept in the timeline", async () => {
    await clearQueue();
    const d1 = await phone();
    const m = due();
    await take(d1);
    const t0 = Date.now();
    await expectStatus(await report(d1, [{ id: m, state: "Sent", states: { Sent: "2020-01-01T00:00:00.000Z" } }]), 204);
    const sent = await message(m);
    expect(Date.parse(sent.message.sentAt)).toBeGreaterThanOrEqual(t0 - 1_000);
    expect(Date.parse(sent.message.sentAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(sent.timeline.find((e: any) => e.kind === "sent")).toMatchObject({ deviceId: d1.id, deviceTime: "2020-01-01T00:00:00.000Z" });
    const future = gsonDate(Date.now() + 3_600_000);
    await expectStatus(await report(d1, [{ id: m, state: "Delivered", states: { Delivered: future } }]), 204);
    const delivered = await message(m);
    expect(Date.parse(delivered.message.metadata.deliveredAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(delivered.timeline.find((e: any) => e.kind === "delivered")).toMatchObject({ deviceId: d1.id, deviceTime: future });
    // Within the window the phone's own time stands.
    const n = due();
    await take(d1);
    const ok = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    await expectStatus(await report(d1, [{ id: n, state: "Sent", states: { Sent: gsonDate(ok, 120) } }]), 204);
    const inWindow = await message(n);
    expect(inWindow.message.sentAt).toBe(iso(ok));
    expect(inWindow.timeline.find((e: any) => e.kind === "sent").deviceTime).toBeUndefined();
  });
});

describe("events match the data", () => {
  const ofType = (t: string) => got.filter((e) => e.type === t);

  test("a Sent report from the phone: contact.updated with the new status, messageCount and lastContactedAt; exactly once", async () => {
    await clearQueue();
    const d1 = await phone();
    const contactId = insertContact(s.running.deps, s.accountId, { phone: "+14155550177", firstName: "Bo" });
    const m = due({ contactId, phone: "+14155550177" });
    await take(d1);
    await expectStatus(await report(d1, [{ id: m, state: "Sent", states: { Sent: gsonDate(Date.now()) } }]), 204);
    const e = await waitFor("contact.updated", () => ofType("contact.updated").find((x) => x.data.contact.id === contactId));
    expect(e.data.contact).toMatchObject({ status: "contacted", messageCount: 1 });
    expect(e.data.contact.lastContactedAt).toBe((await message(m)).message.sentAt);
    // A repeat changes nothing and says nothing.
    await expectStatus(await report(d1, [{ id: m, state: "Sent" }, { id: m, state: "Delivered" }]), 204);
    await waitFor("message.delivered", () => ofType("message.delivered").find((x) => x.data.message.id === m));
    expect(ofType("contact.updated").filter((x) => x.data.contact.id === contactId)).toHaveLength(1);
    // Recorded for the endpoint: the deliveries list shows it.
    const list = (await expectStatus(await s.api(`/webhook-endpoints/${endpointId}/deliveries?eventType=contact.updated`), 200)).data;
    expect(list.pagination.total).toBeGreaterThanOrEqual(1);
  });

  test("a sent status through the /v1 messages API: contact.updated", async () => {
    const contactId = insertContact(s.running.deps, s.accountId, { phone: "+14155550178" });
    const m = insertMessage(s.running.deps, s.accountId, { contactId, phone: "+14155550178", scheduledFor: iso(Date.now() + 3_600_000) });
    await expectStatus(await s.api(`/messages/${m}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString() } }), 200);
    const e = await waitFor("contact.updated", () => ofType("contact.updated").find((x) => x.data.contact.id === contactId));
    expect(e.data.contact).toMatchObject({ status: "contacted", messageCount: 1 });
  });
});

describe("STOP twice through the phone's sms:received", () => {
  test("the first STOP's confirmation stays queued; no second one", async () => {
    await clearQueue();
    const d1 = await phone();
    const from = "+14155550188";
    const received = (id: string, message: string) => d1.webhook("sms:received", { messageId: id, message, phoneNumber: from, simNumber: 1, receivedAt: gsonDate(Date.now()) }, { id: `evt-${id}` });
    await expectStatus(await received("in-1", "STOP"), 200);
    await expectStatus(await received("in-2", "stop"), 200);
    const rows = await messagesToPhone(s, from);
    expect(rows.map((r) => [r.status, r.metadata.keyword])).toEqual([["queued", "opt-out"]]);
    // The phone is handed the confirmation.
    const confirmation = rows[0].id;
    expect(await take(d1)).toContain(confirmation);
  });
});

describe("refusals are logged, and stay inside the account", () => {
  test("another account's phone cannot touch a message; each refused item is logged with its reason", async () => {
    const lines: string[] = [];
    const t = await startTestServer({}, { logger: createLogger("json", (l) => lines.push(l)) });
    try {
      const d = t.running.deps;
      const other = newAccount(t, { name: "Other shop" });
      const reg = async (key: string) => {
        const tok = (await expectStatus(await t.api("/devices/registration-tokens", { method: "POST", json: {}, key }), 201)).data.token;
        const p = new SmsGateEmulator({ base: mobile(t), behaviour: "hold" });
        await p.register(tok);
        return p;
      };
      const mine = await reg(t.adminKey);
      const theirs = await reg(other.apiKey);
      const m = insertMessage(d, t.accountId, { scheduledFor: iso(Date.now() - 1_000), createdAt: iso(Date.now() - 1_000) });
      const took = await expectStatus(await fetch(`${mobile(t)}/message`, { headers: { Authorization: `Bearer ${mine.token}` } }), 200);
      expect(took.map((x: any) => x.id)).toEqual([m]);
      const patch = (p: SmsGateEmulator, body: unknown) =>
        fetch(`${mobile(t)}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
      await expectStatus(await patch(theirs, [{ id: m, state: "Sent" }, { id: m, state: "Failed" }]), 204);
      expect((await expectStatus(await t.api(`/messages/${m}`), 200)).data.message.status).toBe("queued");
      await expectStatus(await patch(mine, [{ id: m, state: ["Sent"] }]), 204);
      const refusedLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "device report refused");
      expect(refusedLines.map((l) => [l.deviceId, l.messageId, l.reason])).toEqual([
        [theirs.id, m, "unknown_message"],
        [theirs.id, m, "unknown_message"],
        [mine.id, m, "invalid"],
      ]);
      // A hostile list cannot flood the log: 20 lines, then one summary.
      lines.length = 0;
      await expectStatus(await patch(mine, Array.from({ length: 500 }, () => ({ id: m, state: "Nope" }))), 204);
      const parsed = lines.map((l) => JSON.parse(l));
      expect(parsed.filter((l) => l.msg === "device report refused")).toHaveLength(20);
      expect(parsed.find((l) => l.msg === "device reports refused")).toMatchObject({ refused: 500, notLogged: 480 });
    } finally {
      await t.stop();
    }
  });
});
