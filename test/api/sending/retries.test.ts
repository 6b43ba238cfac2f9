import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { insertMessage, iso, row } from "../../helpers/fixtures";
import { messageOf, queueLength } from "../../helpers/reads";

// insertMessage (SQL) arranges a message of a form without its webhook; what the reports changed
// is read back through the API (messageOf: GET /messages/:id and its stage in the list).

const T0 = Date.parse("2026-11-20T12:00:00.000Z");
/** Lease expiries with no report before a text fails (the server's --max-lease-attempts, set here). */
const MAX_LEASE_ATTEMPTS = 3;

describe("automatic retries", () => {
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({ maxLeaseAttempts: MAX_LEASE_ATTEMPTS }, { clock: () => clock.now });
  });
  afterAll(() => s.stop());

  const lease = async () => (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 50 } }), 200)).data.messages as any[];
  const report = (id: string, json: Record<string, unknown>) => s.api(`/messages/${id}/status`, { method: "PUT", json });
  const manual = async (json: Record<string, unknown>) =>
    (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hi", ...json } }), 201)).data.messageId as string;

  test("a transient failure re-queues after 1 min; the second failure is final (default 2 attempts)", async () => {
    clock.now = T0;
    const id = await manual({});
    const [m] = await lease();
    expect(m.id).toBe(id);
    const first = await expectStatus(await report(id, { status: "failed", failureReason: "generic failure", leaseToken: m.leaseToken }), 200);
    expect(first.data).toMatchObject({ messageId: id, status: "queued", retryScheduledFor: iso(T0 + 60_000) });
    const shown = await messageOf(s, id);
    expect(shown).toMatchObject({ status: "queued", stage: "queued", retryCount: 1, failureReason: null, scheduledFor: iso(T0 + 60_000) });
    expect(shown!.metadata.failures).toEqual([{ at: iso(T0), reason: "generic failure", retryAt: iso(T0 + 60_000) }]);
    // The phone repeating the same report is answered as a repeat: no second attempt used up.
    const again = await expectStatus(await report(id, { status: "failed", failureReason: "generic failure", leaseToken: m.leaseToken }), 200);
    expect(again.data.status).toBe("queued");
    expect((await messageOf(s, id))!.retryCount).toBe(1);
    // Not handed out before the backoff ends.
    expect(await lease()).toEqual([]);
    clock.now = T0 + 60_000;
    const [m2] = await lease();
    expect(m2.id).toBe(id);
    const last = await expectStatus(await report(id, { status: "failed", failureReason: "generic failure", leaseToken: m2.leaseToken }), 200);
    expect(last.data.status).toBe("failed");
    expect(last.data.retryScheduledFor).toBeUndefined();
    expect(await messageOf(s, id)).toMatchObject({ status: "failed", failureReason: "generic failure", retryCount: 1 });
    // It left the queue: no text of the account waits in line.
    expect(await queueLength(s, { phoneNumber: "+14155552671" })).toBe(0);
  });

  test("a permanent reason is final at once", async () => {
    clock.now = T0 + 3_600_000;
    const id = await manual({ maxAttempts: 5 });
    const [m] = await lease();
    const r = await expectStatus(await report(id, { status: "failed", failureReason: "invalid number", leaseToken: m.leaseToken }), 200);
    expect(r.data.status).toBe("failed");
    expect((await messageOf(s, id))!.retryCount).toBe(0);
  });

  test("a manual message's maxAttempts: backoff 1 min, 5 min, then final", async () => {
    clock.now = T0 + 7_200_000;
    const start = clock.now;
    const id = await manual({ maxAttempts: 3 });
    let [m] = await lease();
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "no service", leaseToken: m.leaseToken }), 200)).data.retryScheduledFor).toBe(iso(start + 60_000));
    clock.now = start + 60_000;
    [m] = await lease();
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "radio off", leaseToken: m.leaseToken }), 200)).data.retryScheduledFor).toBe(
      iso(start + 60_000 + 300_000),
    );
    clock.now = start + 360_000;
    [m] = await lease();
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "no service", leaseToken: m.leaseToken }), 200)).data.status).toBe("failed");
    expect(await messageOf(s, id)).toMatchObject({ status: "failed", retryCount: 2 });
  });

  test("maxAttempts out of range is a 400 that writes nothing", async () => {
    const messageCount = async () => (await expectStatus(await s.api("/messages"), 200)).data.pagination.total as number;
    const before = await messageCount();
    for (const bad of [0, 11, 2.5, "3"]) {
      const b = await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hi", maxAttempts: bad } }), 400);
      expect(b.errors.map((e: any) => e.field)).toContain("maxAttempts");
    }
    expect(await messageCount()).toBe(before);
  });

  test("a form's settings.maxAttempts applies to its messages and is validated", async () => {
    const bad = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { maxAttempts: 0 } }) }), 400);
    expect(JSON.stringify(bad)).toContain("settings.maxAttempts");
    const created = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { maxAttempts: 1 } }) }), 201);
    expect(created.data.form.settings.maxAttempts).toBe(1);
    clock.now = T0 + 10_800_000;
    const id = insertMessage(s.running.deps, s.accountId, { formId: created.data.form.id });
    const [m] = await lease();
    expect(m.id).toBe(id);
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "no service", leaseToken: m.leaseToken }), 200)).data.status).toBe("failed");
  });

  test("a no-report expiry is retried too while attempts are left", async () => {
    clock.now = T0 + 14_400_000;
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    const attempts = MAX_LEASE_ATTEMPTS;
    for (let i = 0; i < attempts; i++) {
      const ms = await lease();
      expect(ms.map((x) => x.id)).toEqual([id]);
      clock.now += 300_000;
      d.leases.sweep(clock.now); // arrange: the lease sweep's timer tick, run at once at the test's clock
    }
    const shown = await messageOf(s, id);
    expect(shown).toMatchObject({ status: "queued", stage: "queued", retryCount: 1, scheduledFor: iso(clock.now + 60_000) });
    expect(shown!.metadata.failures[0].reason).toBe("no-report");
    // Back in the queue, handed out once the retry is due.
    expect(await lease()).toEqual([]);
    clock.now += 60_000;
    expect((await lease()).map((x) => x.id)).toEqual([id]);
    // The retry starts the count of expired leases again: one more lease running out is not the end.
    expect(attempts).toBeGreaterThan(1);
    clock.now += 300_000;
    d.leases.sweep(clock.now); // arrange: the lease sweep's tick
    expect(await messageOf(s, id)).toMatchObject({ status: "queued", retryCount: 1 });
    await expectStatus(await report(id, { status: "cancelled" }), 200);
  });
});
