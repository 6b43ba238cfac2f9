import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact } from "../helpers/contact-fixtures";
import { broadcastQueued, listTotal } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

/**
 * The confirmation before a broadcast is sent (docs/api-decisions.md, "Confirmed broadcasts"):
 * the dry run's figures — who is skipped and why, texts, quiet hours, the time to send with the
 * phones connected — are the ones queuing applies; a broadcast for later is "scheduled" until it
 * starts and Cancel stops all of it.
 */
// insertContact, optOut and insertPhone (SQL) arrange segments of many contacts, opt-outs with no
// history and a phone seen a moment ago, which the API makes only one request (or one phone) at a
// time; what a dry run or a broadcast wrote is read back through the API.
/** Messages and broadcasts of both accounts, as the API counts them: a dry run changes none. */
const written = async (s: TestServer, otherKey: string) => ({
  messages: (await listTotal(s, "/messages")) + (await listTotal(s, "/messages", otherKey)),
  broadcasts: (await listTotal(s, "/broadcasts")) + (await listTotal(s, "/broadcasts", otherKey)),
});
// arrange: an opt-out with no consent history (the API's opt-out records one)
const optOut = (db: Database, id: string) => db.query("UPDATE contacts SET opted_out = 1 WHERE id = ?").run(id);
const preview = async (s: TestServer, json: unknown, key?: string) =>
  (await expectStatus(await s.api("/broadcasts?dryRun=true", { method: "POST", json, key }), 200)).data;

function insertPhone(db: Database, accountId: string, sendRatePerMinute: number | null, lastSeenAt: string | null): void {
  const at = new Date().toISOString();
  // arrange: a phone with its own rate, last seen at a set time (a registration takes the app's handshake)
  db.query(
    `INSERT INTO devices (id, account_id, kind, name, send_rate_per_minute, last_seen_at, created_at, updated_at)
     VALUES (?1, ?2, 'smsgate', 'Shop phone', ?3, ?4, ?5, ?5)`,
  ).run(crypto.randomUUID(), accountId, sendRatePerMinute, lastSeenAt, at);
}

describe("the dry run names who is skipped and why", () => {
  let s: TestServer;
  let acct: { id: string; key: string };
  beforeAll(async () => {
    s = await startTestServer();
    // An account of its own with a monthly quota of 5, 2 of it used this month.
    const created = newAccount(s, { name: "Shop", monthlyQuota: 5 });
    acct = { id: created.account.id, key: created.apiKey };
    const db = s.running.deps.sqlite; // arrange: the connection the segment, opt-outs and phones above are written through
    const busy = insertContact(db, acct.id, { tags: ["sale"], phoneNumber: "+12015557001" });
    for (let i = 0; i < 2; i++) {
      await expectStatus(await s.api("/messages", { method: "POST", key: acct.key, json: { contactId: busy, content: `earlier ${i}` } }), 201);
    }
    for (const phone of ["+12015557002", "+12015557003"]) optOut(db, insertContact(db, acct.id, { tags: ["sale"], phoneNumber: phone }));
    for (let i = 0; i < 6; i++) insertContact(db, acct.id, { tags: ["sale"], firstName: `C${i}` });
    // Opted out and over the limit at once: counted once, as opted out.
    const both = insertContact(db, acct.id, { tags: ["sale"], phoneNumber: "+12015557004" });
    await expectStatus(await s.api("/messages", { method: "POST", key: acct.key, json: { contactId: both, content: "earlier" } }), 201);
    optOut(db, both);
  });
  afterAll(() => s.stop());

  test("opted out, the per-recipient limit and the monthly quota are counted apart; the count to send is what queuing will send", async () => {
    const before = await written(s, acct.key);
    const p = await preview(s, { name: "Sale", content: "Sale today", segment: { tags: ["sale"] }, recipientLimitPerDay: 1 }, acct.key);
    // 10 contacts: 3 opted out, 1 at the limit, 6 recipients; 5 - 3 used = 2 left of the quota.
    expect(p).toMatchObject({ recipients: 6, suppressed: 4, sending: 2, skipped: { optedOut: 3, recipientLimit: 1, monthlyQuota: 4 } });
    expect(await written(s, acct.key)).toEqual(before);
    expect(before.broadcasts).toBe(0);
    // Without the limit the busy contact is a recipient again.
    const q = await preview(s, { name: "Sale", content: "Sale today", segment: { tags: ["sale"] }, recipientLimitPerDay: null }, acct.key);
    expect(q).toMatchObject({ recipients: 7, suppressed: 3, sending: 2, skipped: { optedOut: 3, recipientLimit: 0, monthlyQuota: 5 } });
    // Sending queues exactly `sending` texts and skips the rest.
    const r = await expectStatus(await s.api("/broadcasts", { method: "POST", key: acct.key, json: { name: "Sale", content: "Sale today", segment: { tags: ["sale"] }, recipientLimitPerDay: 1 } }), 202);
    const b = await broadcastQueued(s, r.data.broadcastId, acct.key);
    // The broadcast's `skipped` counts both: the 4 left out and the 4 past the quota.
    expect(b).toMatchObject({ recipients: 6, suppressed: 4, skipped: 8, messages: { total: 2 } });
  });

  test("another account's contacts, opt-outs and phones never count; its form is not found", async () => {
    const db = s.running.deps.sqlite; // arrange: the connection the segment, opt-outs and phones above are written through
    insertContact(db, s.accountId, { tags: ["sale"] });
    optOut(db, insertContact(db, s.accountId, { tags: ["sale"] }));
    insertPhone(db, s.accountId, 30, new Date().toISOString());
    const mine = await preview(s, { name: "Sale", content: "Sale today", segment: { tags: ["sale"] } });
    expect(mine).toMatchObject({ recipients: 1, suppressed: 1, sending: 1, skipped: { optedOut: 1, recipientLimit: 0, monthlyQuota: 0 } });
    expect(mine.estimate).toMatchObject({ phonesConnected: 1, phones: 1 });
    // The shop's figures do not move, and it has no phone of its own.
    const theirs = await preview(s, { name: "Sale", content: "Sale today", segment: { tags: ["sale"] }, recipientLimitPerDay: null }, acct.key);
    expect(theirs).toMatchObject({ recipients: 7, suppressed: 3, skipped: { optedOut: 3 } });
    expect(theirs.estimate).toMatchObject({ phonesConnected: 0, phones: 0, basis: "no-phone-connected" });
    const form = await expectStatus(await s.api("/forms", { method: "POST", json: { name: "Mine", messageTemplate: "Hi", fields: [{ name: "firstName", type: "text" }] } }), 201);
    const refused = await expectStatus(
      await s.api("/broadcasts?dryRun=true", { method: "POST", key: acct.key, json: { name: "x", content: "Hi", segment: { formId: form.data.form.id } } }),
      404,
    );
    expect(refused.code).toBe("FORM_NOT_FOUND");
  });

  test("bad input is a 400 naming each field, and a dry run of it writes nothing", async () => {
    const before = await written(s, acct.key);
    const cases: Array<[unknown, string[]]> = [
      [{ name: "x", content: "Hi", scheduledFor: "next friday", sendRatePerMinute: -1 }, ["scheduledFor", "sendRatePerMinute"]],
      [{ name: "x", content: "Hi", recipientLimitPerDay: "two", quietHours: { start: "22:00", end: "22:00" } }, ["recipientLimitPerDay", "quietHours"]],
      [{ name: "x", content: "Hi {{password}}" }, ["content"]],
    ];
    for (const [json, fields] of cases) {
      const b = await expectStatus(await s.api("/broadcasts?dryRun=true", { method: "POST", key: acct.key, json }), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.errors.map((e: any) => e.field).sort()).toEqual([...fields].sort());
    }
    expect((await expectStatus(await s.api("/broadcasts?dryRun=maybe", { method: "POST", key: acct.key, json: { name: "x", content: "Hi" } }), 400)).code).toBe("VALIDATION_ERROR");
    expect(await written(s, acct.key)).toEqual(before);
  });
});

describe("texts, quiet hours and the time to send", () => {
  // 20:00 in New York (EST, UTC-5), an hour before quiet hours 21:00-08:00.
  const T0 = Date.parse("2026-11-21T01:00:00.000Z");
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => clock.now });
    const db = s.running.deps.sqlite; // arrange: the connection the segment, opt-outs and phones above are written through
    insertContact(db, s.accountId, { tags: ["t"], firstName: "Al" });
    insertContact(db, s.accountId, { tags: ["t"], firstName: "B".repeat(150) });
    for (let i = 0; i < 98; i++) insertContact(db, s.accountId, { tags: ["t"], firstName: `N${i}` });
  });
  afterAll(() => s.stop());

  test("texts per message and in all follow each recipient's filled-in text", async () => {
    const p = await preview(s, { name: "x", content: "Hi {{firstName}}, see you soon", segment: { tags: ["t"] } });
    expect(p.segments).toEqual({ min: 1, max: 2, total: 101 });
    const same = await preview(s, { name: "x", content: "Café ☕ open late", segment: { tags: ["t"] } });
    expect(same.segments).toEqual({ min: 1, max: 1, total: 100 });
  });

  test("no phone connected: the texts wait until one is", async () => {
    const p = await preview(s, { name: "x", content: "Hi", segment: { tags: ["t"] } });
    // As if the phones were connected (the test's budget never binds: no time at all), and it says so.
    expect(p.estimate).toMatchObject({ phonesConnected: 0, phones: 0, basis: "no-phone-connected", startsAt: new Date(T0).toISOString(), finishesAt: new Date(T0).toISOString(), minutes: 0 });
    expect(p.scheduledFor).toBeNull();
    expect(p.accountTimeZone).toBe("UTC");
  });

  test("the phones' rates, capped by the account's, give the time to send; quiet hours delay what falls inside them", async () => {
    const db = s.running.deps.sqlite; // arrange: the connection the segment, opt-outs and phones above are written through
    // Two connected phones (10 and 15 a minute) and one silent for a day: 25 a minute.
    insertPhone(db, s.accountId, 10, new Date(T0).toISOString());
    insertPhone(db, s.accountId, 15, new Date(T0).toISOString());
    insertPhone(db, s.accountId, 40, new Date(T0 - 86_400_000).toISOString());
    await expectStatus(await s.api("/account/profile", { method: "PUT", json: { name: "Shop", country: "US", timeZone: "America/New_York" } }), 200);
    const p = await preview(s, { name: "x", content: "Hi", segment: { tags: ["t"] } });
    // Two connected (the third silent for a day); the times come from their budgets (src/services/sending-estimate.ts).
    expect(p.estimate).toMatchObject({ phonesConnected: 2, phones: 3, basis: "connected-phones", startsAt: new Date(T0).toISOString() });
    expect(p.quietHours).toEqual({ hours: null, timezone: "UTC", delayed: 0 });
    expect(p.accountTimeZone).toBe("America/New_York");
    // One a minute from 20:00: the first 60 go before 21:00, the other 40 wait for 08:00.
    const paced = await preview(s, {
      name: "x",
      content: "Hi",
      segment: { tags: ["t"] },
      sendRatePerMinute: 1,
      quietHours: { start: "21:00", end: "08:00" },
      timezone: "America/New_York",
    });
    expect(paced.quietHours).toEqual({ hours: { start: "21:00", end: "08:00" }, timezone: "America/New_York", delayed: 40 });
    // 40 wait for 08:00 EST (13:00 UTC); the phones' (here unbounded) budgets send them at once.
    expect(paced.estimate.finishesAt).toStartWith("2026-11-21T13:0");
    insertPhone(db, s.accountId, 500, new Date(T0).toISOString());
    expect((await preview(s, { name: "x", content: "Hi", segment: { tags: ["t"] } })).estimate).toMatchObject({ phonesConnected: 3 });
  });

  test("a start later is shown back; the broadcast is 'scheduled' until then and Cancel stops every text", async () => {
    const later = "2026-11-21T14:00:00.000Z";
    const p = await preview(s, { name: "x", content: "Hi", segment: { tags: ["t"] }, scheduledFor: later });
    expect(p.scheduledFor).toBe(later);
    expect(p.estimate.startsAt).toBe(later);
    const past = await preview(s, { name: "x", content: "Hi", segment: { tags: ["t"] }, scheduledFor: "2020-01-01T00:00:00.000Z" });
    expect(past.scheduledFor).toBeNull();
    const r = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "Morning", content: "Hi", segment: { tags: ["t"] }, scheduledFor: later } }), 202);
    await broadcastQueued(s, r.data.broadcastId);
    const id = r.data.broadcastId;
    const listed = (await expectStatus(await s.api("/broadcasts"), 200)).data.broadcasts.find((b: any) => b.id === id);
    expect(listed).toMatchObject({ status: "scheduled", scheduledFor: later, messages: { queued: 100 } });
    const c = await expectStatus(await s.api(`/broadcasts/${id}/cancel`, { method: "POST" }), 200);
    expect(c.data).toMatchObject({ cancelled: 100, broadcast: { status: "cancelled", messages: { queued: 0, cancelled: 100 } } });
    // Once the start has passed it is sending ("queued") again.
    const r2 = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "Soon", content: "Hi", segment: { tags: ["t"] }, scheduledFor: later } }), 202);
    await broadcastQueued(s, r2.data.broadcastId);
    clock.now = Date.parse(later) + 1;
    // A broadcast scheduled for later reads "scheduled" while its texts are still being written,
    // so once its start has passed it may read "queuing" for a moment: wait for the queuing to end.
    expect((await broadcastQueued(s, r2.data.broadcastId)).status).toBe("queued");
    await expectStatus(await s.api(`/broadcasts/${r2.data.broadcastId}/cancel`, { method: "POST" }), 200);
  });
});
