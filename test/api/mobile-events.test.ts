/**
 * Outbound events that come from phones : message.delivered when a phone
 * reports a delivery, device.online / device.offline when a phone comes and goes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { broadcastQueued } from "../helpers/reads";
import { insertMessage } from "../helpers/fixtures";
import { SmsGateEmulator } from "../helpers/smsgate-emulator";
import { eventSink, type EventSink } from "../helpers/event-sink";

const T0 = Date.parse("2026-11-23T12:00:00.000Z");
/** The events of one type the owner's receiver got, oldest first (their `data`). */
const events = async (sink: EventSink, type: string) => (await sink.events()).filter((e) => e.type === type).map((e) => e.data);

describe("events from phones", () => {
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({ allowPrivateWebhookUrls: true, deviceOfflineAfterMs: 120_000 }, { clock: () => clock.now });
    // The owner's receiver, for the types these tests are about.
    sink = await eventSink(s, ["message.delivered", "device.online", "device.offline"]);
  });
  afterAll(async () => {
    sink.stop();
    await s.stop();
  });
  let sink: EventSink;

  test("a phone's Delivered report emits message.delivered once, with the message", async () => {
    const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
    const p = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1` });
    await p.register(token);
    const id = insertMessage(s.running.deps, s.accountId);
    const got = await expectStatus(await fetch(`${s.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
    expect(got.map((m: any) => m.id)).toEqual([id]);
    const patch = (body: unknown) =>
      fetch(`${s.url}/api/mobile/v1/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    await expectStatus(await patch([{ id, state: "Sent", recipients: [], states: { Sent: new Date(T0).toISOString() } }]), 204);
    const delivered = [{ id, state: "Delivered", recipients: [], states: { Delivered: new Date(T0 + 5000).toISOString() } }];
    await expectStatus(await patch(delivered), 204);
    await expectStatus(await patch(delivered), 204); // a repeat emits nothing more
    const ev = await events(sink, "message.delivered");
    expect(ev).toHaveLength(1);
    expect(ev[0].message).toMatchObject({ id, status: "sent", metadata: { deliveredAt: new Date(T0 + 5000).toISOString() } });
  });

  test("a phone going quiet past --device-offline-after emits device.offline; its next request device.online", async () => {
    // arrange: the presence check's timer tick, run at once at the test's clock (the first look
    // records the states); the ticks below are the same.
    const d = s.running.deps;
    d.devices.notePresence(clock.now);
    const before = (await events(sink, "device.offline")).length;
    clock.now += 200_000; // past the 2-minute window, no request meanwhile
    d.devices.notePresence(clock.now); // arrange: the presence tick
    const off = await events(sink, "device.offline");
    expect(off.length).toBe(before + 1);
    expect(off.at(-1).device).toMatchObject({ kind: "smsgate", online: false });
    // A key-polling recipe appears with X-Device-Id: it is online from its first poll.
    await expectStatus(await s.api("/messages/next", { method: "POST", json: {}, headers: { "X-Device-Id": "kitchen-phone", "X-Device-Name": "Kitchen" } }), 200);
    d.devices.notePresence(clock.now); // arrange: the presence tick
    const on = await events(sink, "device.online");
    expect(on.at(-1).device).toMatchObject({ name: "Kitchen", online: true });
    // Nothing changed: no further events.
    const counts = [(await events(sink, "device.online")).length, (await events(sink, "device.offline")).length];
    d.devices.notePresence(clock.now); // arrange: the presence tick
    expect([(await events(sink, "device.online")).length, (await events(sink, "device.offline")).length]).toEqual(counts);
  });
});

describe("MessageCancelled reaches the phone holding a message, however it was cancelled", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  async function holdingPhone() {
    const p = new SmsGateEmulator({ base: `${s.url}/api/mobile/v1`, behaviour: "hold", name: "holder" });
    await p.register((await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token);
    await p.loadSettings();
    await p.connect();
    return p;
  }
  const until = async <T>(what: string, f: () => T | undefined | false, ms = 5000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = f();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await Bun.sleep(20);
    }
  };
  const cancelledIds = (p: SmsGateEmulator) => p.events.filter((e) => e.event === "MessageCancelled").map((e) => JSON.parse(e.data).messageId);

  test("a broadcast cancel and a STOP from the recipient", async () => {
    const p = await holdingPhone();
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550177", tags: ["b"] } }), 201)).data.contact;
    const b = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "B", content: "Hi", segment: { tags: ["b"] } } }), 202);
    await broadcastQueued(s, b.data.broadcastId);
    const [bm] = (await expectStatus(await s.api(`/messages?contactId=${c.id}`), 200)).data.messages as Array<{ id: string }>;
    await until("the phone holds the broadcast text", async () => (await p.pull(), p.taken.includes(bm.id)));
    await expectStatus(await s.api(`/broadcasts/${b.data.broadcastId}/cancel`, { method: "POST" }), 200);
    await until("MessageCancelled for the broadcast", () => cancelledIds(p).includes(bm.id));

    const m = await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: c.id, content: "Your order is ready" } }), 201);
    await until("the phone holds the manual text", async () => (await p.pull(), p.taken.includes(m.data.messageId)));
    await expectStatus(await s.api("/messages/inbound", { method: "POST", json: { from: "+12015550177", body: "STOP", receivedAt: new Date().toISOString() } }), 201);
    await until("MessageCancelled for the opted-out number", () => cancelledIds(p).includes(m.data.messageId));
    p.disconnect();
  });
});
