import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, tempDir, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage, iso } from "../helpers/fixtures";
import { messageOf, queueLength, raiseApiLimits } from "../helpers/reads";

// insertMessage and insertContact (SQL) arrange queued messages in a given order and age; what
// leasing and reports changed is read back through the API (stage, timeline, status).
import { rmSync } from "node:fs";
import { newAccount, operatorKey } from "../helpers/accounts";

const T0 = Date.parse("2026-11-20T12:00:00.000Z");
/** A number the queue's length is asked with (test/helpers/reads.ts, queueLength). */
const PROBE = "+14155550100";

async function server(overrides = {}) {
  const clock = { now: T0 };
  const s = await startTestServer(overrides, { clock: () => clock.now });
  raiseApiLimits(s);
  return { s, clock };
}
/** The contact as GET /v1/contacts/:id shows it. */
const contactOf = async (s: TestServer, id: string) => (await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact;
/** The message as the API shows it (GET /messages/:id with its list stage and timeline). */
const shown = async (s: TestServer, id: string) => (await messageOf(s, id))!;
/** The timeline's leases and lease expiries: who holds (held) the message, until when. */
const leasesOf = (m: Record<string, any>) => m.timeline.filter((e: any) => e.kind === "leased");
const expiriesOf = (m: Record<string, any>) => m.timeline.filter((e: any) => e.kind === "lease_expired").length;
/**
 * Waits until the account's long poll is parked, so what the test does next wakes it (a parked
 * poll shows in no answer until it wakes).
 */
async function parked(s: TestServer) {
  const deadline = Date.now() + 5_000;
  while (s.running.deps.leases.waiting(s.accountId) < 1) { // arrange: the poll parked before the text comes (no request shows a parked poll)
    if (Date.now() > deadline) throw new Error("the long poll never parked");
    await Bun.sleep(10);
  }
}
const next = async (s: TestServer, json: Record<string, unknown> = {}, key?: string) =>
  (await expectStatus(await s.api("/messages/next", { method: "POST", json, key }), 200)).data;

describe("POST /messages/next", () => {
  let s: TestServer;
  let clock: { now: number };
  beforeAll(async () => ({ s, clock } = await server()));
  afterAll(() => s.stop());

  test("leases due messages in queue order, each with a token and expiry, recorded in SQLite", async () => {
    const d = s.running.deps;
    const low = insertMessage(d, s.accountId, { priority: "low", createdAt: iso(T0 - 5000) });
    const normal = insertMessage(d, s.accountId, { priority: "normal", createdAt: iso(T0 - 4000) });
    const urgent = insertMessage(d, s.accountId, { priority: "urgent", createdAt: iso(T0 - 1000) });
    const future = insertMessage(d, s.accountId, { priority: "urgent", scheduledFor: iso(T0 + 60_000) });
    const data = await next(s, { limit: 10, leaseSeconds: 120, deviceId: "pixel-7" });
    expect(data.messages.map((m: any) => m.id)).toEqual([urgent, normal, low]);
    for (const m of data.messages) {
      expect(m.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
      expect(m.leaseExpiresAt).toBe(iso(T0 + 120_000));
      expect(m.status).toBe("queued");
      expect(m).toHaveProperty("webhookData");
      const held = await shown(s, m.id);
      expect(held.stage).toBe("with-phone");
      expect(leasesOf(held).at(-1)).toMatchObject({ deviceId: "pixel-7", expiresAt: m.leaseExpiresAt });
    }
    // Leased messages are not handed out again; the future one is not due yet.
    expect((await next(s, { limit: 10 })).messages).toEqual([]);
    clock.now = T0 + 60_000;
    expect((await next(s, { limit: 10 })).messages.map((m: any) => m.id)).toEqual([future]);
    for (const id of [low, normal, urgent, future]) await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
  });

  test("body validation: limit 1-50, leaseSeconds 30-3600", async () => {
    for (const json of [{ limit: 0 }, { limit: 51 }, { leaseSeconds: 29 }, { leaseSeconds: 3601 }, { limit: "x" }]) {
      const b = await expectStatus(await s.api("/messages/next", { method: "POST", json }), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
    }
    // No body at all is fine: one message, default lease.
    await expectStatus(await s.api("/messages/next", { method: "POST" }), 200);
  });

  test("concurrent next calls never share a message", async () => {
    const d = s.running.deps;
    const ids = new Set(Array.from({ length: 45 }, () => insertMessage(d, s.accountId)));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => next(s, { limit: 3, deviceId: `phone-${i}` })));
    const got = results.flatMap((r) => r.messages.map((m: any) => m.id));
    expect(new Set(got).size).toBe(got.length);
    expect(got.length).toBe(45);
    for (const id of got) expect(ids.has(id)).toBe(true);
    const flat = await Promise.all(Array.from({ length: 5 }, () => s.api("/messages/next")));
    expect(flat.every((r) => r.status === 204)).toBe(true);
    await expectStatus(await s.api("/messages/bulk", { method: "PUT", json: { messageIds: got, status: "cancelled" } }), 200);
  });

  test("another account's queue is never reached", async () => {
    const other = newAccount(s, { name: "Other" });
    const mine = insertMessage(s.running.deps, s.accountId);
    const data = await next(s, { limit: 50 }, other.apiKey);
    expect(data.messages).toEqual([]);
    await expectStatus(await s.api(`/messages/${mine}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
  });
});

describe("leases: reports, stale tokens, expiry", () => {
  let s: TestServer;
  let clock: { now: number };
  beforeAll(async () => ({ s, clock } = await server({ maxLeaseAttempts: 3 })));
  afterAll(() => s.stop());

  test("a report ends the lease; a stale token after the lease moved is 409 LEASE_CONFLICT", async () => {
    const d = s.running.deps;
    const contactId = insertContact(d, s.accountId);
    const id = insertMessage(d, s.accountId, { contactId });
    const a = (await next(s, { leaseSeconds: 30, deviceId: "A" })).messages[0];
    expect(a.id).toBe(id);
    clock.now += 31_000;
    const b = (await next(s, { leaseSeconds: 30, deviceId: "B" })).messages[0];
    expect(b.id).toBe(id);
    expect(b.leaseToken).not.toBe(a.leaseToken);
    expect(expiriesOf(await shown(s, id))).toBe(1);
    const stale = await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "failed", failureReason: "network-error", leaseToken: a.leaseToken } }), 409);
    expect(stale.code).toBe("LEASE_CONFLICT");
    expect(await shown(s, id)).toMatchObject({ status: "queued", stage: "with-phone" });
    const sentAt = iso(clock.now);
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "sent", sentAt, leaseToken: b.leaseToken } }), 200);
    expect(await shown(s, id)).toMatchObject({ status: "sent", stage: "sent" });
    expect(await contactOf(s, contactId)).toMatchObject({ messageCount: 1, status: "contacted" });
    // B retrying its report after a timeout: idempotent, not double counted.
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "sent", sentAt, leaseToken: b.leaseToken } }), 200);
    expect((await contactOf(s, contactId)).messageCount).toBe(1);
  });

  test("a late report after the lease expired (and nobody else took it) is accepted", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    const a = (await next(s, { leaseSeconds: 30 })).messages[0];
    clock.now += 31_000;
    d.leases.sweep(clock.now); // arrange: the lease sweep's timer tick, run at once at the test's clock
    expect((await shown(s, id)).stage).toBe("queued");
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "sent", sentAt: iso(clock.now), leaseToken: a.leaseToken } }), 200);
  });

  test("expiries return the message; the 3rd expiry fails it with no-report and it leaves the queue", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    // One attempt only: no automatic retry after "no-report" (retries.test.ts covers those).
    d.sqlite.query("UPDATE messages SET max_attempts = 1 WHERE id = ?").run(id); // arrange: a text allowed one attempt (no request sets it)
    const waiting = await queueLength(s, { phoneNumber: PROBE });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const m = (await next(s, { leaseSeconds: 30 })).messages;
      expect(m.map((x: any) => x.id)).toEqual([id]);
      clock.now += 30_000; // expires exactly at leaseExpiresAt
      d.leases.sweep(clock.now); // arrange: the timer's job, run by hand with the fake clock
      if (attempt < 3) {
        const m = await shown(s, id);
        expect(m).toMatchObject({ status: "queued", stage: "queued" });
        expect(expiriesOf(m)).toBe(attempt);
      }
    }
    const failed = await shown(s, id);
    expect(failed).toMatchObject({ status: "failed", failureReason: "no-report" });
    expect(expiriesOf(failed)).toBe(3);
    // It left the queue: one fewer text waits in line, and none is handed out.
    expect(await queueLength(s, { phoneNumber: PROBE })).toBe(waiting - 1);
    expect((await next(s, { limit: 50 })).messages).toEqual([]);
    // A client retry starts over.
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "queued" } }), 200);
    expect(await shown(s, id)).toMatchObject({ status: "queued", retryCount: 1 });
    // The retry starts the count of expired leases again: two more expiries return it to the queue
    // (with the old count kept, the first would reach the third and fail it).
    for (let attempt = 1; attempt <= 2; attempt++) {
      expect((await next(s, { leaseSeconds: 30 })).messages.map((x: any) => x.id)).toEqual([id]);
      clock.now += 30_000;
      d.leases.sweep(clock.now); // arrange: the timer's job, run by hand with the fake clock
      expect(await shown(s, id)).toMatchObject({ status: "queued", stage: "queued" });
    }
    expect((await next(s)).messages[0].id).toBe(id);
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
  });

  test("the sweeper timer ends expired leases on its own, and wakes a long poll", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    await next(s, { leaseSeconds: 30 });
    const waiting = s.api("/messages/next?wait=5");
    await Bun.sleep(50);
    clock.now += 30_000;
    const body = await expectStatus(await waiting, 200); // the timer swept (≤ 1 s) and notified
    expect(body.data.message.id).toBe(id);
    expect(expiriesOf(await shown(s, id))).toBe(1);
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
  });

  test("cancelling or deleting a leased message ends the lease", async () => {
    const d = s.running.deps;
    const id = insertMessage(d, s.accountId);
    await next(s);
    expect((await shown(s, id)).stage).toBe("with-phone");
    const waiting = await queueLength(s, { phoneNumber: PROBE });
    await expectStatus(await s.api(`/messages/${id}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api(`/messages/${id}`), 404);
    // It left the queue; the in-memory lease's end is test/services/leases.test.ts's.
    expect(await queueLength(s, { phoneNumber: PROBE })).toBe(waiting - 1);
  });

  test("deleting the form or the contact of a leased message ends the lease too", async () => {
    const d = s.running.deps;
    const formId = insertForm(d, s.accountId);
    const contactId = insertContact(d, s.accountId);
    const viaForm = insertMessage(d, s.accountId, { formId });
    const viaContact = insertMessage(d, s.accountId, { contactId });
    expect((await next(s, { limit: 10 })).messages.map((m: any) => m.id).sort()).toEqual([viaForm, viaContact].sort());
    const waiting = await queueLength(s, { phoneNumber: PROBE });
    await expectStatus(await s.api(`/forms/${formId}`, { method: "DELETE" }), 200);
    await expectStatus(await s.api(`/contacts/${contactId}`, { method: "DELETE" }), 200);
    for (const id of [viaForm, viaContact]) await expectStatus(await s.api(`/messages/${id}`), 404);
    // Both left the queue; the in-memory leases' end is test/services/leases.test.ts's.
    expect(await queueLength(s, { phoneNumber: PROBE })).toBe(waiting - 2);
  });
});

describe("send-rate cap", () => {
  test("at most sendRatePerMinute messages leave per minute; tokens come back over time", async () => {
    const { s, clock } = await server({ sendRatePerMinute: 5 });
    try {
      const d = s.running.deps;
      for (let i = 0; i < 9; i++) insertMessage(d, s.accountId);
      expect((await next(s, { limit: 50 })).messages.length).toBe(5);
      const capped = await next(s, { limit: 50 });
      expect(capped.messages).toEqual([]);
      expect(capped.retryAfter).toBe(12);
      expect((await s.api("/messages/next")).status).toBe(204);
      clock.now += 12_000; // one token per 12 s at 5/minute
      expect((await next(s, { limit: 50 })).messages.length).toBe(1);
      clock.now += 60_000;
      expect((await next(s, { limit: 50 })).messages.length).toBe(3);
    } finally {
      await s.stop();
    }
  });
});

describe("GET /messages/next (flat, long-poll)", () => {
  let s: TestServer;
  beforeAll(async () => ({ s } = await server()));
  afterAll(() => s.stop());

  test("one message flat as data.message, or 204", async () => {
    expect((await s.api("/messages/next")).status).toBe(204);
    const id = insertMessage(s.running.deps, s.accountId);
    const pathRes = await fetch(`${s.base}/messages/${s.adminKey}/next?deviceId=tasker`);
    const body = await expectStatus(pathRes, 200);
    expect(body.data.message.id).toBe(id);
    expect(body.data.message.leaseToken).toBeString();
    expect(leasesOf(await shown(s, id)).at(-1).deviceId).toBe("tasker");
    for (const qs of ["?wait=31", "?wait=-1", "?wait=x", "?leaseSeconds=10"]) await expectStatus(await s.api(`/messages/next${qs}`), 400);
  });

  test("?wait long-polls and wakes as soon as a message is queued", async () => {
    const started = performance.now();
    const pending = s.api("/messages/next?wait=10");
    await parked(s);
    const m = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "4155550123", content: "urgent!", priority: "urgent" } }), 201)).data;
    const body = await expectStatus(await pending, 200);
    expect(body.data.message.id).toBe(m.messageId);
    // Well before the 10 s wait ends (a loaded machine included): it woke, it did not wait out.
    expect(performance.now() - started).toBeLessThan(8_000);
  });

  test("?wait wakes as soon as a webhook submission is committed", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Wakes phones" }) }), 201)).data.form;
    const started = performance.now();
    const pending = s.api("/messages/next?wait=10");
    await parked(s);
    const res = await fetch(`${s.base}/forms/${form.id}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ phoneNumber: "4155550124", firstName: "Wake" }),
    });
    const sub = await expectStatus(res, 200);
    const body = await expectStatus(await pending, 200);
    expect(body.data.message.id).toBe(sub.data.messageId);
    expect(performance.now() - started).toBeLessThan(8_000);
  });

  test("?wait returns 204 after the wait when nothing comes", async () => {
    const started = performance.now();
    expect((await s.api("/messages/next?wait=1")).status).toBe(204);
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe("restart", () => {
  test("queue and leases are rebuilt from SQLite at boot", async () => {
    const dir = tempDir();
    const clock = { now: T0 };
    const s1 = await startTestServer({}, { dir, clock: () => clock.now });
    const accountId = s1.accountId;
    const a = insertMessage(s1.running.deps, accountId, { priority: "high" });
    const b = insertMessage(s1.running.deps, accountId);
    const leased = (await next(s1, { leaseSeconds: 60 })).messages[0];
    expect(leased.id).toBe(a);
    await s1.stop();
    const s2 = await startTestServer({}, { dir, clock: () => clock.now });
    try {
      s2.adminKey = operatorKey(s2, accountId, "admin_access").apiKey;
      // Both are back in the queue: the free one is handed out at once, the leased one when its lease ends.
      expect((await next(s2, { limit: 10 })).messages.map((m: any) => m.id)).toEqual([b]);
      clock.now += 61_000;
      expect((await next(s2, { limit: 10 })).messages.map((m: any) => m.id)).toEqual([a]);
    } finally {
      await s2.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
