import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../../helpers/server";
import { eventSink } from "../../helpers/event-sink";
import { cancelAllQueued, raiseApiLimits } from "../../helpers/reads";
import { insertMessage, iso } from "../../helpers/fixtures";
import { SmsGateEmulator, gsonDate } from "../../helpers/smsgate-emulator";
import { newAccount } from "../../helpers/accounts";

/** The real budgets (docs/phones.md, "How fast a phone sends"), through the API and the app's protocol. */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true }, { sendingLimits: "real" });
  raiseApiLimits(s); // the reads back through the API run many requests a minute
});
afterAll(() => s.stop());

const mobile = () => `${s.url}/api/mobile/v1`;
let n = 0;
const number = () => `+1415555${String(4000 + n++)}`;
async function phone(): Promise<SmsGateEmulator> {
  const p = new SmsGateEmulator({ base: mobile(), behaviour: "hold" });
  const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  await p.register(token);
  return p;
}
const take = async (p: SmsGateEmulator): Promise<Array<{ id: string; phoneNumbers: string[]; simNumber: number | null }>> =>
  expectStatus(await fetch(`${mobile()}/message?order=fifo`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
const report = (p: SmsGateEmulator, items: unknown[]) =>
  fetch(`${mobile()}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify(items) });
const due = (o: { phone?: string; content?: string } = {}) =>
  insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 1_000), createdAt: iso(Date.now() - 1_000), phone: o.phone ?? number(), content: o.content });
const device = async (id: string) => (await expectStatus(await s.api(`/devices/${id}`), 200)).data.device;
/** Only the phones made after this: earlier tests' phones are still online and have budget. */
const removePhones = async () => {
  for (const d of (await expectStatus(await s.api("/devices"), 200)).data.devices) await expectStatus(await s.api(`/devices/${d.id}`, { method: "DELETE" }), 200);
};
/** Earlier tests' texts out of the way, as the owner's bulk cancel does. */
const clear = () => cancelAllQueued(s);

describe("limits are validated and shown", () => {
  test("PATCH /v1/devices/<id> limits and sims: 400 naming the field; nothing changes", async () => {
    const p = await phone();
    const cases: Array<[unknown, string]> = [
      [{ limits: { partsPerHour: 0 } }, "limits.partsPerHour"],
      [{ limits: { partsPerHour: 1.5 } }, "limits.partsPerHour"],
      [{ limits: { partsPerMinute: 50, partsPerHour: 40 } }, "limits.partsPerMinute"],
      [{ limits: { spacingSeconds: { min: 9, max: 2 } } }, "limits.spacingSeconds.min"],
      [{ limits: { sendFaster: true } }, "limits.sendFaster"],
      [{ limits: 5 }, "limits"],
      [{ sims: [{ slot: 0, limits: {} }] }, "sims[0].slot"],
      [{ sims: [{ slot: 2, limits: { newRecipientsPerDay: -1 } }] }, "sims[0].limits.newRecipientsPerDay"],
      [{ sims: [{ slot: 2 }] }, "sims[0].limits"],
    ];
    for (const [body, field] of cases) {
      const r = await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: body }), 400);
      expect(r.code).toBe("VALIDATION_ERROR");
      expect(r.errors.map((e: any) => e.field)).toContain(field);
    }
    expect((await device(p.id)).limits).toEqual({ limits: {}, sims: [] });
  });

  test("a phone's and a SIM's own limits; capacity shows what is left; the app is told no more", async () => {
    const p = await phone();
    const d0 = await device(p.id);
    expect(d0.capacity).toMatchObject({ limits: { partsPerMinute: 20, partsPerHour: 200 }, left: { partsThisHour: 200 }, pausedUntil: null, pauseReason: null });
    const r = await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { partsPerMinute: 3, spacingSeconds: { min: 0, max: 0 } }, sims: [{ slot: 2, limits: { partsPerHour: 50 } }] } }), 200);
    expect(r.data.device.limits).toEqual({ limits: { partsPerMinute: 3, spacingSeconds: { min: 0, max: 0 } }, sims: [{ slot: 2, limits: { partsPerHour: 50 } }] });
    await p.loadSettings();
    expect(p.settings.messages).toMatchObject({ limit_period: "PerMinute", limit_value: 3 });
    // null takes a key back to the account's.
    const back = await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { sims: [{ slot: 2, limits: null }] } }), 200);
    expect(back.data.device.limits.sims).toEqual([]);
  });

  test("account defaults: sending.limits and stickyMoveAfterMinutes, validated by field", async () => {
    const bad = await expectStatus(await s.api("/account/settings", { method: "PUT", json: { sending: { limits: { partsPerDay: "lots" }, stickyMoveAfterMinutes: 0 } } }), 400);
    expect(bad.errors.map((e: any) => e.field).sort()).toEqual(["sending.limits.partsPerDay", "sending.stickyMoveAfterMinutes"]);
    const got = (await expectStatus(await s.api("/account/settings"), 200)).data.settings.sending;
    expect(got).toEqual({ limits: { partsPerMinute: 20, partsPerHour: 200, partsPerDay: 1000, newRecipientsPerDay: 300, newRecipientsPerMonth: 3000, spacingSeconds: { min: 3, max: 8 } }, stickyMoveAfterMinutes: 10 });
  });
});

describe("the server keeps to the budget", () => {
  test("parts, not texts: a phone at 3 parts a minute takes one 3-part text, then waits; the text says why", async () => {
    await clear();
    await removePhones();
    const p = await phone();
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { partsPerMinute: 3, spacingSeconds: { min: 0, max: 0 } } } }), 200);
    const long = due({ content: "x".repeat(400) }); // 3 parts of 153
    const short = due();
    expect((await take(p)).map((m) => m.id)).toEqual([long]);
    expect(await take(p)).toEqual([]);
    const detail = (await expectStatus(await s.api(`/messages/${short}`), 200)).data;
    expect(detail.waiting).toMatchObject({ reason: "phone-budget" });
    expect(Date.parse(detail.waiting.until)).toBeGreaterThan(Date.now() + 30_000);
    expect((await device(p.id)).capacity.used.partsLastMinute).toBe(3);
  });

  test("at its new-recipient limit a phone walks past new numbers to a number it has texted, every time", async () => {
    await clear();
    await removePhones();
    const p = await phone();
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { newRecipientsPerDay: 2, spacingSeconds: { min: 0, max: 0 } } } }), 200);
    const known = number();
    due({ phone: known });
    due();
    expect(await take(p)).toHaveLength(2);
    const fresh = Array.from({ length: 100 }, () => due());
    const again = due({ phone: known });
    // The same walk twice (the second from memory, docs/api-decisions.md "Sending engine: crash
    // safety and the queue walk"): only the known number's text leaves.
    expect((await take(p)).map((m) => m.id)).toEqual([again]);
    expect(await take(p)).toEqual([]);
    const detail = (await expectStatus(await s.api(`/messages/${fresh[99]}`), 200)).data;
    expect(detail.waiting).toMatchObject({ reason: "new-recipient-limit" });
    const later = due({ phone: known });
    expect((await take(p)).map((m) => m.id)).toEqual([later]);
  });

  test("one text at a time after the random pause: the next waits for it", async () => {
    await clear();
    const p = await phone();
    due();
    due();
    expect(await take(p)).toHaveLength(1);
    expect(await take(p)).toHaveLength(0);
    expect(Date.parse((await device(p.id)).capacity.nextTextAt)).toBeGreaterThan(Date.now());
  });

  test("the counts survive a restart (they are the stored hand-outs)", async () => {
    const p = await phone();
    await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { spacingSeconds: { min: 0, max: 0 } } } }), 200);
    await clear();
    for (let i = 0; i < 4; i++) due();
    expect(await take(p)).toHaveLength(4);
    s.running.deps.devices.sending.load(); // arrange: the windows read again from the stored hand-outs, as a restart does (test/slow restarts for real)
    expect((await device(p.id)).capacity.used).toMatchObject({ partsLastHour: 4, newRecipientsLastDay: 4 });
  });
});

describe("failover", () => {
  test("Android's limit pauses the phone for its minute; its text goes to the other phone; device.paused is stored", async () => {
    await clear();
    await removePhones();
    // The owner's receiver, for the pause events.
    const sink = await eventSink(s, ["device.paused", "device.resumed"]);
    const a = await phone();
    const b = await phone();
    for (const p of [a, b]) await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { spacingSeconds: { min: 0, max: 0 } } } }), 200);
    const m = due();
    const got = await take(a);
    expect(got.map((x) => x.id)).toEqual([m]);
    const failure = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";
    await expectStatus(await report(a, [{ id: m, state: "Failed", recipients: [{ phoneNumber: got[0].phoneNumbers[0], state: "Failed", error: failure }], states: { Failed: gsonDate(Date.now()) } }]), 204);
    const cap = (await device(a.id)).capacity;
    expect(cap.pauseReason).toBe("android-limit");
    expect(Date.parse(cap.pausedUntil)).toBeGreaterThan(Date.now() + 50_000);
    // While A is paused, B takes the work.
    const next = due();
    expect(await take(a)).toEqual([]);
    expect((await take(b)).map((x) => x.id)).toEqual([next]);
    const types = (await sink.events()).map((e) => e.type);
    expect(types).toContain("device.paused");
    // When the pause is over: device.resumed.
    s.running.deps.devices.failures.sweep(Date.now() + 61_000); // arrange: the pause sweep's timer tick, run at once a minute ahead
    // Stamped a minute ahead, it waits in the endpoint's delivery log for that time.
    expect(await sink.logged("device.resumed")).toBe(1);
    sink.stop();
  });

  test("a contact's texts stay on the phone they last exchanged texts with", async () => {
    await clear();
    const a = await phone();
    const b = await phone();
    for (const p of [a, b]) await expectStatus(await s.api(`/devices/${p.id}`, { method: "PATCH", json: { limits: { spacingSeconds: { min: 0, max: 0 } } } }), 200);
    const to = number();
    const first = due({ phone: to });
    expect((await take(b)).map((x) => x.id)).toEqual([first]);
    await expectStatus(await report(b, [{ id: first, state: "Sent", recipients: [], states: { Sent: gsonDate(Date.now()) } }]), 204);
    const second = due({ phone: to });
    expect(await take(a)).toEqual([]);
    expect((await take(b)).map((x) => x.id)).toEqual([second]);
  });

  test("no phone: the text says so", async () => {
    const other = newAccount(s, { name: "No phones" });
    const id = insertMessage(s.running.deps, other.account.id, { scheduledFor: iso(Date.now() - 1_000), phone: number() });
    const r = await expectStatus(await fetch(`${s.base}/messages/${id}`, { headers: { Authorization: `Bearer ${other.apiKey}` } }), 200);
    expect(r.data.waiting).toMatchObject({ reason: "no-phone", until: null });
    expect(r.data.waiting.words).toContain("phone");
  });
});
