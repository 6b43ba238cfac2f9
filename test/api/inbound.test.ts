import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertMessage, iso } from "../helpers/fixtures";
import { contactOf as contactShown, listTotal, newApiKey } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

const T0 = Date.parse("2026-11-23T09:00:00.000Z");

let s: TestServer;
let standardKey: string;
const clock = { now: T0 };
beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
  standardKey = await newApiKey(s, "standard_access");
});
afterAll(() => s.stop());

/** The recipe's way: the key in the path, no Authorization header. */
const postInbound = (json: unknown, key = standardKey) =>
  fetch(`${s.base}/messages/${key}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
/** The contact as GET /v1/contacts/:id shows it. */
const contactOf = async (id: string) => (await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact;
/** A contact as another account's key sees it. */
const contactRow = async (id: string, key: string) => (await contactShown(s, id, key))!;
/** The received texts the account holds, as GET /inbound counts them. */
const inboundCount = () => listTotal(s, "/inbound");

describe("POST /v1/messages/<KEY>/inbound", () => {
  test("an unknown sender becomes a contact with status responded", async () => {
    const b = await expectStatus(await postInbound({ from: "(415) 555-0101", body: "Hi, is the shop open?", receivedAt: T0 - 60_000, deviceId: "pixel-7" }), 201);
    const m = b.data.message;
    expect(b.data.duplicate).toBe(false);
    expect(m).toMatchObject({ direction: "inbound", from: "+14155550101", body: "Hi, is the shop open?", receivedAt: iso(T0 - 60_000), deviceId: "pixel-7", externalId: null, createdAt: iso(T0) });
    expect(await contactOf(m.contactId)).toMatchObject({ status: "responded", lastResponseAt: iso(T0 - 60_000), phoneNumber: "+14155550101" });
    const c = await expectStatus(await s.api(`/contacts/${m.contactId}`), 200);
    expect(c.data.contact).toMatchObject({ phoneNumber: "+14155550101", status: "responded", lastResponseAt: iso(T0 - 60_000) });
  });

  test("a known contact is linked; new and contacted move to responded, converted stays", async () => {
    for (const [status, after] of [["new", "responded"], ["contacted", "responded"], ["responded", "responded"], ["converted", "converted"]]) {
      const phone = `+1415555${Math.floor(1000 + Math.random() * 8999)}`;
      const id = insertContact(s.running.deps, s.accountId, { phone, status });
      const b = await expectStatus(await postInbound({ from: phone, body: "yes", receivedAt: T0 }), 201);
      expect(b.data.message.contactId).toBe(id);
      expect(await contactOf(id)).toMatchObject({ status: after, lastResponseAt: iso(T0) });
    }
  });

  test("lastResponseAt never moves back for an older text reported late", async () => {
    const b = await expectStatus(await postInbound({ from: "+14155550102", body: "second", receivedAt: T0 }), 201);
    await expectStatus(await postInbound({ from: "+14155550102", body: "first", receivedAt: T0 - 3_600_000 }), 201);
    expect((await contactOf(b.data.message.contactId)).lastResponseAt).toBe(iso(T0));
  });

  test("the Bearer form works too, and a repeat of (deviceId, externalId) is stored once", async () => {
    const json = { from: "+14155550103", body: "repeat me", receivedAt: T0, deviceId: "moto", externalId: "sms-41" };
    const first = await expectStatus(await s.api("/messages/inbound", { method: "POST", json, key: standardKey }), 201);
    const before = await inboundCount();
    const again = await expectStatus(await postInbound(json), 200);
    expect(again.data).toEqual({ message: first.data.message, duplicate: true });
    expect((await inboundCount())).toBe(before);
    // The same externalId from another phone is another text.
    await expectStatus(await postInbound({ ...json, deviceId: "pixel" }), 201);
    expect((await inboundCount())).toBe(before + 1);
  });

  test("bad input: 400 naming each field, nothing stored", async () => {
    const before = await inboundCount();
    const b = await expectStatus(await postInbound({ from: "VERIFY", body: 12, receivedAt: "later" }), 400);
    expect(b.code).toBe("VALIDATION_ERROR");
    expect(b.errors.map((e: any) => e.field).sort()).toEqual(["body", "from", "receivedAt"]);
    const missing = await expectStatus(await postInbound({ body: "no sender" }), 400);
    expect(missing.code).toBe("VALIDATION_ERROR");
    const notJson = await fetch(`${s.base}/messages/${standardKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{nope" });
    expect(notJson.status).toBe(400);
    expect((await inboundCount())).toBe(before);
  });

  test("a wrong or missing key is 401 and stores nothing", async () => {
    const before = await inboundCount();
    const b = await expectStatus(await postInbound({ from: "+14155550104", body: "x" }, "txwire_sk_" + "0".repeat(32)), 401);
    expect(b.code).toBe("AUTHENTICATION_ERROR");
    const none = await expectStatus(await fetch(`${s.base}/messages/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }), 401);
    expect(none.code).toBe("AUTHENTICATION_ERROR");
    expect((await inboundCount())).toBe(before);
  });

  test("another account's contact with the same number is not touched", async () => {
    const other = newAccount(s, { name: "Other shop" });
    const theirs = insertContact(s.running.deps, other.account.id, { phone: "+14155550105", status: "new" });
    const b = await expectStatus(await postInbound({ from: "+14155550105", body: "hello" }), 201);
    expect(b.data.message.contactId).not.toBe(theirs);
    expect((await contactRow(theirs, other.apiKey)).status).toBe("new");
  });
});

describe("GET /v1/inbound", () => {
  test("newest first, filtered by contact and date, paginated", async () => {
    clock.now = T0 + 86_400_000;
    const phone = "+14155550199";
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.now += 1_000;
      ids.push((await expectStatus(await postInbound({ from: phone, body: `n${i}` }), 201)).data.message.id);
    }
    const contactId = (await expectStatus(await s.api(`/inbound?contactId=${(await expectStatus(await postInbound({ from: phone, body: "n3" }), 201)).data.message.contactId}&limit=2`), 200)).data;
    expect(contactId.pagination).toEqual({ total: 4, page: 1, limit: 2, totalPages: 2 });
    expect(contactId.messages.map((m: any) => m.body)).toEqual(["n3", "n2"]);
    const recent = (await expectStatus(await s.api(`/inbound?createdAfter=${iso(T0 + 86_400_000 + 2_000)}`), 200)).data;
    expect(recent.messages.map((m: any) => m.body)).toEqual(["n3", "n2", "n1"]);
    const older = (await expectStatus(await s.api(`/inbound?createdBefore=${iso(T0 + 86_400_000)}`), 200)).data;
    expect(older.messages.every((m: any) => m.createdAt < iso(T0 + 86_400_000))).toBe(true);
    expect(older.pagination.total).toBeGreaterThan(0);
    // Standard keys may read it.
    await expectStatus(await s.api("/inbound", { key: standardKey }), 200);
  });

  test("unknown or malformed contact ids match nothing; bad dates and pages are 400", async () => {
    expect((await expectStatus(await s.api(`/inbound?contactId=${crypto.randomUUID()}`), 200)).data.pagination.total).toBe(0);
    expect((await expectStatus(await s.api(`/inbound?contactId=nope`), 200)).data.messages).toEqual([]);
    for (const q of ["createdAfter=yesterday", "createdBefore=2026-02-30", "page=0", "limit=101", "limit=x"]) {
      expect((await expectStatus(await s.api(`/inbound?${q}`), 400)).code).toBe("VALIDATION_ERROR");
    }
  });
});

describe("GET /v1/contacts/<id>/messages", () => {
  test("shows both directions, newest first, with direction", async () => {
    clock.now = T0 + 2 * 86_400_000;
    const phone = "+14155550177";
    const contactId = insertContact(s.running.deps, s.accountId, { phone, status: "contacted" });
    const out = insertMessage(s.running.deps, s.accountId, { contactId, phone, content: "Thanks for your order", status: "sent", createdAt: iso(clock.now - 10_000), sentAt: iso(clock.now - 9_000) });
    const inb = (await expectStatus(await postInbound({ from: phone, body: "When does it ship?", receivedAt: clock.now - 5_000 }), 201)).data.message;
    const b = (await expectStatus(await s.api(`/contacts/${contactId}/messages`), 200)).data;
    expect(b.total).toBe(2);
    expect(b.messages).toEqual([
      { id: inb.id, direction: "inbound", content: "When does it ship?", status: "received", sentAt: null, formName: null, createdAt: iso(clock.now), receivedAt: iso(clock.now - 5_000) },
      expect.objectContaining({ id: out, direction: "outbound", content: "Thanks for your order", status: "sent" }),
    ]);
    const page2 = (await expectStatus(await s.api(`/contacts/${contactId}/messages?limit=1&page=2`), 200)).data;
    expect(page2.messages.map((m: any) => m.id)).toEqual([out]);
  });

  test("deleting the contact deletes its received texts", async () => {
    const b = (await expectStatus(await postInbound({ from: "+14155550166", body: "bye" }), 201)).data.message;
    await expectStatus(await s.api(`/contacts/${b.contactId}`, { method: "DELETE" }), 200);
    expect((await expectStatus(await s.api("/inbound?limit=100"), 200)).data.messages.map((m: any) => m.id)).not.toContain(b.id);
  });
});

// InboundService called directly (the SMSGate path) is a service's contract: test/services/inbound.test.ts.
