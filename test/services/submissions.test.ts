/**
 * The submission service's upkeep on a running server (src/services/submissions.ts), read inside:
 * how many forgotten idempotency keys a sweep removes shows in no answer. That a key is forgotten
 * after 24 hours, as a sender sees it, is test/api/webhook.test.ts's.
 */
import { describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

async function createForm(t: TestServer) {
  return (await expectStatus(await t.api("/forms", { method: "POST", json: formBody() }), 201)).data.form as { id: string };
}
const post = (t: TestServer, formId: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${t.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
let phoneCounter = 1000;
const nextPhone = () => `+1415555${String(phoneCounter++).padStart(4, "0")}`;

describe("Idempotency-Key upkeep", () => {
  test("after 24 hours the key is forgotten, and the sweep removes it once it is", async () => {
    let now = Date.parse("2026-03-01T12:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const f = await createForm(t);
      const phone = nextPhone();
      const a = await expectStatus(await post(t, f.id, { phoneNumber: phone }, { "Idempotency-Key": "x" }), 200);
      now += 23 * 3_600_000;
      const b = await expectStatus(await post(t, f.id, { phoneNumber: phone }, { "Idempotency-Key": "x" }), 200);
      expect(b.data.messageId).toBe(a.data.messageId);
      now += 2 * 3_600_000;
      const c = await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }, { "Idempotency-Key": "x" }), 200);
      expect(c.data.messageId).not.toBe(a.data.messageId);
      expect(t.running.deps.submissions.sweepIdempotencyKeys()).toBe(0);
      now += 25 * 3_600_000;
      expect(t.running.deps.submissions.sweepIdempotencyKeys()).toBe(1);
    } finally {
      await t.stop();
    }
  });
});
