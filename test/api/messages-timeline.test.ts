import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { iso, row } from "../helpers/fixtures";
import { LEASE_HISTORY_MAX } from "../../src/db/stores/messages/history";

const T0 = Date.parse("2026-11-20T12:00:00.000Z");

describe("GET /v1/messages/{id}: the timeline of states and leases", () => {
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => clock.now });
  });
  afterAll(() => s.stop());

  const lease = async (deviceId: string, leaseSeconds = 300) =>
    (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 1, leaseSeconds, deviceId } }), 200)).data.messages as any[];
  const report = (id: string, json: Record<string, unknown>) => s.api(`/messages/${id}/status`, { method: "PUT", json });
  const manual = async (json: Record<string, unknown> = {}) =>
    (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hi", ...json } }), 201)).data.messageId as string;
  const timeline = async (id: string) => (await expectStatus(await s.api(`/messages/${id}`), 200)).data.timeline as any[];

  test("a new message: created only; a later schedule is its own step", async () => {
    clock.now = T0;
    const id = await manual();
    expect(await timeline(id)).toEqual([{ at: iso(T0), kind: "created" }]);
    const later = await manual({ scheduledFor: iso(T0 + 3_600_000) });
    expect(await timeline(later)).toEqual([
      { at: iso(T0), kind: "created" },
      { at: iso(T0 + 3_600_000), kind: "scheduled" },
    ]);
    for (const x of [id, later]) await expectStatus(await report(x, { status: "cancelled" }), 200);
  });

  test("lease, failed attempt with automatic retry, a lease that ran out, the owner's retry, sent", async () => {
    clock.now = T0 + 86_400_000;
    const start = clock.now;
    const d = s.running.deps;
    const id = await manual({ maxAttempts: 2 });
    // 1. Leased to phone A, which reports a transient failure: back in the queue in 1 min.
    const [a] = await lease("phone-A");
    expect(a.id).toBe(id);
    clock.now = start + 5_000;
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "no service", leaseToken: a.leaseToken }), 200)).data.status).toBe("queued");
    // 2. Leased to phone B, which never reports: the lease runs out.
    clock.now = start + 65_000;
    const [b] = await lease("phone-B", 30);
    expect(b.id).toBe(id);
    clock.now = start + 95_000;
    d.leases.sweep(clock.now); // arrange: the lease sweep's timer tick, run at once at the test's clock
    // 3. Phone A again; the final failure.
    clock.now = start + 100_000;
    const [c] = await lease("phone-A");
    clock.now = start + 110_000;
    expect((await expectStatus(await report(id, { status: "failed", failureReason: "no service", leaseToken: c.leaseToken }), 200)).data.status).toBe("failed");
    let tl = await timeline(id);
    expect(tl.map((e) => e.kind)).toEqual(["created", "leased", "attempt_failed", "leased", "lease_expired", "leased", "failed"]);
    expect(tl[1]).toEqual({ at: iso(start), kind: "leased", deviceId: "phone-A", deviceName: null, expiresAt: iso(start + 300_000) });
    expect(tl[2]).toEqual({ at: iso(start + 5_000), kind: "attempt_failed", reason: "no service", retryAt: iso(start + 65_000), by: "automatic" });
    expect(tl[4]).toEqual({ at: iso(start + 95_000), kind: "lease_expired", deviceId: "phone-B", deviceName: null });
    expect(tl[6]).toEqual({ at: iso(start + 110_000), kind: "failed", reason: "no service" });
    // 4. The owner sends it again; phone A sends it.
    clock.now = start + 200_000;
    await expectStatus(await report(id, { status: "queued" }), 200);
    const [e] = await lease("phone-A");
    await expectStatus(await report(id, { status: "sent", sentAt: iso(start + 210_000), leaseToken: e.leaseToken }), 200);
    tl = await timeline(id);
    expect(tl.map((x) => x.kind)).toEqual(["created", "leased", "attempt_failed", "leased", "lease_expired", "leased", "attempt_failed", "leased", "sent"]);
    expect(tl[6]).toEqual({ at: iso(start + 110_000), kind: "attempt_failed", reason: "no service", retryAt: iso(start + 200_000), by: "owner" });
    expect(tl[8]).toEqual({ at: iso(start + 210_000), kind: "sent", deviceId: "phone-A", deviceName: null });
    // The message itself is unchanged in shape; the history lives in its metadata.
    const m = (await expectStatus(await s.api(`/messages/${id}`), 200)).data.message;
    expect(m).toMatchObject({ id, status: "sent", retryCount: 2 });
    expect(m.metadata.leases).toHaveLength(4);
  });

  test("a registered phone is named; the lease held now shows its live expiry", async () => {
    clock.now = T0 + 2 * 86_400_000;
    const d = s.running.deps;
    const devId = crypto.randomUUID();
    // arrange: a registered phone without its app (a registration takes the app's whole handshake)
    d.sqlite
      .query("INSERT INTO devices (id, account_id, kind, name, created_at, updated_at) VALUES (?1, ?2, 'smsgate', 'Shop phone', ?3, ?3)")
      .run(devId, s.accountId, iso(clock.now));
    const id = await manual();
    const [m] = await lease(devId);
    expect(m.id).toBe(id);
    d.sqlite.query("UPDATE messages SET lease_expires_at = ?2 WHERE id = ?1").run(id, iso(clock.now + 900_000)); // arrange: a lease the phone extended
    const tl = await timeline(id);
    expect(tl[1]).toEqual({ at: iso(clock.now), kind: "leased", deviceId: devId, deviceName: "Shop phone", expiresAt: iso(clock.now + 900_000) });
    await expectStatus(await report(id, { status: "cancelled" }), 200);
    expect((await timeline(id)).at(-1)).toMatchObject({ kind: "cancelled" });
  });

  test(`only the latest ${LEASE_HISTORY_MAX} leases are kept`, async () => {
    clock.now = T0 + 3 * 86_400_000;
    const d = s.running.deps;
    const id = await manual();
    for (let i = 0; i < LEASE_HISTORY_MAX + 3; i++) {
      const [m] = await lease(`phone-${i}`, 30);
      expect(m.id).toBe(id);
      clock.now += 31_000;
      // arrange: the lease sweep's tick; leases that run out move on to a retry at the limit, so the
      // count is reset to keep leasing (a guard, not an assertion: the text must still be queued).
      d.leases.sweep(clock.now);
      d.sqlite.query("UPDATE messages SET lease_expiries = 0, scheduled_for = ?2 WHERE id = ?1").run(id, iso(clock.now));
      if (!d.queue.has(id)) throw new Error("left the queue");
    }
    const leases = (await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.metadata.leases;
    expect(leases).toHaveLength(LEASE_HISTORY_MAX);
    expect(leases[0].deviceId).toBe("phone-3");
    expect(leases.at(-1)).toMatchObject({ deviceId: `phone-${LEASE_HISTORY_MAX + 2}`, expired: true });
    await expectStatus(await report(id, { status: "cancelled" }), 200);
  });

  test("metadata that is not JSON still leases, and reads back without a timeline of leases", async () => {
    clock.now = T0 + 4 * 86_400_000;
    const d = s.running.deps;
    const id = await manual();
    d.sqlite.query("UPDATE messages SET metadata = 'not json' WHERE id = ?1").run(id); // arrange: a damaged row no request can write
    const [m] = await lease("phone-X");
    expect(m.id).toBe(id);
    // Leasing left the damaged metadata as it was: the API shows none.
    expect((await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.metadata).toEqual({});
    expect((await timeline(id)).map((e) => e.kind)).toEqual(["created"]);
    await expectStatus(await report(id, { status: "cancelled" }), 200);
  });

  test("another account's or an unknown id is 404 MESSAGE_NOT_FOUND", async () => {
    const r = await expectStatus(await s.api(`/messages/${crypto.randomUUID()}`), 404);
    expect(r.code).toBe("MESSAGE_NOT_FOUND");
  });
});
