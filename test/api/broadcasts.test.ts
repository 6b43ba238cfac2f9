import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, nextPhone } from "../helpers/contact-fixtures";
import { BROADCAST_CHUNK } from "../../src/services/broadcasts";
import { broadcastQueued, newApiKey, queueLength } from "../helpers/reads";

// insertContact (SQL) arranges many contacts at once, with tags and fields; everything a
// broadcast did is read back through the API.

/** The list's total of a collection, as the API counts it. */
const total = async (s: TestServer, path: string, key = s.adminKey) => (await expectStatus(await s.api(path, { key }), 200)).data.pagination.total as number;

/**
 * Every message of a broadcast in the order they are due, as the messages list shows them: the
 * list from the broadcast's creation on; a short one is read message by message and kept when its
 * `metadata` names the broadcast, a long one (a big segment, while the test writes nothing else)
 * is taken whole (reading each would spend the key's per-minute limit).
 */
async function broadcastMessages(s: TestServer, id: string, key = s.adminKey): Promise<any[]> {
  const since = (await expectStatus(await s.api(`/broadcasts/${id}`, { key }), 200)).data.broadcast.createdAt;
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const d = (await expectStatus(await s.api(`/messages?limit=100&page=${page}&sortBy=scheduledFor&order=asc&createdAfter=${since}`, { key }), 200)).data;
    if (d.pagination.total > 20) out.push(...d.messages);
    else for (const m of d.messages) if ((await expectStatus(await s.api(`/messages/${m.id}`, { key }), 200)).data.message.metadata?.broadcastId === id) out.push(m);
    if (page * 100 >= d.pagination.total) return out;
  }
}

const queued = broadcastQueued;

describe("broadcasts", () => {
  let s: TestServer;
  let standardKey: string;
  const vip: string[] = [];
  beforeAll(async () => {
    s = await startTestServer();
    // 3 VIPs with names and a custom field, made as the owner makes them (in the order of their ids)…
    for (const json of [{ firstName: "Ann", lastName: "Lee", tags: ["vip"], customFields: { city: "Lyon" } }, { firstName: "Bob", tags: ["vip", "late"], status: "contacted" }, { tags: ["vip"] }]) {
      vip.push((await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: nextPhone(), ...json } }), 201)).data.contact.id);
    }
    vip.sort();
    // arrange: … then enough plain contacts for several chunks at once (hundreds of requests through the API)
    const db = s.running.deps.sqlite;
    for (let i = 0; i < BROADCAST_CHUNK * 2 + 17; i++) insertContact(db, s.accountId, { firstName: `P${i}` });
    standardKey = await newApiKey(s, "standard_access");
  });
  afterAll(() => s.stop());

  test("dry run counts the segment and renders 3 samples, queuing nothing", async () => {
    const before = await total(s, "/messages");
    const r = await expectStatus(
      await s.api("/broadcasts?dryRun=true", {
        method: "POST",
        json: { name: "Sale", content: "Hi {{firstName | there}} from {{customFields.city | our shop}}: 20% off today", segment: { tags: ["vip"] } },
      }),
      200,
    );
    expect(r.data.recipients).toBe(3);
    expect(r.data.suppressed).toBe(0);
    expect(r.data.samples).toHaveLength(3);
    expect(r.data.samples[0]).toMatchObject({ contactId: vip[0], encoding: "GSM-7", segments: 1 });
    expect(await total(s, "/messages")).toBe(before);
    expect(await total(s, "/broadcasts")).toBe(0);
  });

  test("a broadcast to a segment queues one rendered message per contact, answering 202 at once", async () => {
    const r = await expectStatus(
      await s.api("/broadcasts", { method: "POST", json: { name: "VIP night", content: "Hi {{fullName}}, VIP night on Friday", segment: { tags: ["vip"] }, priority: "high" } }),
      202,
    );
    expect(r.data).toMatchObject({ recipients: 3, suppressed: 0 });
    const id = r.data.broadcastId;
    const b = await queued(s, id);
    expect(b).toMatchObject({ id, name: "VIP night", status: "queued", recipients: 3, messages: { queued: 3, sent: 0, failed: 0, cancelled: 0, total: 3 } });
    const msgs = (await broadcastMessages(s, id)).sort((a, b) => (a.contactId < b.contactId ? -1 : 1));
    expect(msgs.map((m) => m.contactId)).toEqual(vip);
    expect(msgs[0].content).toBe("Hi Ann Lee, VIP night on Friday");
    expect(msgs[2].content).toBe("Hi , VIP night on Friday");
    expect(msgs.every((m) => m.priority === "high" && m.status === "queued")).toBe(true);
    // The in-memory queue takes them after the commit, once the queuing loop is done: a tool asking
    // for work is handed them (high priority, due now).
    await s.running.deps.broadcasts.idle(); // arrange: the queuing loop's end (no request says when it is done)
    const handed = (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 10 } }), 200)).data.messages.map((m: { id: string }) => m.id);
    expect(handed.sort()).toEqual(msgs.map((m) => m.id).sort());
    // Progress follows the messages.
    await expectStatus(await s.api(`/messages/${msgs[0].id}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString() } }), 200);
    const after = (await expectStatus(await s.api(`/broadcasts/${id}`), 200)).data.broadcast;
    expect(after.messages).toMatchObject({ queued: 2, sent: 1 });
    const list = (await expectStatus(await s.api("/broadcasts"), 200)).data;
    expect(list.broadcasts.map((x: any) => x.id)).toContain(id);
    expect(list.pagination).toMatchObject({ page: 1, total: 1 });
    // Clean up for the tests below.
    await expectStatus(await s.api(`/broadcasts/${id}/cancel`, { method: "POST" }), 200);
  });

  test("a large segment is queued in chunks, paced by sendRatePerMinute, and can be cancelled", async () => {
    const start = new Date(Date.now() + 3_600_000).toISOString();
    const r = await expectStatus(
      await s.api("/broadcasts", { method: "POST", json: { name: "Everyone", content: "Shop closed Monday", sendRatePerMinute: 100, scheduledFor: start } }),
      202,
    );
    const all = await total(s, "/contacts");
    expect(r.data.recipients).toBe(all);
    const id = r.data.broadcastId;
    expect((await queued(s, id)).messages.total).toBe(all);
    const msgs = await broadcastMessages(s, id);
    expect(msgs.length).toBe(all);
    const times: Array<{ t: string; n: number }> = [];
    for (const m of msgs) {
      if (times.at(-1)?.t === m.scheduledFor) times.at(-1)!.n++;
      else times.push({ t: m.scheduledFor, n: 1 });
    }
    expect(times[0]).toEqual({ t: start, n: 100 });
    expect(Date.parse(times[1].t) - Date.parse(start)).toBe(60_000);
    expect(times.length).toBe(Math.ceil(all / 100));
    const waiting = await queueLength(s, { contactId: msgs[0].contactId });
    const c = await expectStatus(await s.api(`/broadcasts/${id}/cancel`, { method: "POST" }), 200);
    expect(c.data.cancelled).toBe(all);
    expect(c.data.broadcast).toMatchObject({ status: "cancelled", messages: { queued: 0, cancelled: all } });
    expect((await broadcastMessages(s, id)).filter((m) => m.status !== "cancelled")).toEqual([]);
    // Its texts left the queue: as many fewer wait in line.
    expect(await queueLength(s, { contactId: msgs[0].contactId })).toBe(waiting - all);
    // Cancelling again changes nothing.
    expect((await expectStatus(await s.api(`/broadcasts/${id}/cancel`, { method: "POST" }), 200)).data.cancelled).toBe(0);
  });

  test("bad requests are 400s naming each field, and write nothing", async () => {
    const before = await total(s, "/broadcasts");
    const cases: Array<[unknown, string[]]> = [
      [{}, ["name", "content"]],
      [{ name: "x", content: "Hi {{secret}}" }, ["content"]],
      [{ name: "x", content: "Hi", segment: { status: "gone" } }, ["segment.status"]],
      [{ name: "x", content: "Hi", segment: { colour: "red" } }, ["segment.colour"]],
      [{ name: "x", content: "Hi", segment: "vip" }, ["segment"]],
      [{ name: "x", content: "Hi", priority: "asap", sendRatePerMinute: 0, maxAttempts: 99, scheduledFor: "tomorrow" }, ["priority", "scheduledFor", "sendRatePerMinute", "maxAttempts"]],
      [{ name: "x", content: "Hi", segment: { createdAfter: "yesterday" } }, ["segment.createdAfter"]],
    ];
    for (const [json, fields] of cases) {
      const b = await expectStatus(await s.api("/broadcasts", { method: "POST", json }), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.errors.map((e: any) => e.field).sort()).toEqual([...fields].sort());
    }
    await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "x", content: "Hi", segment: { formId: crypto.randomUUID() } } }), 404);
    expect(await total(s, "/broadcasts")).toBe(before);
  });

  test("unknown ids are 404 BROADCAST_NOT_FOUND; a standard key can read but not create or cancel", async () => {
    expect((await expectStatus(await s.api(`/broadcasts/${crypto.randomUUID()}`), 404)).code).toBe("BROADCAST_NOT_FOUND");
    expect((await expectStatus(await s.api("/broadcasts/nope"), 404)).code).toBe("BROADCAST_NOT_FOUND");
    expect((await expectStatus(await s.api(`/broadcasts/${crypto.randomUUID()}/cancel`, { method: "POST" }), 404)).code).toBe("BROADCAST_NOT_FOUND");
    await expectStatus(await s.api("/broadcasts", { key: standardKey }), 200);
    expect((await expectStatus(await s.api("/broadcasts", { method: "POST", key: standardKey, json: { name: "x", content: "Hi" } }), 403)).code).toBe("PERMISSION_ERROR");
  });
});

describe("broadcasts keep quiet hours and the per-recipient limit", () => {
  // 22:30 in New York (EST, UTC-5): inside quiet hours 21:00-08:00.
  const T0 = Date.parse("2026-11-21T03:30:00.000Z");
  let s: TestServer;
  const clock = { now: T0 };
  beforeAll(async () => {
    s = await startTestServer({}, { clock: () => clock.now });
  });
  afterAll(() => s.stop());

  test("texts due inside the quiet hours are scheduled for their end, in the broadcast's zone", async () => {
    for (let i = 0; i < 3; i++) await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: nextPhone(), tags: ["night"] } }), 201);
    const r = await expectStatus(
      await s.api("/broadcasts", {
        method: "POST",
        json: { name: "Night", content: "Hello", segment: { tags: ["night"] }, quietHours: { start: "21:00", end: "08:00" }, timezone: "America/New_York" },
      }),
      202,
    );
    expect(r.data.broadcast).toMatchObject({ quietHours: { start: "21:00", end: "08:00" }, timezone: "America/New_York" });
    await queued(s, r.data.broadcastId);
    const due = [...new Set((await broadcastMessages(s, r.data.broadcastId)).map((m) => m.scheduledFor))];
    expect(due).toEqual(["2026-11-21T13:00:00.000Z"]); // 08:00 EST
    await expectStatus(await s.api(`/broadcasts/${r.data.broadcastId}/cancel`, { method: "POST" }), 200);
  });

  test("a broadcast to a form's contacts takes the form's quiet hours; bad values are 400s", async () => {
    const form = await expectStatus(
      await s.api("/forms", {
        method: "POST",
        json: { name: "Quiet form", messageTemplate: "Hi", fields: [{ name: "firstName", type: "text" }], settings: { timezone: "America/New_York", quietHours: { start: "22:00", end: "07:30" } } },
      }),
      201,
    );
    const formId = form.data.form.id;
    insertContact(s.running.deps.sqlite, s.accountId, { formId }); // arrange: a contact of the form without a submission (its webhook would queue a text)
    const dry = await expectStatus(await s.api("/broadcasts?dryRun=true", { method: "POST", json: { name: "F", content: "Hi", segment: { formId } } }), 200);
    expect(dry.data.recipients).toBe(1);
    const r = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "F", content: "Hi", segment: { formId } } }), 202);
    expect(r.data.broadcast).toMatchObject({ quietHours: { start: "22:00", end: "07:30" }, timezone: "America/New_York" });
    await queued(s, r.data.broadcastId);
    expect((await broadcastMessages(s, r.data.broadcastId)).map((m) => m.scheduledFor)).toEqual(["2026-11-21T12:30:00.000Z"]);
    await expectStatus(await s.api(`/broadcasts/${r.data.broadcastId}/cancel`, { method: "POST" }), 200);
    for (const json of [{ quietHours: { start: "9pm", end: "08:00" } }, { timezone: "Mars/Olympus" }, { recipientLimitPerDay: 0 }]) {
      const b = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "x", content: "Hi", ...json } }), 400);
      expect(b.errors.map((e: any) => e.field)).toEqual(Object.keys(json));
    }
  });

  test("contacts at the per-recipient limit are suppressed, counted in the dry run and skipped", async () => {
    const busy = (await expectStatus(await s.api("/contacts", { method: "POST", json: { tags: ["limit"], phoneNumber: "+12015559901" } }), 201)).data.contact.id;
    await expectStatus(await s.api("/contacts", { method: "POST", json: { tags: ["limit"], phoneNumber: "+12015559902" } }), 201);
    // The first number already had two texts today.
    for (let i = 0; i < 2; i++) {
      await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: busy, content: `earlier ${i}` } }), 201);
    }
    const dry = await expectStatus(await s.api("/broadcasts?dryRun=true", { method: "POST", json: { name: "L", content: "Hi", segment: { tags: ["limit"] }, recipientLimitPerDay: 2 } }), 200);
    expect(dry.data).toMatchObject({ recipients: 1, suppressed: 1 });
    expect(dry.data.samples.map((x: any) => x.phoneNumber)).toEqual(["+12015559902"]);
    const r = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "L", content: "Hi", segment: { tags: ["limit"] }, recipientLimitPerDay: 2 } }), 202);
    expect(r.data).toMatchObject({ recipients: 1, suppressed: 1 });
    await queued(s, r.data.broadcastId);
    expect((await broadcastMessages(s, r.data.broadcastId)).map((m) => m.recipientPhone)).toEqual(["+12015559902"]);
    expect((await expectStatus(await s.api(`/broadcasts/${r.data.broadcastId}`), 200)).data.broadcast.skipped).toBe(1);
  });
});

describe("broadcasts across a restart", () => {
  test("a broadcast interrupted mid-queuing carries on after a restart, every recipient exactly once", async () => {
    const s1 = await startTestServer();
    const { dir, dbPath } = s1;
    // arrange: three chunks of contacts at once (hundreds of requests through the API)
    const db = s1.running.deps.sqlite;
    for (let i = 0; i < BROADCAST_CHUNK * 3; i++) insertContact(db, s1.accountId, {});
    const r = await expectStatus(await s1.api("/broadcasts", { method: "POST", json: { name: "Restart", content: "Hello" } }), 202);
    // arrange: the queuing loop stopped after its first chunk, as a crash would (no API stops it half-way)
    s1.running.deps.broadcasts.stop();
    await s1.running.deps.broadcasts.idle();
    const partial = (await broadcastMessages(s1, r.data.broadcastId)).length;
    expect(partial).toBeLessThan(BROADCAST_CHUNK * 3);
    await s1.running.stop();
    const s2 = await startTestServer({ db: dbPath }, { dir });
    await queued(s2, r.data.broadcastId, s1.adminKey);
    const texts = await broadcastMessages(s2, r.data.broadcastId, s1.adminKey);
    expect(texts.length).toBe(BROADCAST_CHUNK * 3);
    expect(new Set(texts.map((m) => m.contactId)).size).toBe(BROADCAST_CHUNK * 3);
    const b = (await expectStatus(await s2.api(`/broadcasts/${r.data.broadcastId}`, { key: s1.adminKey }), 200)).data.broadcast;
    expect(b.status).toBe("queued");
    await s2.stop();
  });
});
