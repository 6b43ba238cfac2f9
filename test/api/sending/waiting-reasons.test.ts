import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { cancelAllQueued } from "../../helpers/reads";
import { insertMessage, iso } from "../../helpers/fixtures";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

/**
 * Every `waiting.reason` a queued text gives (docs/phones.md, "How fast a phone sends"), each produced
 * for real and read through GET /v1/messages/<id>, with the plain words the dashboard shows.
 * no-phone, phone-budget and new-recipient-limit: test/api/sending/budgets.test.ts.
 */
let s: TestServer;
beforeAll(async () => (s = await startTestServer()));
afterAll(() => s.stop());

const mobile = () => `${s.url}/api/mobile/v1`;
let n = 0;
const number = () => `+1415555${String(6000 + n++)}`;
const waitingOf = async (id: string) => (await expectStatus(await s.api(`/messages/${id}`), 200)).data.waiting;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

async function phone(): Promise<SmsGateEmulator> {
  const p = new SmsGateEmulator({ base: mobile(), behaviour: "hold" });
  const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  await p.register(token);
  return p;
}
const take = async (p: SmsGateEmulator): Promise<Array<{ id: string }>> =>
  expectStatus(await fetch(`${mobile()}/message?order=fifo`, { headers: { Authorization: `Bearer ${p.token}` } }), 200);
const report = async (p: SmsGateEmulator, items: unknown[]) =>
  expectStatus(await fetch(`${mobile()}/message`, { method: "PATCH", headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" }, body: JSON.stringify(items) }), 204);

/** Earlier tests' queued texts out of the way. */
const clear = () => cancelAllQueued(s);

describe("why a queued text waits", () => {
  test("quiet-hours: a form's text due inside its quiet hours waits until they end, and says so", async () => {
    // Quiet hours around now (UTC, the form's zone; a US number has several zones, so the form's counts).
    const now = Date.now();
    const start = hhmm(now - 3_600_000);
    const endMs = Math.floor((now + 2 * 3_600_000) / 60_000) * 60_000;
    const form = formBody({ settings: { delayMinutes: 0, timezone: "UTC", quietHours: { start, end: hhmm(endMs) } } });
    const fid = (await expectStatus(await s.api("/forms", { method: "POST", json: form }), 201)).data.form.id;
    const sent = await expectStatus(
      await fetch(`${s.base}/forms/${fid}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: number(), firstName: "Ann" }) }),
      200,
    );
    const w = await waitingOf(sent.data.messageId);
    expect(w).toMatchObject({ reason: "quiet-hours", until: new Date(endMs).toISOString() });
    expect(w.words).toContain("quiet hours");
    // The same form's text after a plain delay (no quiet hours in the way) is only "scheduled".
    const plain = formBody({ settings: { delayMinutes: 30, timezone: "UTC", quietHours: { start: hhmm(now + 6 * 3_600_000), end: hhmm(now + 7 * 3_600_000) } } });
    const pid = (await expectStatus(await s.api("/forms", { method: "POST", json: plain }), 201)).data.form.id;
    const later = await expectStatus(
      await fetch(`${s.base}/forms/${pid}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: number() }) }),
      200,
    );
    expect(await waitingOf(later.data.messageId)).toMatchObject({ reason: "scheduled" });
  });

  test("scheduled: a text set for later (no quiet hours) waits for its time", async () => {
    const at = iso(Date.now() + 3_600_000);
    const id = insertMessage(s.running.deps, s.accountId, { scheduledFor: at, phone: number() });
    const w = await waitingOf(id);
    expect(w).toMatchObject({ reason: "scheduled", until: at });
    expect(w.words).toContain("later");
  });

  test("in-queue: a phone is connected with room, the text is next in line", async () => {
    await phone();
    const id = insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 1_000), phone: number() });
    const w = await waitingOf(id);
    expect(w.reason).toBe("in-queue");
    expect(Date.parse(w.until)).toBeGreaterThan(0);
    expect(w.words).toContain("Next in line");
  });

  test("phone-paused: the contact's own phone is paused after Android's limit; the text says so", async () => {
    for (const d of (await expectStatus(await s.api("/devices"), 200)).data.devices) await expectStatus(await s.api(`/devices/${d.id}`, { method: "DELETE" }), 200);
    await clear();
    const p = await phone();
    const customer = number();
    // The customer's first text goes from p: their next ones stick to it.
    const first = insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 2_000), phone: customer });
    expect((await take(p)).map((m) => m.id)).toEqual([first]);
    await report(p, [{ id: first, state: "Sent", recipients: [{ phoneNumber: customer, state: "Sent" }], states: { Sent: new Date().toISOString() } }]);
    // Another text fails with the app's own words for Android's limit: p is paused.
    const other = insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 1_000), phone: number() });
    expect((await take(p)).map((m) => m.id)).toEqual([other]);
    const error = "Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)";
    await report(p, [{ id: other, state: "Failed", recipients: [{ phoneNumber: "+14155550000", state: "Failed", error }], states: { Failed: new Date().toISOString() } }]);
    const paused = (await expectStatus(await s.api(`/devices/${p.id}`), 200)).data.device.capacity;
    expect(paused.pausedUntil).not.toBeNull();
    const next = insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 500), phone: customer });
    const w = await waitingOf(next);
    expect(w).toMatchObject({ reason: "phone-paused", until: paused.pausedUntil });
    expect(w.words).toContain("paused");
  });
});
