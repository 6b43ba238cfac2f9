import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertMessage, iso } from "../helpers/fixtures";
import { newAccount } from "../helpers/accounts";

const T0 = Date.parse("2026-11-23T09:00:00.000Z");
let s: TestServer;
const clock = { now: T0 };
beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
});
afterAll(() => s.stop());

const inbound = (from: string, body: string, receivedAt = clock.now) => s.api("/messages/inbound", { method: "POST", json: { from, body, receivedAt } });
const tick = (ms = 1_000) => (clock.now += ms);

describe("conversations", () => {
  let ann: string;
  let bob: string;
  let cy: string;
  test("one row per contact with messages either way, newest activity first, unread counts and a preview", async () => {
    // Through the API, so the contact's search text is written as in real use.
    ann = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550201", firstName: "Ann", status: "contacted" } }), 201)).data.contact.id;
    bob = insertContact(s.running.deps, s.accountId, { phone: "+14155550202", firstName: "Bob" });
    cy = insertContact(s.running.deps, s.accountId, { phone: "+14155550203", firstName: "Cy" });
    insertContact(s.running.deps, s.accountId, { phone: "+14155550204", firstName: "Silent" }); // no messages: not listed
    tick();
    await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: ann, content: "Your boiler service is booked for Monday 9am" } }), 201);
    tick();
    await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: bob, content: "Thanks for your enquiry" } }), 201);
    tick();
    await expectStatus(await inbound("+14155550201", "Can we make it 10am instead?"), 201);
    tick();
    await expectStatus(await inbound("+14155550201", "Or Tuesday"), 201);
    tick();
    await expectStatus(await inbound("+14155550203", "x".repeat(300)), 201);
    const d = (await expectStatus(await s.api("/conversations"), 200)).data;
    expect(d.conversations.map((c: any) => c.contactId)).toEqual([cy, ann, bob]);
    const [c0, c1, c2] = d.conversations;
    expect(c1).toMatchObject({ contact: { id: ann, firstName: "Ann", phoneNumber: "+14155550201", status: "responded", optedOut: false }, unreadCount: 2 });
    expect(c1.lastMessage).toMatchObject({ direction: "inbound", preview: "Or Tuesday", at: iso(clock.now - 1_000) });
    expect(c2).toMatchObject({ unreadCount: 0, lastMessage: { direction: "outbound", preview: "Thanks for your enquiry" } });
    expect([...c0.lastMessage.preview].length).toBe(100);
    expect(c0.lastMessage.preview.endsWith("…")).toBe(true);
    expect(d.unreadTotal).toBe(3);
    expect(d.pagination).toEqual({ total: 3, page: 1, limit: 50, totalPages: 1 });
  });

  test("filters: unread, status, search; pagination; bad values are 400", async () => {
    const ids = async (q: string) => (await expectStatus(await s.api(`/conversations${q}`), 200)).data.conversations.map((c: any) => c.contactId);
    expect(await ids("?unread=true")).toEqual([cy, ann]);
    expect(await ids("?unread=false")).toEqual([bob]);
    expect(await ids("?status=new")).toEqual([bob]);
    expect(await ids("?search=ann")).toEqual([ann]);
    expect(await ids("?search=0202")).toEqual([bob]);
    expect(await ids("?limit=1&page=2")).toEqual([ann]);
    for (const q of ["?unread=maybe", "?status=vip", "?limit=0"]) expect((await expectStatus(await s.api(`/conversations${q}`), 400)).code).toBe("VALIDATION_ERROR");
  });

  test("GET /conversations/<contactId>: both directions in time order, paginated", async () => {
    const d = (await expectStatus(await s.api(`/conversations/${ann}`), 200)).data;
    expect(d.contact).toMatchObject({ id: ann, firstName: "Ann" });
    expect(d.messages.map((m: any) => [m.direction, m.content])).toEqual([
      ["outbound", "Your boiler service is booked for Monday 9am"],
      ["inbound", "Can we make it 10am instead?"],
      ["inbound", "Or Tuesday"],
    ]);
    expect(d.messages[1]).toMatchObject({ status: "received", readAt: null, keyword: null, receivedAt: d.messages[1].at });
    expect(d.messages[0]).toMatchObject({ status: "queued", receivedAt: null });
    expect(d.pagination.total).toBe(3);
    const p2 = (await expectStatus(await s.api(`/conversations/${ann}?limit=2&page=2`), 200)).data;
    expect(p2.messages.map((m: any) => m.content)).toEqual(["Or Tuesday"]);
    const desc = (await expectStatus(await s.api(`/conversations/${ann}?order=desc&limit=1`), 200)).data;
    expect(desc.messages[0].content).toBe("Or Tuesday");
    expect((await expectStatus(await s.api(`/conversations/${crypto.randomUUID()}`), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await s.api(`/conversations/${ann}?order=sideways`), 400)).code).toBe("VALIDATION_ERROR");
  });

  test("POST /conversations/<contactId>/read clears the unread count; a new reply counts again", async () => {
    const r = (await expectStatus(await s.api(`/conversations/${ann}/read`, { method: "POST" }), 200)).data;
    expect(r).toEqual({ contactId: ann, markedRead: 2, unreadCount: 0 });
    const again = (await expectStatus(await s.api(`/conversations/${ann}/read`, { method: "POST" }), 200)).data;
    expect(again.markedRead).toBe(0);
    const d = (await expectStatus(await s.api("/conversations?unread=true"), 200)).data;
    expect(d.conversations.map((c: any) => c.contactId)).toEqual([cy]);
    expect(d.unreadTotal).toBe(1);
    const thread = (await expectStatus(await s.api(`/conversations/${ann}`), 200)).data.messages;
    expect(thread[1].readAt).toBe(iso(clock.now));
    tick();
    await expectStatus(await inbound("+14155550201", "Thanks!"), 201);
    const top = (await expectStatus(await s.api("/conversations"), 200)).data.conversations[0];
    expect(top).toMatchObject({ contactId: ann, unreadCount: 1 });
    expect((await expectStatus(await s.api(`/conversations/${crypto.randomUUID()}/read`, { method: "POST" }), 404)).code).toBe("CONTACT_NOT_FOUND");
  });

  test("a keyword's auto-reply is listed after the text that asked for it: same instant, or the phone's clock ahead of the server's", async () => {
    const help = async (phone: string, receivedAt: number) => expectStatus(await inbound(phone, "help", receivedAt), 201);
    const thread = async (id: string, order = "asc") => (await expectStatus(await s.api(`/conversations/${id}?order=${order}`), 200)).data.messages.map((m: any) => m.direction);
    tick();
    await help("+14155550205", clock.now); // received the very millisecond the reply is queued
    tick();
    await help("+14155550206", clock.now + 20_000); // the phone's clock runs 20 s ahead
    const list = (await expectStatus(await s.api("/contacts?search=0205"), 200)).data.contacts.concat((await expectStatus(await s.api("/contacts?search=0206"), 200)).data.contacts);
    expect(list.length).toBe(2);
    for (const c of list) {
      expect(await thread(c.id)).toEqual(["inbound", "outbound"]);
      expect(await thread(c.id, "desc")).toEqual(["outbound", "inbound"]);
    }
  });

  test("another account sees none of it", async () => {
    const other = newAccount(s, { name: "Other" });
    const d = (await expectStatus(await s.api("/conversations", { key: other.apiKey }), 200)).data;
    expect(d.conversations).toEqual([]);
    expect((await expectStatus(await s.api(`/conversations/${ann}`, { key: other.apiKey }), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await s.api(`/conversations/${ann}/read`, { key: other.apiKey, method: "POST" }), 404)).code).toBe("CONTACT_NOT_FOUND");
  });
});

describe("messages analytics replyRate", () => {
  test("of the contacts texted in the period, the share that replied in it", async () => {
    const texted = [0, 1, 2, 3].map((i) => insertContact(s.running.deps, s.accountId, { phone: `+1415555031${i}` }));
    const before = (await expectStatus(await s.api("/messages/analytics?period=7d"), 200)).data.analytics;
    for (const id of texted) {
      const m = insertMessage(s.running.deps, s.accountId, { contactId: id, status: "queued" });
      await expectStatus(await s.api(`/messages/${m}/status`, { method: "PUT", json: { status: "sent", sentAt: iso(clock.now) } }), 200);
    }
    tick();
    await expectStatus(await inbound("+14155550310", "ok"), 201);
    const a = (await expectStatus(await s.api("/messages/analytics?period=7d"), 200)).data.analytics;
    expect(typeof a.replyRate).toBe("number");
    expect(before.replyRate).toBe(0);
    expect(a.replyRate).toBe(25);
  });
});
