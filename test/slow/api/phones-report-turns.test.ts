import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../../helpers/server";
import { insertMessage, iso } from "../../helpers/fixtures";
import { SmsGateEmulator } from "../../helpers/smsgate-emulator";

/**
 * A phone back online may report on every message it holds in one list. Each item commits on its
 * own, so a list of 1,000 took 1.7 s of the server's only thread; other requests now get a turn
 * between slices (docs/api-decisions.md, "The phone path, round two").
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRatePerMinute: 100_000 });
  // 1,000 texts in hand at once: far past a real phone's budget, which this test is not about.
  const many = { partsPerMinute: 100_000, partsPerHour: 100_000, partsPerDay: 100_000, newRecipientsPerDay: 100_000, newRecipientsPerMonth: 100_000, spacingSeconds: { min: 0, max: 0 } };
  await expectStatus(await s.api("/account/settings", { method: "PUT", json: { sending: { limits: many } } }), 200);
});
afterAll(async () => {
  await s.stop();
});

test("a report on 1,000 held messages applies them all while /health keeps answering", async () => {
  const mobile = `${s.url}/api/mobile/v1`;
  const token = (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  const phone = new SmsGateEmulator({ base: mobile, behaviour: "hold" });
  await phone.register(token);
  for (let i = 0; i < 1000; i++) insertMessage(s.running.deps, s.accountId, { scheduledFor: iso(Date.now() - 1_000), createdAt: iso(Date.now() - 1_000) });
  const ids: string[] = [];
  while (ids.length < 1000) {
    const batch = (await expectStatus(await fetch(`${mobile}/message?order=fifo`, { headers: { Authorization: `Bearer ${phone.token}` } }), 200)) as Array<{ id: string }>;
    expect(batch.length).toBeGreaterThan(0);
    ids.push(...batch.map((m) => m.id));
  }
  // Health answers that came while the report was being applied: with the whole list in one go
  // there is room for at most the one already in flight; a report applied in slices lets many
  // through. Counted, not timed (a loaded machine is slower either way).
  let answeredDuring = 0;
  let done = false;
  const probe = (async () => {
    while (!done) {
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      if (!done) answeredDuring++;
      await Bun.sleep(5);
    }
  })();
  const res = await fetch(`${mobile}/message`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${phone.token}`, "Content-Type": "application/json" },
    body: JSON.stringify(ids.map((id) => ({ id, state: "Sent", recipients: [] }))),
  });
  done = true;
  await probe;
  expect(res.status).toBe(204);
  // Before: /health waited for the whole list (1.7 s on a quiet machine); now one slice (~30 ms).
  expect(answeredDuring).toBeGreaterThanOrEqual(5);
  const sent = s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages WHERE status = 'sent'").get() as { n: number };
  expect(sent.n).toBe(1000);
}, 90_000);
