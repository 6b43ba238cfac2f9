import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { eventSink, type EventSink } from "../helpers/event-sink";
import { setupLink } from "../helpers/scenario";
import { messageOf, newApiKey } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

/**
 * Contact care through the API (docs/api-decisions.md, "Contact care"): who added a contact,
 * opting out and back in by hand with a reason, the consent history, and bulk tag / opt out /
 * delete on a selection.
 */
const T0 = Date.parse("2026-11-26T09:00:00.000Z");
const clock = { now: T0 };
const OWNER = { name: "Olga Owner", email: "olga@shop.example", password: "blue-bicycle-42" };

let s: TestServer;
let standardKey: string;
let otherAdmin: string;
let formId: string;
let owner: { cookie: string; csrf: string; userId: string };

beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true }, { clock: () => clock.now });
  standardKey = await newApiKey(s, "standard_access");
  otherAdmin = newAccount(s, { name: "Other" }).apiKey;
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
  // The owner's receiver: what the requests announced is read as it gets them.
  sink = await eventSink(s);
  const link = setupLink(s)!;
  const res = await fetch(`${s.base}/setup`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: link.token, businessName: "Rosa's Bakery", country: "us", timeZone: "UTC", ...OWNER }),
  });
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const body = await expectStatus(res, 201);
  owner = { cookie, csrf: body.data.csrfToken, userId: body.data.user.id };
});
afterAll(async () => {
  await s.stop();
  sink.stop();
});

/** A request as the dashboard makes it: the signed-in owner's cookie and CSRF token. */
const asOwner = (path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${s.base}${path}`, {
    method: init.method ?? "GET",
    headers: { Cookie: owner.cookie, "X-CSRF-Token": owner.csrf, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
const post = (path: string, json?: unknown, key?: string) => s.api(path, { method: "POST", ...(json !== undefined ? { json } : {}), ...(key ? { key } : {}) });
let sink: EventSink;
let seq = 2000;
const newPhone = () => `+1415555${seq++}`;
const create = async (json: Record<string, unknown> = {}) => (await expectStatus(await post("/contacts", { phoneNumber: newPhone(), ...json }), 201)).data.contact;
/** The contact the API finds by this number. */
const contactIdOf = async (phone: string) => (await expectStatus(await s.api(`/contacts?search=${encodeURIComponent(phone.slice(2))}`), 200)).data.contacts[0].id as string;
/** The messages of a contact as the API shows them (status, failureReason), oldest first. */
const messagesOf = async (contactId: string, status?: string) => {
  const list = (await expectStatus(await s.api(`/messages?contactId=${contactId}&order=asc${status ? `&status=${status}` : ""}`), 200)).data.messages as Array<{ id: string }>;
  return Promise.all(list.map(async (m) => (await messageOf(s, m.id))!));
};
/** The contact's events, as the owner's receiver got them, in the order they were made. */
const contactEvents = async (contactId: string) =>
  (await sink.events()).filter((e) => e.type.startsWith("contact.") && e.data.contact?.id === contactId).map((e) => e.type);
const history = async (id: string, key?: string) => (await expectStatus(await s.api(`/contacts/${id}/consent-history`, key ? { key } : {}), 200)).data;
const submit = (phone: string) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone, firstName: "Ann" }) });

describe("adding a contact by hand records who added it", () => {
  test("the signed-in person: consent {source: manual, by: the person}", async () => {
    const res = await asOwner("/contacts", { method: "POST", json: { phoneNumber: "(415) 555-0190", firstName: "Mia", email: "mia@example.com", tags: ["vip"], notes: "walk-in", customFields: { dog: "Rex" }, consent: { source: "manual" } } });
    const c = (await expectStatus(res, 201)).data.contact;
    expect(c).toMatchObject({ phoneNumber: "+14155550190", firstName: "Mia", email: "mia@example.com", tags: ["vip"], notes: "walk-in", customFields: { dog: "Rex" } });
    expect(c.consent).toEqual({ source: "manual", at: new Date(clock.now).toISOString(), ipAddress: "127.0.0.1", by: { type: "user", id: owner.userId, name: OWNER.name } });
  });

  test("an API key: consent.by names the key", async () => {
    const c = await create({ consent: { source: "manual" } });
    expect(c.consent.by.type).toBe("key");
    expect(typeof c.consent.by.id).toBe("string");
  });
});

describe("a duplicate number names the contact that has it", () => {
  test("PUT with another contact's number: 409 with details.existingContactId; nothing changes", async () => {
    const a = await create({ firstName: "A" });
    const b = await create({ firstName: "B" });
    const r = await expectStatus(await s.api(`/contacts/${b.id}`, { method: "PUT", json: { phoneNumber: a.phoneNumber, firstName: "Bee" } }), 409);
    expect(r.code).toBe("DUPLICATE_PHONE_NUMBER");
    expect(r.details.existingContactId).toBe(a.id);
    expect((await expectStatus(await s.api(`/contacts/${b.id}`), 200)).data.contact).toMatchObject({ phoneNumber: b.phoneNumber, firstName: "B" });
  });
});

describe("POST /v1/contacts/<id>/opt-out and /opt-in", () => {
  test("opting out by hand: as a STOP (queued texts cancelled, contact.opted_out), no text sent, reason/who/when recorded; the webhook then queues nothing", async () => {
    const phone = newPhone();
    await expectStatus(await submit(phone), 200);
    const id = await contactIdOf(phone);
    const queued = (await messagesOf(id, "queued")).map((m) => m.id);
    expect(queued).toHaveLength(1);
    clock.now = T0 + 60_000;
    const before = (await contactEvents(id)).length;
    const r = await expectStatus(await asOwner(`/contacts/${id}/opt-out`, { method: "POST", json: { reason: "Phoned the shop: please stop texting" } }), 200);
    expect(r.data.changed).toBe(true);
    expect(r.data.contact).toMatchObject({ id, optedOut: true, optedOutAt: new Date(T0 + 60_000).toISOString() });
    // The same as a STOP: queued texts cancelled as opted out, the specific event, and no confirmation text.
    expect((await messagesOf(id)).map((m) => ({ status: m.status, failureReason: m.failureReason }))).toEqual([{ status: "cancelled", failureReason: "opted-out" }]);
    expect((await contactEvents(id)).slice(before)).toEqual(["contact.opted_out"]);
    expect((await sink.events()).filter((e) => e.type === "message.cancelled" && e.data.message?.id === queued[0])).toHaveLength(1);
    const h = await history(id);
    expect(h).toEqual({
      entries: [{ action: "opted_out", source: "manual", reason: "Phoned the shop: please stop texting", by: { type: "user", id: owner.userId, name: OWNER.name }, at: new Date(T0 + 60_000).toISOString() }],
      total: 1,
    });
    // A website form post to that number afterwards queues nothing.
    const w = await expectStatus(await submit(phone), 200);
    expect(w.data.messageId ?? null).toBeNull();
    expect(await messagesOf(id, "queued")).toEqual([]);
  });

  test("no reason is needed to opt out; a second opt-out changes and records nothing", async () => {
    const c = await create();
    const r = await expectStatus(await post(`/contacts/${c.id}/opt-out`, {}), 200);
    expect(r.data).toMatchObject({ changed: true, contact: { optedOut: true } });
    const again = await expectStatus(await post(`/contacts/${c.id}/opt-out`, { reason: "again" }), 200);
    expect(again.data.changed).toBe(false);
    const h = await history(c.id);
    expect(h.total).toBe(1);
    expect(h.entries[0]).toMatchObject({ action: "opted_out", source: "manual", reason: null, by: { type: "key" } });
    expect(await contactEvents(c.id)).toEqual(["contact.created", "contact.opted_out"]);
  });

  test("opting back in needs a reason; with one: opted in, contact.opted_in, recorded", async () => {
    const c = await create();
    await expectStatus(await post(`/contacts/${c.id}/opt-out`, { reason: "asked" }), 200);
    for (const body of [{}, { reason: "" }, { reason: "   " }, { reason: null }]) {
      const r = await expectStatus(await post(`/contacts/${c.id}/opt-in`, body), 400);
      expect(r.code).toBe("VALIDATION_ERROR");
      expect(r.errors.map((e: any) => e.field)).toEqual(["reason"]);
      expect(r.message).toStartWith("Say why this person may be texted again");
    }
    // No body at all: refused as such.
    expect((await expectStatus(await post(`/contacts/${c.id}/opt-in`), 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact.optedOut).toBe(true);
    clock.now = T0 + 120_000;
    const r = await expectStatus(await asOwner(`/contacts/${c.id}/opt-in`, { method: "POST", json: { reason: "  Asked in the shop to get reminders again " } }), 200);
    expect(r.data).toMatchObject({ changed: true, contact: { optedOut: false, optedOutAt: null } });
    const h = await history(c.id);
    expect(h.total).toBe(2);
    expect(h.entries[0]).toEqual({ action: "opted_in", source: "manual", reason: "Asked in the shop to get reminders again", by: { type: "user", id: owner.userId, name: OWNER.name }, at: new Date(T0 + 120_000).toISOString() });
    expect(await contactEvents(c.id)).toEqual(["contact.created", "contact.opted_out", "contact.opted_in"]);
    // Not opted out: opting in again changes nothing (the reason is still required).
    expect((await expectStatus(await post(`/contacts/${c.id}/opt-in`, { reason: "again" }), 200)).data.changed).toBe(false);
    expect((await history(c.id)).total).toBe(2);
  });

  test("bad input is refused by name and changes nothing", async () => {
    const c = await create();
    const cases: Array<[unknown, string | null]> = [
      [{ reason: 42 }, "reason"],
      [{ reason: "x".repeat(501) }, "reason"],
      [{ reason: "ok", optedOut: false }, "optedOut"],
      [["reason"], null],
      ["stop", null],
    ];
    for (const [body, field] of cases) {
      const r = await expectStatus(await post(`/contacts/${c.id}/opt-out`, body), 400);
      expect(r.code).toBe("VALIDATION_ERROR");
      if (field) expect(r.errors.map((e: any) => e.field)).toContain(field);
    }
    const broken = await s.api(`/contacts/${c.id}/opt-out`, { method: "POST", body: "{not json", headers: { "Content-Type": "application/json" } });
    expect((await expectStatus(broken, 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await post(`/contacts/${c.id}/opt-out`), 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact.optedOut).toBe(false);
    expect((await history(c.id)).total).toBe(0);
    // Unknown and malformed ids: 404.
    for (const id of ["0190c0de-0000-7000-8000-000000000000", "not-an-id"]) {
      expect((await expectStatus(await post(`/contacts/${id}/opt-out`, { reason: "x" }), 404)).code).toBe("CONTACT_NOT_FOUND");
      expect((await expectStatus(await s.api(`/contacts/${id}/consent-history`), 404)).code).toBe("CONTACT_NOT_FOUND");
    }
    expect((await expectStatus(await s.api(`/contacts/${c.id}/consent-history?limit=0`), 400)).code).toBe("VALIDATION_ERROR");
  });

  test("another account's contact: 404 exactly like a missing one; unchanged, its history unread", async () => {
    const c = await create();
    await expectStatus(await post(`/contacts/${c.id}/opt-out`, { reason: "mine" }), 200);
    expect((await expectStatus(await post(`/contacts/${c.id}/opt-in`, { reason: "theirs" }, otherAdmin), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await post(`/contacts/${c.id}/opt-out`, { reason: "theirs" }, otherAdmin), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await s.api(`/contacts/${c.id}/consent-history`, { key: otherAdmin }), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact.optedOut).toBe(true);
    expect((await history(c.id)).total).toBe(1);
  });

  test("staff (standard key) may opt out and in; a STOP and START text are recorded as keyword with nobody named", async () => {
    const c = await create();
    await expectStatus(await post(`/contacts/${c.id}/opt-out`, { reason: "staff" }, standardKey), 200);
    await expectStatus(await post(`/contacts/${c.id}/opt-in`, { reason: "staff again" }, standardKey), 200);
    const inbound = (body: string) =>
      fetch(`${s.base}/messages/${s.adminKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from: c.phoneNumber, body, receivedAt: clock.now }) });
    clock.now = T0 + 180_000;
    await expectStatus(await inbound("STOP"), 201);
    await expectStatus(await inbound("START"), 201);
    const h = await history(c.id);
    expect(h.entries.map((e: any) => [e.action, e.source, e.by?.type ?? null])).toEqual([
      ["opted_in", "keyword", null],
      ["opted_out", "keyword", null],
      ["opted_in", "manual", "key"],
      ["opted_out", "manual", "key"],
    ]);
    // Paging
    const p2 = (await expectStatus(await s.api(`/contacts/${c.id}/consent-history?limit=3&page=2`), 200)).data;
    expect(p2.total).toBe(4);
    expect(p2.entries.map((e: any) => e.reason)).toEqual(["staff"]);
  });

  test("an import row's optedOut is recorded as source import", async () => {
    const phone = newPhone();
    const c = await create({ phoneNumber: phone });
    const res = await s.api("/contacts/import", { method: "POST", body: `phoneNumber,optedOut\n${phone},true\n`, headers: { "Content-Type": "text/csv" } });
    expect((await expectStatus(res, 200)).data.updated).toBe(1);
    expect((await history(c.id)).entries).toEqual([expect.objectContaining({ action: "opted_out", source: "import", reason: null, by: null })]);
  });

  test("an opt-out through PUT optedOut is recorded too (source api); deleting the contact deletes its history", async () => {
    const c = await create();
    await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: true } }), 200);
    expect((await history(c.id)).entries[0]).toMatchObject({ action: "opted_out", source: "api", reason: null, by: { type: "key" } });
    await expectStatus(await s.api(`/contacts/${c.id}`, { method: "DELETE" }), 200);
    expect((await expectStatus(await s.api(`/contacts/${c.id}/consent-history`), 404)).code).toBe("CONTACT_NOT_FOUND");
  });
});

describe("bulk actions on a selection", () => {
  test("addTags adds to each contact's tags (tags still replaces); bad bodies refused", async () => {
    const a = await create({ tags: ["vip"] });
    const b = await create({ tags: [] });
    const r = await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [a.id, b.id], updates: { addTags: ["spring", "vip"], status: "contacted" } } }), 200);
    expect(r.data).toEqual({ updated: 2, errors: [] });
    const tagsOf = async (id: string) => (await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact;
    expect(await tagsOf(a.id)).toMatchObject({ tags: ["vip", "spring"], status: "contacted" });
    expect(await tagsOf(b.id)).toMatchObject({ tags: ["spring", "vip"], status: "contacted" });
    for (const updates of [{ addTags: [] }, { addTags: "x" }, { addTags: ["a,b"] }, { addTags: ["x"], tags: ["y"] }]) {
      const bad = await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [a.id], updates } }), 400);
      expect(bad.errors[0].field).toStartWith("updates.addTags");
    }
    expect((await tagsOf(a.id)).tags).toEqual(["vip", "spring"]);
  });

  test("bulk opt-out: each opted out with the reason recorded; unknown and other accounts' ids listed as errors, untouched", async () => {
    const a = await create();
    const b = await create();
    const theirs = (await expectStatus(await post("/contacts", { phoneNumber: newPhone() }, otherAdmin), 201)).data.contact;
    const r = await expectStatus(await asOwner("/contacts/bulk/opt-out", { method: "POST", json: { contactIds: [a.id, b.id, theirs.id, "nope"], reason: "Closed the account" } }), 200);
    expect(r.data.optedOut).toBe(2);
    expect(r.data.errors.map((e: any) => [e.id, e.code])).toEqual([
      [theirs.id, "CONTACT_NOT_FOUND"],
      ["nope", "CONTACT_NOT_FOUND"],
    ]);
    for (const c of [a, b]) expect((await history(c.id)).entries[0]).toMatchObject({ action: "opted_out", source: "manual", reason: "Closed the account", by: { type: "user" } });
    expect((await expectStatus(await s.api(`/contacts/${theirs.id}`, { key: otherAdmin }), 200)).data.contact.optedOut).toBe(false);
    for (const body of [{ contactIds: [] }, { contactIds: [a.id], reason: 5 }, { contactIds: [a.id], status: "new" }, { reason: "x" }]) {
      expect((await expectStatus(await post("/contacts/bulk/opt-out", body), 400)).code).toBe("VALIDATION_ERROR");
    }
  });

  test("bulk delete: the contacts, their messages and conversations go; queued texts leave the queue; admin only; others' untouched", async () => {
    const a = await create();
    const b = await create();
    const m = await expectStatus(await post("/messages", { contactId: a.id, content: "Your order is ready" }), 201);
    await fetch(`${s.base}/messages/${s.adminKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from: b.phoneNumber, body: "thanks", receivedAt: clock.now }) });
    const theirs = (await expectStatus(await post("/contacts", { phoneNumber: newPhone() }, otherAdmin), 201)).data.contact;
    // Staff may not delete.
    expect((await post("/contacts/bulk/delete", { contactIds: [a.id] }, standardKey)).status).toBe(403);
    for (const body of [{ contactIds: [] }, { contactIds: "x" }, { contactIds: [a.id], reason: "x" }, {}]) {
      expect((await expectStatus(await post("/contacts/bulk/delete", body), 400)).code).toBe("VALIDATION_ERROR");
    }
    for (const c of [a, b]) await expectStatus(await s.api(`/contacts/${c.id}`), 200);
    const conversations = async () => JSON.stringify((await expectStatus(await s.api("/conversations"), 200)).data);
    expect(await conversations()).toContain(b.phoneNumber);
    const r = await expectStatus(await asOwner("/contacts/bulk/delete", { method: "POST", json: { contactIds: [a.id, b.id, theirs.id] } }), 200);
    expect(r.data.deleted).toBe(2);
    expect(r.data.errors.map((e: any) => e.id)).toEqual([theirs.id]);
    for (const c of [a, b]) await expectStatus(await s.api(`/contacts/${c.id}`), 404);
    await expectStatus(await s.api(`/messages/${m.data.messageId}`), 404);
    // b's conversation (its received text) went with it.
    expect(await conversations()).not.toContain(b.phoneNumber);
    // The queued text is no longer handed to a phone.
    const leased = (await expectStatus(await post("/messages/next", { limit: 50 }), 200)).data.messages.map((x: any) => x.id);
    expect(leased).not.toContain(m.data.messageId);
    expect((await expectStatus(await s.api(`/contacts/${theirs.id}`, { key: otherAdmin }), 200)).data.contact.id).toBe(theirs.id);
  });
});
