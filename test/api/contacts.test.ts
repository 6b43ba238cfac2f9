import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer, withServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage, nextPhone } from "../helpers/contact-fixtures";
import { newApiKey, raiseApiLimits } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
let standardKey: string;
let otherAdmin: string;
let otherAccountId: string;

beforeAll(async () => {
  s = await startTestServer();
  raiseApiLimits(s); // many reads back through the API a minute
  standardKey = await newApiKey(s, "standard_access");
  const other = newAccount(s, { name: "Other" });
  otherAdmin = other.apiKey;
  otherAccountId = other.account.id;
});
afterAll(() => s.stop());

// insertContact, insertForm and insertMessage (SQL) only arrange what the API cannot make in one
// step (contacts with a given status, history, messages already sent, another account's rows);
// what the requests changed is read back through the API.
// arrange: the connection the fixtures write through (contacts dated in the past, texts already sent)
const db = () => s.running.deps.sqlite;
/** A contact made through the API (POST /contacts), as the owner makes one; its id. */
const made = async (json: Record<string, unknown> = {}, key = s.adminKey) =>
  (await expectStatus(await s.api("/contacts", { method: "POST", key, json: { phoneNumber: nextPhone(), ...json } }), 201)).data.contact.id as string;
/** The ids of the contacts a list query shows (the admin key's account unless a key is given). */
const listed = async (query: string, key = s.adminKey) => (await expectStatus(await s.api(`/contacts?${query}`, { key }), 200)).data.contacts.map((x: any) => x.id) as string[];
/** A contact as another account's key sees it (its own contact). */
const theirContact = async (id: string) => (await expectStatus(await s.api(`/contacts/${id}`, { key: otherAdmin }), 200)).data.contact;
/** How many contacts the admin key's account has, as the API counts them. */
const contactCount = async () => (await expectStatus(await s.api("/contacts"), 200)).data.pagination.total as number;

describe("POST /contacts", () => {
  test("creates a contact: 201, phone normalised to E.164, every Contact field present", async () => {
    const body = await expectStatus(
      await s.api("/contacts", {
        method: "POST",
        json: { phoneNumber: "(415) 555-2671", firstName: " Jane ", lastName: "Doe", email: "jane@example.com", tags: ["vip", "vip", "lead"], customFields: { company: "Acme" }, notes: "n", source: "fair" },
      }),
      201,
    );
    const c = body.data.contact;
    expect(c.phoneNumber).toBe("+14155552671");
    expect(c.firstName).toBe("Jane");
    expect(c.status).toBe("new");
    expect(c.tags).toEqual(["vip", "lead"]);
    expect(c.customFields).toEqual({ company: "Acme" });
    expect(Object.keys(c).sort()).toEqual(
      ["createdAt", "customFields", "email", "firstName", "formId", "formName", "id", "lastContactedAt", "lastName", "lastResponseAt", "messageCount", "notes", "phoneNumber", "source", "status", "tags", "updatedAt", "optedOut", "optedOutAt", "consent", "timeZone"].sort(),
    );
    // Found by its name, its number and each of its tags.
    expect(await listed("search=jane%20doe")).toContain(c.id);
    expect(await listed("search=4155552671")).toContain(c.id);
    expect(await listed("tags=lead")).toContain(c.id);
    expect(await listed("tags=vip")).toContain(c.id);
  });

  test("duplicate phone in any format is 409 DUPLICATE_PHONE_NUMBER with existingContactId (details and top level)", async () => {
    const first = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550999" } }), 201);
    for (const p of ["201-555-0999", "(201) 555.0999", "12015550999"]) {
      const body = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: p } }), 409);
      expect(body.code).toBe("DUPLICATE_PHONE_NUMBER");
      expect(body.details.existingContactId).toBe(first.data.contact.id);
      expect(body.existingContactId).toBe(first.data.contact.id);
    }
  });

  test("the same phone in another account is a different contact", async () => {
    await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550998" } }), 201);
    await expectStatus(await s.api("/contacts", { method: "POST", key: otherAdmin, json: { phoneNumber: "+12015550998" } }), 201);
  });

  test("every validation failure is listed, nothing is written", async () => {
    const before = await contactCount();
    const body = await expectStatus(
      await s.api("/contacts", {
        method: "POST",
        json: {
          firstName: "x".repeat(51),
          lastName: 5,
          email: "not-an-email",
          status: "won",
          tags: ["ok", "", "x".repeat(51), "a;b", 7],
          customFields: { long: "y".repeat(501), num: 3 },
          notes: "z".repeat(5001),
          lastResponseAt: "yesterday",
          messageCount: 4,
        },
      }),
      400,
    );
    expect(body.code).toBe("VALIDATION_ERROR");
    const fields: string[] = body.errors.map((e: any) => e.field);
    for (const f of ["phoneNumber", "firstName", "lastName", "email", "status", "tags[1]", "tags[2]", "tags[3]", "tags[4]", "customFields.long", "customFields.num", "notes", "lastResponseAt", "messageCount"]) {
      expect(fields).toContain(f);
    }
    const status = body.errors.find((e: any) => e.field === "status");
    expect(status.message).toContain("new, contacted, responded, converted");
    expect(await contactCount()).toBe(before);
  });

  test("limits are inclusive: 50-character names, 500-character values, 50 tags", async () => {
    const tags = Array.from({ length: 50 }, (_, i) => `t${i}`);
    await expectStatus(
      await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550997", firstName: "x".repeat(50), customFields: { v: "y".repeat(500) }, tags, notes: "n".repeat(5000) } }),
      201,
    );
    const body = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550996", tags: [...tags, "t50"] } }), 400);
    expect(body.errors[0].field).toBe("tags");
  });

  test("invalid and landline phones are refused", async () => {
    for (const p of ["123", "abc", "+442079460000", ""]) {
      const body = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: p } }), 400);
      expect(body.errors[0].field).toBe("phoneNumber");
    }
  });

  test("malformed JSON and non-object bodies are 400, a non-JSON type 415", async () => {
    await expectStatus(await s.api("/contacts", { method: "POST", body: "{x", headers: { "Content-Type": "application/json" } }), 400);
    await expectStatus(await s.api("/contacts", { method: "POST", json: [1] }), 400);
    await expectStatus(await s.api("/contacts", { method: "POST", body: "a=b", headers: { "Content-Type": "text/plain" } }), 415);
  });
});

describe("GET /contacts", () => {
  test("filters: status, search (names, e-mail, phone digits in any format), tags (all), formId, created range", async () => {
    await withServer(async (t) => {
      // arrange: contacts created on set days (the API stamps the server's clock) in one form
      const d = t.running.deps.sqlite;
      const formA = insertForm(d, t.accountId, "Alpha");
      const a = insertContact(d, t.accountId, { firstName: "Maria", lastName: "Lopez", email: "maria@shop.example", phoneNumber: "+14155552671", status: "converted", tags: ["vip", "lead"], formId: formA, createdAt: "2026-01-10T10:00:00.000Z" });
      const b = insertContact(d, t.accountId, { firstName: "Mario", lastName: "Rossi", email: "mr@example.org", status: "new", tags: ["vip"], createdAt: "2026-02-10T10:00:00.000Z" });
      const c = insertContact(d, t.accountId, { firstName: "Zoe", lastName: "Adams", email: "zoe@zz.example", status: "contacted", tags: ["lead"], formId: formA, createdAt: "2026-03-10T10:00:00.000Z" });
      insertContact(d, newAccount(t, { name: "O" }).account.id, { firstName: "Maria", phoneNumber: "+14155550000" });
      const ids = async (q: string) => {
        const body = await expectStatus(await t.api(`/contacts${q}`), 200);
        expect(body.data.pagination.total).toBe(body.data.contacts.length);
        return body.data.contacts.map((x: any) => x.id);
      };
      expect(await ids("")).toEqual([c, b, a]);
      expect(await ids("?status=converted")).toEqual([a]);
      expect(await ids("?search=MARI")).toEqual([b, a]);
      expect(await ids("?search=maria%20lopez")).toEqual([a]);
      expect(await ids("?search=SHOP.EXAMPLE")).toEqual([a]);
      expect(await ids("?search=(415)%20555-26")).toEqual([a]);
      expect(await ids("?search=415.555.2671")).toEqual([a]);
      expect(await ids("?search=%2B14155552671")).toEqual([a]);
      expect(await ids("?search=nobody")).toEqual([]);
      expect(await ids("?search=100%25")).toEqual([]);
      expect(await ids("?tags=vip")).toEqual([b, a]);
      expect(await ids("?tags=vip,lead")).toEqual([a]);
      expect(await ids("?tags=vip,nope")).toEqual([]);
      expect(await ids(`?formId=${formA}`)).toEqual([c, a]);
      expect(await ids("?createdAfter=2026-02-10T10:00:00Z")).toEqual([c, b]);
      expect(await ids("?createdBefore=2026-02-10T10:00:00Z")).toEqual([a]);
      expect(await ids("?createdAfter=2026-02-01&createdBefore=2026-03-01")).toEqual([b]);
      expect(await ids("?status=new&tags=vip&search=rossi")).toEqual([b]);
      // Empty values mean "no filter".
      expect(await ids("?status=&tags=&search=")).toEqual([c, b, a]);
    });
  });

  test("list items carry the spec's fields and formName from the form", async () => {
    await withServer(async (t) => {
      // arrange: a contact with three texts counted (its messageCount), as texts sent over time leave it
      const f = insertForm(t.running.deps.sqlite, t.accountId, "Spring promo");
      insertContact(t.running.deps.sqlite, t.accountId, { formId: f, firstName: "A", messageCount: 3 });
      const body = await expectStatus(await t.api("/contacts"), 200);
      const item = body.data.contacts[0];
      for (const k of ["id", "firstName", "lastName", "phoneNumber", "email", "status", "formName", "messageCount", "createdAt"]) expect(k in item).toBe(true);
      expect(item.formName).toBe("Spring promo");
      expect(item.messageCount).toBe(3);
    });
  });

  test("sorts by each field in both orders; default createdAt desc", async () => {
    await withServer(async (t) => {
      // arrange: contacts created and updated on set days (the API stamps the server's clock)
      const d = t.running.deps.sqlite;
      const x = insertContact(d, t.accountId, { firstName: "Bea", lastName: "Zed", createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-05T00:00:00.000Z" });
      const y = insertContact(d, t.accountId, { firstName: "Al", lastName: "Young", createdAt: "2026-01-02T00:00:00.000Z", updatedAt: "2026-01-03T00:00:00.000Z" });
      const z = insertContact(d, t.accountId, { firstName: "Cy", lastName: "Xu", createdAt: "2026-01-03T00:00:00.000Z", updatedAt: "2026-01-04T00:00:00.000Z" });
      const ids = async (q: string) => (await expectStatus(await t.api(`/contacts${q}`), 200)).data.contacts.map((c: any) => c.id);
      expect(await ids("")).toEqual([z, y, x]);
      expect(await ids("?order=asc")).toEqual([x, y, z]);
      expect(await ids("?sortBy=createdAt&order=desc")).toEqual([z, y, x]);
      expect(await ids("?sortBy=updatedAt&order=asc")).toEqual([y, z, x]);
      expect(await ids("?sortBy=updatedAt")).toEqual([x, z, y]);
      expect(await ids("?sortBy=firstName&order=asc")).toEqual([y, x, z]);
      expect(await ids("?sortBy=firstName&order=desc")).toEqual([z, x, y]);
      expect(await ids("?sortBy=lastName&order=asc")).toEqual([z, y, x]);
      expect(await ids("?sortBy=lastName")).toEqual([x, y, z]);
    });
  });

  test("pagination: pages, the last partial page, a page past the end, totalPages", async () => {
    await withServer(async (t) => {
      // arrange: seven contacts created a day apart (the API stamps the server's clock)
      for (let i = 0; i < 7; i++) insertContact(t.running.deps.sqlite, t.accountId, { firstName: `P${i}`, createdAt: `2026-01-0${i + 1}T00:00:00.000Z` });
      const p1 = await expectStatus(await t.api("/contacts?limit=3"), 200);
      expect(p1.data.pagination).toEqual({ total: 7, page: 1, limit: 3, totalPages: 3 });
      expect(p1.data.contacts.map((c: any) => c.firstName)).toEqual(["P6", "P5", "P4"]);
      const p3 = await expectStatus(await t.api("/contacts?limit=3&page=3"), 200);
      expect(p3.data.contacts.map((c: any) => c.firstName)).toEqual(["P0"]);
      const p4 = await expectStatus(await t.api("/contacts?limit=3&page=4"), 200);
      expect(p4.data.contacts).toEqual([]);
      expect(p4.data.pagination.total).toBe(7);
      const all = await expectStatus(await t.api("/contacts?limit=100"), 200);
      expect(all.data.contacts.length).toBe(7);
      const def = await expectStatus(await t.api("/contacts"), 200);
      expect(def.data.pagination.limit).toBe(50);
      const empty = await withEmpty();
      expect(empty).toEqual({ total: 0, page: 1, limit: 50, totalPages: 0 });
    });
    async function withEmpty() {
      let p: any;
      await withServer(async (e) => {
        p = (await expectStatus(await e.api("/contacts"), 200)).data.pagination;
      });
      return p;
    }
  });

  test("bad parameters are 400 VALIDATION_ERROR naming the parameter and the allowed values", async () => {
    const cases: Array<[string, string, string?]> = [
      ["?page=0", "page"],
      ["?page=abc", "page"],
      ["?limit=101", "limit", "1 to 100"],
      ["?limit=0", "limit"],
      ["?status=won", "status", "new, contacted, responded, converted"],
      ["?sortBy=phone", "sortBy", "createdAt, updatedAt, firstName, lastName"],
      ["?order=up", "order", "asc, desc"],
      ["?createdAfter=yesterday", "createdAfter"],
      ["?createdBefore=2026-13-01", "createdBefore"],
      [`?search=${"x".repeat(201)}`, "search"],
    ];
    for (const [q, field, allowed] of cases) {
      const body = await expectStatus(await s.api(`/contacts${q}`), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.details.field).toBe(field);
      if (allowed) expect(body.message).toContain(allowed);
    }
  });
});

describe("GET /contacts/:id and /contacts/:id/messages", () => {
  test("another account's contact, an unknown id and a malformed id are all 404 CONTACT_NOT_FOUND", async () => {
    const mine = await made();
    const theirs = await made({}, otherAdmin);
    await expectStatus(await s.api(`/contacts/${mine}`), 200);
    for (const id of [theirs, crypto.randomUUID(), "not-a-uuid"]) {
      const body = await expectStatus(await s.api(`/contacts/${id}`), 404);
      expect(body.code).toBe("CONTACT_NOT_FOUND");
      expect((await expectStatus(await s.api(`/contacts/${id}/messages`), 404)).code).toBe("CONTACT_NOT_FOUND");
      expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { notes: "x" } }), 404)).code).toBe("CONTACT_NOT_FOUND");
      expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "DELETE" }), 404)).code).toBe("CONTACT_NOT_FOUND");
    }
    expect((await theirContact(theirs)).notes).toBeNull();
  });

  test("messages: {messages: [{id, content, status, sentAt, formName}], total}, newest first", async () => {
    // arrange: a text sent and one queued on set days (the API stamps the server's clock)
    const f = insertForm(db(), s.accountId, "History form");
    const c = insertContact(db(), s.accountId, { formId: f });
    const m1 = insertMessage(db(), s.accountId, { contactId: c, formId: f, status: "sent", content: "one", createdAt: "2026-01-01T00:00:00.000Z", sentAt: "2026-01-01T00:01:00.000Z" });
    const m2 = insertMessage(db(), s.accountId, { contactId: c, formId: f, content: "two", createdAt: "2026-01-02T00:00:00.000Z" });
    const body = await expectStatus(await s.api(`/contacts/${c}/messages`), 200);
    expect(body.data.total).toBe(2);
    expect(body.data.messages.map((m: any) => m.id)).toEqual([m2.id, m1.id]);
    expect(body.data.messages[1]).toMatchObject({ content: "one", status: "sent", sentAt: "2026-01-01T00:01:00.000Z", formName: "History form" });
    const paged = await expectStatus(await s.api(`/contacts/${c}/messages?limit=1&page=2`), 200);
    expect(paged.data.messages.map((m: any) => m.id)).toEqual([m1.id]);
    expect(paged.data.total).toBe(2);
    await expectStatus(await s.api(`/contacts/${c}/messages?limit=500`), 400);
  });
});

describe("PUT /contacts/:id", () => {
  test("tags replace, customFields merge (null deletes), other fields overwrite; updatedAt moves", async () => {
    // arrange: a contact last changed long ago (the API stamps the server's clock)
    const id = insertContact(db(), s.accountId, { firstName: "Old", tags: ["a", "b"], customFields: { keep: "1", drop: "2", change: "3" }, createdAt: "2026-01-01T00:00:00.000Z" });
    const body = await expectStatus(
      await s.api(`/contacts/${id}`, {
        method: "PUT",
        json: { firstName: "New", status: "responded", tags: ["c"], customFields: { drop: null, change: "33", add: "4" }, lastResponseAt: "2026-02-01T10:00:00+02:00" },
      }),
      200,
    );
    const c = body.data.contact;
    expect(c.firstName).toBe("New");
    expect(c.status).toBe("responded");
    expect(c.tags).toEqual(["c"]);
    expect(c.customFields).toEqual({ keep: "1", change: "33", add: "4" });
    expect(c.lastResponseAt).toBe("2026-02-01T08:00:00.000Z");
    expect(c.updatedAt > "2026-01-01T00:00:00.000Z").toBe(true);
    expect(await listed("tags=c")).toContain(id);
    expect(await listed("tags=a")).not.toContain(id);
    expect((await expectStatus(await s.api("/contacts?search=new&tags=c"), 200)).data.contacts.map((x: any) => x.id)).toContain(id);
    // Clearing: empty tags, null fields.
    const cleared = await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { tags: [], firstName: null, email: "", lastResponseAt: null } }), 200);
    expect(cleared.data.contact).toMatchObject({ tags: [], firstName: null, email: null, lastResponseAt: null });
    expect(await listed("tags=c")).not.toContain(id);
  });

  test("phoneNumber change: normalised, search text follows, 409 when another contact has it", async () => {
    const a = await made({ phoneNumber: "+12015551000" });
    const b = await made({ phoneNumber: "+12015551001" });
    const moved = await expectStatus(await s.api(`/contacts/${a}`, { method: "PUT", json: { phoneNumber: "(201) 555-1002" } }), 200);
    expect(moved.data.contact.phoneNumber).toBe("+12015551002");
    expect((await expectStatus(await s.api("/contacts?search=2015551002"), 200)).data.contacts.map((x: any) => x.id)).toEqual([a]);
    const clash = await expectStatus(await s.api(`/contacts/${a}`, { method: "PUT", json: { phoneNumber: "+12015551001", firstName: "Nope" } }), 409);
    expect(clash.code).toBe("DUPLICATE_PHONE_NUMBER");
    expect(clash.existingContactId).toBe(b);
    expect((await expectStatus(await s.api(`/contacts/${a}`), 200)).data.contact.firstName).toBeNull();
    // Its own number again is fine.
    await expectStatus(await s.api(`/contacts/${a}`, { method: "PUT", json: { phoneNumber: "+12015551002" } }), 200);
  });

  test("validation: bad status lists the four values; empty body and unknown fields refused; nothing changes", async () => {
    const id = await made({ firstName: "Same" });
    const bad = await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { status: "lost", firstName: "Changed" } }), 400);
    expect(bad.errors[0].field).toBe("status");
    expect(bad.errors[0].message).toBe("status must be one of new, contacted, responded, converted");
    expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: {} }), 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { createdAt: "2020-01-01T00:00:00Z" } }), 400)).errors[0].field).toBe("createdAt");
    expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { customFields: ["x"] } }), 400)).errors[0].field).toBe("customFields");
    expect((await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { tags: "a,b" } }), 400)).errors[0].field).toBe("tags");
    expect((await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact.firstName).toBe("Same");
  });

  test("a standard key may read and update contacts", async () => {
    const id = await made();
    await expectStatus(await s.api(`/contacts`, { key: standardKey }), 200);
    await expectStatus(await s.api(`/contacts/${id}`, { key: standardKey, method: "PUT", json: { status: "contacted" } }), 200);
  });
});

describe("DELETE /contacts/:id", () => {
  test("admin: removes the contact, its tags and message history; its queued messages leave the queue", async () => {
    await withServer(async (t) => {
      const make = async (json: Record<string, unknown> = {}) => (await expectStatus(await t.api("/contacts", { method: "POST", json: { phoneNumber: nextPhone(), ...json } }), 201)).data.contact.id as string;
      const text = async (contactId: string, content: string) => (await expectStatus(await t.api("/messages", { method: "POST", json: { contactId, content } }), 201)).data;
      const c = await make({ tags: ["x"] });
      expect((await expectStatus(await t.api("/contacts?tags=x"), 200)).data.contacts.map((x: any) => x.id)).toContain(c);
      const q = await text(c, "queued");
      expect(q.queuePosition).toBe(1);
      const sent = await text(c, "sent");
      await expectStatus(await t.api(`/messages/${sent.messageId}/status`, { method: "PUT", json: { status: "sent", sentAt: new Date().toISOString() } }), 200);
      const body = await expectStatus(await t.api(`/contacts/${c}`, { method: "DELETE" }), 200);
      expect(body.data.deletedId).toBe(c);
      for (const id of [q.messageId, sent.messageId]) await expectStatus(await t.api(`/messages/${id}`), 404);
      expect((await expectStatus(await t.api("/contacts?tags=x"), 200)).data.contacts).toEqual([]);
      await expectStatus(await t.api(`/contacts/${c}`), 404);
      // Its queued text left the queue: the next text is first in line, not behind it.
      expect((await text(await make(), "next")).queuePosition).toBe(1);
    });
  });

  test("a standard key is refused with 403 PERMISSION_ERROR and nothing is deleted", async () => {
    const c = await made();
    const body = await expectStatus(await s.api(`/contacts/${c}`, { method: "DELETE", key: standardKey }), 403);
    expect(body.code).toBe("PERMISSION_ERROR");
    expect(body.details).toMatchObject({ required: "admin_access", current: "standard_access" });
    await expectStatus(await s.api(`/contacts/${c}`), 200);
  });
});

describe("PUT /contacts/bulk", () => {
  test("a mix of good, unknown, foreign and repeated ids: updates each good one, lists the rest", async () => {
    const a = await made({ tags: ["old"], customFields: { k: "1" } });
    const b = await made({ status: "converted" });
    const foreign = await made({}, otherAdmin);
    const unknown = crypto.randomUUID();
    const body = await expectStatus(
      await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [a, unknown, b, foreign, a, "junk"], updates: { tags: ["campaign"], customFields: { wave: "2" }, status: "contacted" } } }),
      200,
    );
    expect(body.data.updated).toBe(2);
    expect(body.data.errors).toEqual([
      { id: unknown, code: "CONTACT_NOT_FOUND", message: expect.any(String) },
      { id: foreign, code: "CONTACT_NOT_FOUND", message: expect.any(String) },
      { id: "junk", code: "CONTACT_NOT_FOUND", message: expect.any(String) },
    ]);
    const ca = (await expectStatus(await s.api(`/contacts/${a}`), 200)).data.contact;
    expect(ca.tags).toEqual(["campaign"]);
    expect(ca.customFields).toEqual({ k: "1", wave: "2" });
    expect(ca.status).toBe("contacted");
    expect((await expectStatus(await s.api(`/contacts/${b}`), 200)).data.contact.status).toBe("contacted");
    expect((await theirContact(foreign)).tags).toEqual([]);
  });

  test("a contact whose merged custom fields would exceed the limit is refused alone, atomically", async () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, "v"]));
    const full = await made({ customFields: many, tags: ["keep"] });
    const ok = await made();
    const body = await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [full, ok], updates: { customFields: { extra: "x" }, tags: ["new"] } } }), 200);
    expect(body.data.updated).toBe(1);
    expect(body.data.errors).toEqual([{ id: full, code: "VALIDATION_ERROR", message: expect.any(String) }]);
    const c = (await expectStatus(await s.api(`/contacts/${full}`), 200)).data.contact;
    expect(c.tags).toEqual(["keep"]);
    expect(Object.keys(c.customFields).length).toBe(100);
  });

  test("bad bodies: missing/empty/oversized contactIds, invalid updates, phoneNumber in updates", async () => {
    const id = await made();
    const cases: Array<[unknown, string]> = [
      [{ updates: { status: "new" } }, "contactIds"],
      [{ contactIds: [], updates: { status: "new" } }, "contactIds"],
      [{ contactIds: Array.from({ length: 1001 }, () => id), updates: { status: "new" } }, "contactIds"],
      [{ contactIds: [id, 5], updates: { status: "new" } }, "contactIds"],
      [{ contactIds: [id] }, "updates"],
      [{ contactIds: [id], updates: {} }, "updates"],
      [{ contactIds: [id], updates: { status: "won" } }, "updates.status"],
      [{ contactIds: [id], updates: { phoneNumber: "+12015550100" } }, "updates.phoneNumber"],
    ];
    for (const [json, field] of cases) {
      const body = await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain(field);
    }
    const thousand = Array.from({ length: 1000 }, () => id);
    expect((await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: thousand, updates: { notes: "n" } } }), 200)).data.updated).toBe(1);
  });
});

describe("POST /contacts/search", () => {
  test("exact custom field matches, all conditions, plus tags and status; paginated like GET /contacts", async () => {
    await withServer(async (t) => {
      // arrange: contacts created on set days (the API stamps the server's clock)
      const d = t.running.deps.sqlite;
      const a = insertContact(d, t.accountId, { customFields: { plan: "gold", city: "Paris" }, tags: ["vip"], status: "new", createdAt: "2026-01-01T00:00:00.000Z" });
      const b = insertContact(d, t.accountId, { customFields: { plan: "gold", city: "Lyon" }, status: "converted", createdAt: "2026-01-02T00:00:00.000Z" });
      insertContact(d, t.accountId, { customFields: { plan: "Gold", city: "Paris" }, createdAt: "2026-01-03T00:00:00.000Z" });
      insertContact(d, t.accountId, { customFields: { plan: "gold plus" }, createdAt: "2026-01-04T00:00:00.000Z" });
      insertContact(d, newAccount(t, { name: "O" }).account.id, { customFields: { plan: "gold" } });
      const ids = async (json: unknown) => {
        const body = await expectStatus(await t.api("/contacts/search", { method: "POST", json }), 200);
        return body.data.contacts.map((x: any) => x.id);
      };
      expect(await ids({ customFields: { plan: "gold" } })).toEqual([b, a]);
      expect(await ids({ customFields: { plan: "gold", city: "Paris" } })).toEqual([a]);
      expect(await ids({ customFields: { plan: "gold" }, tags: ["vip"] })).toEqual([a]);
      expect(await ids({ customFields: { plan: "gold" }, status: "converted" })).toEqual([b]);
      expect(await ids({ customFields: { nope: "gold" } })).toEqual([]);
      expect(await ids({ customFields: { plan: "gold" }, sortBy: "createdAt", order: "asc" })).toEqual([a, b]);
      const page = await expectStatus(await t.api("/contacts/search", { method: "POST", json: { customFields: { plan: "gold" }, limit: 1, page: 2 } }), 200);
      expect(page.data.contacts.map((x: any) => x.id)).toEqual([a]);
      expect(page.data.pagination).toEqual({ total: 2, page: 2, limit: 1, totalPages: 2 });
    });
  });

  test("bad bodies are 400 naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "customFields"],
      [{ customFields: "plan=gold" }, "customFields"],
      [{ customFields: { plan: 5 } }, "customFields.plan"],
      [{ customFields: { 'a"b': "x" } }, 'customFields.a"b'],
      [{ customFields: { plan: "gold" }, status: "won" }, "status"],
      [{ customFields: { plan: "gold" }, limit: 500 }, "limit"],
      [{ customFields: { plan: "gold" }, sortBy: "email" }, "sortBy"],
      [{ customFields: { plan: "gold" }, extra: 1 }, "extra"],
    ];
    for (const [json, field] of cases) {
      const body = await expectStatus(await s.api("/contacts/search", { method: "POST", json }), 400);
      expect(body.errors.map((e: any) => e.field)).toContain(field);
    }
  });
});

describe("repeated queries", () => {
  test("totals and pages stay right across writes (the count cache never serves stale figures)", async () => {
    await withServer(async (t) => {
      // arrange: contacts created on set days (the API stamps the server's clock)
      const d = t.running.deps.sqlite;
      const ids = [1, 2, 3].map((i) => insertContact(d, t.accountId, { firstName: `Quinn${i}`, customFields: { team: "red" }, createdAt: `2026-01-0${i}T00:00:00.000Z` }));
      const list = async (q: string) => (await expectStatus(await t.api(`/contacts${q}`), 200)).data;
      const search = async (json: unknown) => (await expectStatus(await t.api("/contacts/search", { method: "POST", json }), 200)).data;
      expect((await list("?search=quinn")).pagination.total).toBe(3);
      const p2 = await list("?search=quinn&limit=2&page=2");
      expect(p2.contacts.map((c: any) => c.id)).toEqual([ids[0]]);
      expect((await list("?search=quinn&limit=2&page=1&order=asc")).contacts.map((c: any) => c.id)).toEqual([ids[0], ids[1]]);
      expect((await search({ customFields: { team: "red" } })).pagination.total).toBe(3);
      await expectStatus(await t.api(`/contacts/${ids[1]}`, { method: "PUT", json: { firstName: "Other", customFields: { team: "blue" } } }), 200);
      expect((await list("?search=quinn")).contacts.map((c: any) => c.id)).toEqual([ids[2], ids[0]]);
      expect((await search({ customFields: { team: "red" } })).pagination.total).toBe(2);
      // A write that bypasses the service (same connection) is seen too.
      insertContact(d, t.accountId, { firstName: "Quinn9", customFields: { team: "red" } });
      expect((await list("?search=quinn")).pagination.total).toBe(3);
      expect((await search({ customFields: { team: "red" } })).pagination.total).toBe(3);
      await expectStatus(await t.api(`/contacts/${ids[0]}`, { method: "DELETE" }), 200);
      expect((await list("?search=quinn")).pagination.total).toBe(2);
      expect((await list("?tags=none")).pagination.total).toBe(0);
    });
  });
});

