import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage, iso } from "../helpers/fixtures";
import { newApiKey } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
let standardKey: string;
let otherKey: string;
let otherAccount: string;
let now = Date.parse("2026-11-20T12:00:00.000Z");

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => now });
  standardKey = await newApiKey(s, "standard_access");
  const other = newAccount(s, { name: "Other" });
  otherKey = other.apiKey;
  otherAccount = other.account.id;
});
afterAll(() => s.stop());

// insertMessage and insertContact (SQL) only arrange what the API cannot make in one step: a
// message already sent or failed without a phone, one of another account, contacts with a given
// status. What the requests changed is read back through the API (shown, contactOf, total).
const deps = () => s.running.deps;
/** A message as GET /messages/:id shows it (null when it is not found), read with the account's own key. */
async function shown(id: string, key = s.adminKey): Promise<Record<string, any> | null> {
  const res = await s.api(`/messages/${id}`, { key });
  if (res.status === 404) return null;
  return (await expectStatus(res, 200)).data.message;
}
/** What the API shows: a contact, and the number of contacts or messages of the admin key's account. */
const contactOf = async (id: string) => (await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact;
const total = async (path: "/contacts" | "/messages") => (await expectStatus(await s.api(path), 200)).data.pagination.total as number;
/** Messages routes with the key in the path (the spec's form). */
const pathApi = (path: string, init: RequestInit & { json?: unknown; key?: string } = {}) => {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("Content-Type", "application/json");
  }
  return fetch(`${s.base}/messages/${init.key ?? s.adminKey}${path}`, { ...init, headers, body });
};

async function manual(json: Record<string, unknown>, key = s.adminKey) {
  return (await expectStatus(await s.api("/messages", { method: "POST", json, key }), 201)).data;
}
async function setStatus(id: string, json: Record<string, unknown>, status: number) {
  return expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", json }), status);
}

describe("path key and Bearer", () => {
  test("both forms reach the same routes", async () => {
    const m = await manual({ phoneNumber: "4155550100", content: "both ways" });
    const a = await expectStatus(await pathApi(`/${m.messageId}`), 200);
    const b = await expectStatus(await s.api(`/messages/${m.messageId}`), 200);
    expect(a.data.message).toEqual(b.data.message);
    const listA = await expectStatus(await pathApi(""), 200);
    const listB = await expectStatus(await s.api("/messages"), 200);
    expect(listA.data.pagination.total).toBe(listB.data.pagination.total);
    await expectStatus(await pathApi(`/${m.messageId}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
    expect((await shown(m.messageId))!.status).toBe("cancelled");
  });

  test("a wrong key in the path is 401; a standard key may use every messages route", async () => {
    const r = await expectStatus(await fetch(`${s.base}/messages/txwire_sk_${"x".repeat(40)}`), 401);
    expect(r.code).toBe("AUTHENTICATION_ERROR");
    const m = await manual({ phoneNumber: "4155550101", content: "std" }, standardKey);
    await expectStatus(await pathApi(`/${m.messageId}`, { key: standardKey }), 200);
    await expectStatus(await pathApi(`/${m.messageId}`, { key: standardKey, method: "DELETE" }), 200);
  });

  test("another account's message id → 404 MESSAGE_NOT_FOUND, on every route", async () => {
    const m = await manual({ phoneNumber: "4155550102", content: "mine" });
    for (const [path, method, json] of [
      [`/messages/${m.messageId}`, "GET", undefined],
      [`/messages/${m.messageId}/status`, "PUT", { status: "cancelled" }],
      [`/messages/${m.messageId}`, "DELETE", undefined],
    ] as const) {
      const body = await expectStatus(await s.api(path, { method, json, key: otherKey }), 404);
      expect(body.code).toBe("MESSAGE_NOT_FOUND");
    }
    expect((await shown(m.messageId))!.status).toBe("queued");
    const bulk = await expectStatus(await s.api("/messages/bulk", { method: "PUT", key: otherKey, json: { messageIds: [m.messageId], status: "cancelled" } }), 200);
    expect(bulk.data).toEqual({ updated: 0, errors: [{ id: m.messageId, code: "MESSAGE_NOT_FOUND", message: "Message not found" }] });
    await expectStatus(await s.api("/messages/not-a-uuid"), 404);
  });
});

describe("POST /messages (manual)", () => {
  test("queues a message, normalises the phone, links an existing contact", async () => {
    const contactId = insertContact(deps(), s.accountId, { phone: "+14155550150", firstName: "Zoe" });
    const m = await manual({ phoneNumber: "(415) 555-0150", content: "Hello Zoe", priority: "high" });
    expect(m.contactId).toBe(contactId);
    expect(m.queuePosition).toBeGreaterThanOrEqual(1);
    expect(m.message).toMatchObject({ recipientPhone: "+14155550150", recipientName: "Zoe", priority: "high", status: "queued", formId: null });
    expect(m.message.metadata).toMatchObject({ source: "manual", messageLength: 9, encoding: "GSM-7", segments: 1 });
    expect(deps().queue.has(m.messageId)).toBe(true);
    const byContact = await manual({ contactId, content: "again" });
    expect(byContact.message.recipientPhone).toBe("+14155550150");
  });

  test("an unknown phone creates no contact", async () => {
    const before = await total("/contacts");
    const m = await manual({ phoneNumber: "+1 415 555 0199", content: "x" });
    expect(m.contactId).toBeNull();
    expect(await total("/contacts")).toBe(before);
  });

  test("validation: phone or contact, content, priority, scheduledFor", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ content: "x" }, "phoneNumber"],
      [{ phoneNumber: "123", content: "x" }, "phoneNumber"],
      [{ phoneNumber: "4155550100", contactId: "y", content: "x" }, "phoneNumber"],
      [{ phoneNumber: "4155550100" }, "content"],
      [{ phoneNumber: "4155550100", content: "x".repeat(1601) }, "content"],
      [{ phoneNumber: "4155550100", content: "x", priority: "asap" }, "priority"],
      [{ phoneNumber: "4155550100", content: "x", scheduledFor: "tomorrow" }, "scheduledFor"],
    ];
    const before = await total("/messages");
    for (const [json, field] of cases) {
      const body = await expectStatus(await s.api("/messages", { method: "POST", json }), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.errors.map((e: any) => e.field)).toContain(field);
    }
    expect(await total("/messages")).toBe(before);
    const nf = await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: crypto.randomUUID(), content: "x" } }), 404);
    expect(nf.code).toBe("CONTACT_NOT_FOUND");
    const foreign = insertContact(deps(), otherAccount, { phone: "+14155550177" });
    await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: foreign, content: "x" } }), 404);
  });
});

describe("GET /messages/<id>", () => {
  test("every Message field, webhookData and metadata as objects", async () => {
    const formId = insertForm(deps(), s.accountId, { name: "Quotes" });
    const contactId = insertContact(deps(), s.accountId, { formId });
    const id = insertMessage(deps(), s.accountId, { formId, formName: "Quotes", contactId, webhookData: { firstName: "Ann", company: "Acme" } });
    const m = (await expectStatus(await s.api(`/messages/${id}`), 200)).data.message;
    for (const k of ["id", "content", "recipientPhone", "recipientName", "contactId", "formId", "formName", "status", "priority", "webhookData", "templateUsed", "scheduledFor", "sentAt", "failureReason", "retryCount", "metadata", "createdAt", "updatedAt"]) {
      expect(m).toHaveProperty(k);
    }
    expect(m.webhookData).toEqual({ firstName: "Ann", company: "Acme" });
    expect(m.metadata).toEqual({ source: "webhook" });
    expect(m).toMatchObject({ formId, formName: "Quotes", contactId, templateUsed: "Hi {{firstName}}", retryCount: 0, sentAt: null, failureReason: null });
  });
});

describe("PUT /messages/<id>/status: transitions", () => {
  const sentAt = "2026-11-20T12:05:00.000Z";

  test("queued → sent records sentAt, updates the contact once, leaves the queue", async () => {
    const contactId = insertContact(deps(), s.accountId, { status: "new", messageCount: 2 });
    const id = insertMessage(deps(), s.accountId, { contactId });
    expect(deps().queue.has(id)).toBe(true);
    const r = await setStatus(id, { status: "sent", sentAt: "2026-11-20T07:05:00-05:00" }, 200);
    expect(r.data).toMatchObject({ messageId: id, status: "sent", sentAt });
    expect(Date.parse(r.data.updatedAt)).toBeGreaterThan(0);
    expect(deps().queue.has(id)).toBe(false);
    expect(await contactOf(contactId)).toMatchObject({ lastContactedAt: sentAt, messageCount: 3, status: "contacted" });
    // Idempotent repeat: 200, nothing counted twice.
    const again = await setStatus(id, { status: "sent", sentAt: "2026-11-20T12:05:00Z" }, 200);
    expect(again.data.updatedAt).toBe(r.data.updatedAt);
    expect((await contactOf(contactId)).messageCount).toBe(3);
    // A different sentAt is refused.
    const bad = await setStatus(id, { status: "sent", sentAt: "2026-11-20T13:00:00Z" }, 400);
    expect(bad.code).toBe("INVALID_TRANSITION");
    expect(bad.message).toBe("Invalid status transition");
    expect(bad.details).toMatchObject({ currentStatus: "sent", requestedStatus: "sent" });
  });

  test("a contact already responded keeps its status on sent", async () => {
    const contactId = insertContact(deps(), s.accountId, { status: "responded" });
    const id = insertMessage(deps(), s.accountId, { contactId });
    await setStatus(id, { status: "sent", sentAt }, 200);
    expect(await contactOf(contactId)).toMatchObject({ status: "responded", messageCount: 1 });
  });

  test("queued → failed needs failureReason; failed → queued counts a retry and requeues", async () => {
    const id = insertMessage(deps(), s.accountId);
    const v = await setStatus(id, { status: "failed" }, 400);
    expect(v.code).toBe("VALIDATION_ERROR");
    expect(v.details.field).toBe("failureReason");
    expect((await shown(id))!.status).toBe("queued");
    await setStatus(id, { status: "failed", failureReason: "invalid-phone" }, 200);
    expect(await shown(id)).toMatchObject({ status: "failed", failureReason: "invalid-phone" });
    expect(deps().queue.has(id)).toBe(false);
    await setStatus(id, { status: "failed", failureReason: "invalid-phone" }, 200);
    const diff = await setStatus(id, { status: "failed", failureReason: "rate-limit" }, 400);
    expect(diff.message).toBe("Invalid status transition");
    const r = await setStatus(id, { status: "queued" }, 200);
    expect(r.data.status).toBe("queued");
    expect(await shown(id)).toMatchObject({ status: "queued", retryCount: 1, failureReason: null });
    expect(deps().queue.has(id)).toBe(true);
    await setStatus(id, { status: "queued" }, 200);
    expect((await shown(id))!.retryCount).toBe(1);
  });

  test("queued → sent needs a valid sentAt", async () => {
    const id = insertMessage(deps(), s.accountId);
    for (const bad of [undefined, "", "yesterday", "2026-13-01T00:00:00Z"]) {
      const b = await setStatus(id, { status: "sent", sentAt: bad }, 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.details.field).toBe("sentAt");
    }
    expect((await shown(id))!.status).toBe("queued");
  });

  test("queued → cancelled; repeats are no-ops; nothing leaves cancelled", async () => {
    const id = insertMessage(deps(), s.accountId);
    await setStatus(id, { status: "cancelled" }, 200);
    expect(deps().queue.has(id)).toBe(false);
    await setStatus(id, { status: "cancelled" }, 200);
    for (const to of [{ status: "queued" }, { status: "sent", sentAt }, { status: "failed", failureReason: "x" }]) {
      const b = await setStatus(id, to, 400);
      expect(b.code).toBe("INVALID_TRANSITION");
      expect(b.details).toMatchObject({ currentStatus: "cancelled", requestedStatus: to.status });
      expect(typeof b.details.message).toBe("string");
    }
    expect((await shown(id))!.status).toBe("cancelled");
  });

  test("every refused move from sent and failed", async () => {
    const sent = insertMessage(deps(), s.accountId, { status: "sent", sentAt });
    for (const to of [{ status: "queued" }, { status: "failed", failureReason: "x" }, { status: "cancelled" }]) {
      const b = await setStatus(sent, to, 400);
      expect(b).toMatchObject({ status: "error", message: "Invalid status transition", details: { currentStatus: "sent", requestedStatus: to.status } });
    }
    const failed = insertMessage(deps(), s.accountId, { status: "failed", failureReason: "network-error" });
    for (const to of [{ status: "sent", sentAt }, { status: "cancelled" }]) {
      const b = await setStatus(failed, to, 400);
      expect(b.details).toMatchObject({ currentStatus: "failed", requestedStatus: to.status });
    }
    expect((await shown(sent))!.status).toBe("sent");
    expect((await shown(failed))!.status).toBe("failed");
  });

  test("unknown status → 400 VALIDATION_ERROR naming status; missing body → 400", async () => {
    const id = insertMessage(deps(), s.accountId);
    const b = await setStatus(id, { status: "delivered" }, 400);
    expect(b.code).toBe("VALIDATION_ERROR");
    expect(b.details.field).toBe("status");
    await expectStatus(await s.api(`/messages/${id}/status`, { method: "PUT", body: "{bad", headers: { "Content-Type": "application/json" } }), 400);
    await expectStatus(await s.api(`/messages/${crypto.randomUUID()}/status`, { method: "PUT", json: { status: "cancelled" } }), 404);
  });
});

describe("DELETE /messages/<id>", () => {
  test("queued only; others 409 INVALID_STATE and nothing deleted", async () => {
    const q = insertMessage(deps(), s.accountId);
    const r = await expectStatus(await s.api(`/messages/${q}`, { method: "DELETE" }), 200);
    expect(r.data).toEqual({ deletedId: q });
    expect(await shown(q)).toBeNull();
    expect(deps().queue.has(q)).toBe(false);
    await expectStatus(await s.api(`/messages/${q}`, { method: "DELETE" }), 404);
    for (const status of ["sent", "failed", "cancelled"] as const) {
      const id = insertMessage(deps(), s.accountId, { status });
      const b = await expectStatus(await s.api(`/messages/${id}`, { method: "DELETE" }), 409);
      expect(b).toMatchObject({ code: "INVALID_STATE", details: { currentStatus: status } });
      expect((await shown(id))!.status).toBe(status);
    }
  });
});

describe("PUT /messages/bulk", () => {
  test("a mix of good and bad ids: each judged alone", async () => {
    const contactId = insertContact(deps(), s.accountId);
    const a = insertMessage(deps(), s.accountId, { contactId });
    const b = insertMessage(deps(), s.accountId, { contactId });
    const alreadySent = insertMessage(deps(), s.accountId, { status: "sent", sentAt: "2026-11-20T12:00:00.000Z" });
    const cancelled = insertMessage(deps(), s.accountId, { status: "cancelled" });
    const foreign = insertMessage(deps(), otherAccount);
    const missing = crypto.randomUUID();
    const r = await expectStatus(
      await s.api("/messages/bulk", {
        method: "PUT",
        json: { messageIds: [a, b, a, alreadySent, cancelled, foreign, missing, "junk"], status: "sent", sentAt: "2026-11-20T12:00:00Z" },
      }),
      200,
    );
    expect(r.data.updated).toBe(2);
    const byId = Object.fromEntries(r.data.errors.map((e: any) => [e.id, e]));
    expect(Object.keys(byId).sort()).toEqual([cancelled, foreign, missing, "junk"].sort());
    expect(byId[cancelled].code).toBe("INVALID_TRANSITION");
    expect(byId[foreign].code).toBe("MESSAGE_NOT_FOUND");
    expect(byId[missing].code).toBe("MESSAGE_NOT_FOUND");
    for (const e of r.data.errors) expect(typeof e.message).toBe("string");
    expect((await shown(a))!.status).toBe("sent");
    expect((await shown(foreign, otherKey))!.status).toBe("queued");
    expect((await contactOf(contactId)).messageCount).toBe(2);
    expect(deps().queue.has(a) || deps().queue.has(b)).toBe(false);
  });

  test("request-level validation: ids 1-1000, status, the fields the status needs", async () => {
    const id = insertMessage(deps(), s.accountId);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ messageIds: [], status: "cancelled" }, "messageIds"],
      [{ messageIds: Array.from({ length: 1001 }, () => crypto.randomUUID()), status: "cancelled" }, "messageIds"],
      [{ messageIds: "x", status: "cancelled" }, "messageIds"],
      [{ messageIds: [id], status: "gone" }, "status"],
      [{ messageIds: [id], status: "sent" }, "sentAt"],
      [{ messageIds: [id], status: "failed" }, "failureReason"],
    ];
    for (const [json, field] of bad) {
      const b = await expectStatus(await s.api("/messages/bulk", { method: "PUT", json }), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.details.field).toBe(field);
    }
    expect((await shown(id))!.status).toBe("queued");
    const ok = await expectStatus(await s.api("/messages/bulk", { method: "PUT", json: { messageIds: Array.from({ length: 1000 }, (_, i) => (i === 0 ? id : crypto.randomUUID())), status: "failed", failureReason: "rate-limit" } }), 200);
    expect(ok.data.updated).toBe(1);
    expect(ok.data.errors.length).toBe(999);
  });
});

describe("GET /messages: filters, sorts, pagination", () => {
  let t: TestServer;
  let formA: string;
  let formB: string;
  let contact: string;
  const ids: Record<string, string> = {};
  const day = (d: number, h = 12) => iso(Date.UTC(2026, 10, d, h));

  beforeAll(async () => {
    t = await startTestServer({}, { clock: () => Date.parse("2026-11-20T12:00:00Z") });
    const d = t.running.deps;
    formA = insertForm(d, t.accountId, { name: "A" });
    formB = insertForm(d, t.accountId, { name: "B" });
    contact = insertContact(d, t.accountId, { formId: formA });
    ids.q1 = insertMessage(d, t.accountId, { formId: formA, formName: "A", contactId: contact, createdAt: day(1), priority: "low", scheduledFor: day(15) });
    ids.q2 = insertMessage(d, t.accountId, { formId: formA, formName: "A", createdAt: day(2), priority: "urgent", scheduledFor: day(10) });
    ids.s1 = insertMessage(d, t.accountId, { formId: formB, formName: "B", createdAt: day(3), status: "sent", sentAt: day(4), priority: "high" });
    ids.s2 = insertMessage(d, t.accountId, { formId: formB, formName: "B", contactId: contact, createdAt: day(4), status: "sent", sentAt: day(3) });
    ids.f1 = insertMessage(d, t.accountId, { createdAt: day(5), status: "failed", priority: "urgent" });
    ids.c1 = insertMessage(d, t.accountId, { createdAt: day(6), status: "cancelled", priority: "high" });
    insertMessage(d, otherAccount === "" ? "x" : newAccount(t, { name: "X" }).account.id, { createdAt: day(6) });
  });
  afterAll(() => t.stop());

  const list = async (qs: string) => (await expectStatus(await t.api(`/messages${qs}`), 200)).data;
  const order = (data: any) => data.messages.map((m: any) => Object.entries(ids).find(([, v]) => v === m.id)![0]);

  test("no filter: the account's messages newest first, summary and pagination", async () => {
    const data = await list("");
    expect(order(data)).toEqual(["c1", "f1", "s2", "s1", "q2", "q1"]);
    expect(data.pagination).toEqual({ total: 6, page: 1, limit: 50, totalPages: 1 });
    expect(data.summary).toEqual({ queued: 2, sent: 2, failed: 1, cancelled: 1 });
    expect(Object.keys(data.messages[0]).sort()).toEqual(
      ["id", "content", "recipientPhone", "recipientName", "formId", "formName", "contactId", "status", "priority", "scheduledFor", "sentAt",
      "stage", "createdAt"].sort(),
    );
  });

  test("each filter; the summary ignores only the status filter", async () => {
    let data = await list("?status=sent");
    expect(order(data).sort()).toEqual(["s1", "s2"]);
    expect(data.pagination.total).toBe(2);
    expect(data.summary).toEqual({ queued: 2, sent: 2, failed: 1, cancelled: 1 });
    data = await list("?priority=urgent");
    expect(order(data)).toEqual(["f1", "q2"]);
    expect(data.summary).toEqual({ queued: 1, sent: 0, failed: 1, cancelled: 0 });
    data = await list(`?formId=${formB}`);
    expect(order(data)).toEqual(["s2", "s1"]);
    data = await list(`?contactId=${contact}`);
    expect(order(data)).toEqual(["s2", "q1"]);
    // A half-open range: createdAfter inclusive, createdBefore exclusive (f1 is created at day(5)).
    data = await list(`?createdAfter=2026-11-03&createdBefore=${encodeURIComponent(day(5))}`);
    expect(order(data)).toEqual(["s2", "s1"]);
    data = await list(`?createdAfter=${encodeURIComponent(day(3))}&createdBefore=${encodeURIComponent(iso(Date.parse(day(5)) + 1))}`);
    expect(order(data)).toEqual(["f1", "s2", "s1"]);
    data = await list(`?createdAfter=2026-11-02T12:00:00.001Z`);
    expect(order(data)).toEqual(["c1", "f1", "s2", "s1"]);
    data = await list(`?status=queued&formId=${formA}&priority=low`);
    expect(order(data)).toEqual(["q1"]);
    expect(data.summary).toEqual({ queued: 1, sent: 0, failed: 0, cancelled: 0 });
  });

  test("each sort, both orders", async () => {
    expect(order(await list("?sortBy=createdAt&order=asc"))).toEqual(["q1", "q2", "s1", "s2", "f1", "c1"]);
    const bySched = order(await list("?sortBy=scheduledFor&order=asc"));
    expect(bySched.indexOf("q2")).toBeGreaterThan(bySched.indexOf("c1"));
    expect(bySched.slice(-2)).toEqual(["q2", "q1"]);
    expect(order(await list("?status=sent&sortBy=sentAt&order=desc"))).toEqual(["s1", "s2"]);
    expect(order(await list("?status=sent&sortBy=sentAt&order=asc"))).toEqual(["s2", "s1"]);
    // priority, default desc: urgent, high, normal, low — oldest first within a priority.
    expect(order(await list("?sortBy=priority"))).toEqual(["q2", "f1", "s1", "c1", "s2", "q1"]);
    expect(order(await list("?sortBy=priority&order=asc"))).toEqual(["q1", "s2", "c1", "s1", "f1", "q2"]);
  });

  test("pagination edges", async () => {
    let data = await list("?limit=4&page=2");
    expect(order(data)).toEqual(["q2", "q1"]);
    expect(data.pagination).toEqual({ total: 6, page: 2, limit: 4, totalPages: 2 });
    data = await list("?limit=4&page=3");
    expect(data.messages).toEqual([]);
    data = await list("?limit=1");
    expect(data.pagination.totalPages).toBe(6);
    data = await list("?limit=100&status=cancelled");
    expect(data.pagination).toEqual({ total: 1, page: 1, limit: 100, totalPages: 1 });
    data = await list(`?formId=${crypto.randomUUID()}`);
    expect(data.pagination).toEqual({ total: 0, page: 1, limit: 50, totalPages: 0 });
    for (const qs of ["?limit=0", "?limit=101", "?page=0", "?page=x"]) {
      const b = await expectStatus(await t.api(`/messages${qs}`), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
    }
  });

  test("bad enum, date and sort values → 400 naming the parameter and the allowed values", async () => {
    const cases: Array<[string, string, string]> = [
      ["?status=delivered", "status", "queued, sent, failed, cancelled"],
      ["?priority=asap", "priority", "low, normal, high, urgent"],
      ["?sortBy=content", "sortBy", "createdAt, scheduledFor, sentAt, priority"],
      ["?order=up", "order", "asc, desc"],
      ["?createdAfter=last-week", "createdAfter", "ISO 8601"],
      ["?createdBefore=2026-02-30", "createdBefore", "ISO 8601"],
    ];
    for (const [qs, field, allowed] of cases) {
      const b = await expectStatus(await t.api(`/messages${qs}`), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.details.field).toBe(field);
      expect(b.errors[0].message + b.details.requirement).toContain(allowed);
    }
  });
});

describe("summary counters (message_counts, kept by triggers)", () => {
  test("match a full count after inserts, status changes, deletes and a form deletion", async () => {
    const d = deps();
    const formId = insertForm(d, s.accountId, { name: "Counted" });
    const ids = Array.from({ length: 5 }, (_, i) => insertMessage(d, s.accountId, { formId, formName: "Counted", priority: i % 2 ? "urgent" : "normal" }));
    await setStatus(ids[0], { status: "sent", sentAt: "2026-11-20T12:00:00Z" }, 200);
    await setStatus(ids[1], { status: "failed", failureReason: "rate-limit" }, 200);
    await setStatus(ids[1], { status: "queued" }, 200);
    await setStatus(ids[2], { status: "cancelled" }, 200);
    await expectStatus(await s.api(`/messages/${ids[3]}`, { method: "DELETE" }), 200);
    // The expected figures are the listed texts themselves, page by page (no count involved).
    const tally = async (query: string) => {
      const out = { queued: 0, sent: 0, failed: 0, cancelled: 0 } as Record<string, number>;
      for (let page = 1; ; page++) {
        const d = (await expectStatus(await s.api(`/messages?limit=100&page=${page}${query}`), 200)).data;
        for (const m of d.messages) out[m.status]++;
        if (d.messages.length < 100) return out;
      }
    };
    const check = async () => {
      const full = await tally("");
      const summary = (await expectStatus(await s.api("/messages"), 200)).data.summary;
      expect(summary).toEqual(full);
      const viaCounting = (await expectStatus(await s.api("/messages?createdAfter=2000-01-01"), 200)).data.summary;
      expect(viaCounting).toEqual(full);
      for (const p of ["urgent", "normal"]) {
        const one = await tally(`&priority=${p}`);
        expect((await expectStatus(await s.api(`/messages?priority=${p}`), 200)).data.summary).toEqual(one);
      }
    };
    await check();
    await expectStatus(await s.api(`/forms/${formId}`, { method: "DELETE" }), 200);
    await check();
  });
});
