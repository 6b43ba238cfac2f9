import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../../helpers/server";
import { insertMessage, iso } from "../../helpers/fixtures";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

/**
 * A phone goes silent mid-run (docs/phones.md, "When a phone or SIM is paused"): it stops asking
 * and reporting while holding a text. Its leased text moves to the other phone once it is offline
 * (--device-offline-after); a contact whose texts stick to it moves only once it has been gone
 * `stickyMoveAfterMinutes` (default 10). Two emulated SMSGate phones, a clock the test moves.
 */
const T0 = Date.parse("2026-12-07T10:00:00Z");
const clock = { now: T0 };
let s: TestServer;
beforeAll(async () => (s = await startTestServer({ deviceOfflineAfterMs: 120_000 }, { clock: () => clock.now })));
afterAll(() => s.stop());

const mobile = () => `${s.url}/api/mobile/v1`;
async function phone(name: string): Promise<SmsGateEmulator> {
  const p = new SmsGateEmulator({ base: mobile(), behaviour: "hold", name });
  const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  await p.register(token);
  return p;
}
const take = async (p: SmsGateEmulator): Promise<string[]> =>
  (await expectStatus(await fetch(`${mobile()}/message?order=fifo`, { headers: { Authorization: `Bearer ${p.token}` } }), 200)).map((m: { id: string }) => m.id);
const sent = async (p: SmsGateEmulator, id: string, to: string) =>
  expectStatus(
    await fetch(`${mobile()}/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id, state: "Sent", recipients: [{ phoneNumber: to, state: "Sent" }], states: { Sent: new Date(clock.now).toISOString() } }]),
    }),
    204,
  );
const due = (phone: string) => insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(clock.now - 1_000), createdAt: iso(clock.now - 1_000), phone });
/** The server's offline sweep runs on a 1 s timer: B asks until it is handed what it expects (or 5 s pass). */
async function takeWhen(p: SmsGateEmulator, want: (ids: string[]) => boolean): Promise<string[]> {
  const end = Date.now() + 5_000;
  for (;;) {
    const ids = await take(p);
    if (want(ids) || Date.now() > end) return ids;
    await Bun.sleep(100);
  }
}

describe("a phone that goes silent", () => {
  test("its leased text moves after --device-offline-after; its sticky contact only after 10 minutes", async () => {
    const a = await phone("Shop phone A");
    const customer = "+14155557001";
    // The customer's first text went from A: their texts stick to A.
    const first = due(customer);
    expect(await take(a)).toEqual([first]);
    await sent(a, first, customer);
    const b = await phone("Shop phone B");
    // A is handed a text to a new number, then goes silent (no request, no report, no stream).
    const held = due("+14155557002");
    expect(await take(a)).toEqual([held]);
    clock.now += 1_000;
    const sticky = due(customer);
    // A is still online: B is handed neither A's leased text nor A's contact's.
    expect(await take(b)).toEqual([]);
    // Past --device-offline-after (2 min): A's leased text goes to B; the sticky contact still waits for A.
    clock.now += 121_000;
    const moved = await takeWhen(b, (ids) => ids.includes(held));
    expect(moved).toEqual([held]);
    await sent(b, held, "+14155557002");
    expect((await expectStatus(await s.api(`/messages/${sticky}`), 200)).data.message.status).toBe("queued");
    clock.now = T0 + 9 * 60_000;
    const got = await take(b);
    expect(got).toEqual([]);
    // Ten minutes after A was last seen: the contact moves to B.
    clock.now = T0 + 10 * 60_000 + 1_000;
    expect(await take(b)).toEqual([sticky]);
    expect((await expectStatus(await s.api(`/devices/${a.id}`), 200)).data.device.online).toBe(false);
  });
});
