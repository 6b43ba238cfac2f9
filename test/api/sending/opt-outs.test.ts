import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { insertContact, insertMessage, iso } from "../../helpers/fixtures";
import { cancelAllQueued as clearQueue, contactByPhone, messageOf, messagesToPhone, newApiKey, raiseApiLimits, listTotal, queueLength } from "../../helpers/reads";
import { newAccount } from "../../helpers/accounts";

const T0 = Date.parse("2026-11-23T09:00:00.000Z");

let s: TestServer;
let standardKey: string;
let formId: string;
const clock = { now: T0 };
beforeAll(async () => {
  s = await startTestServer({}, { clock: () => clock.now });
  standardKey = await newApiKey(s, "standard_access");
  raiseApiLimits(s);
  await expectStatus(await s.api("/account/profile", { method: "PUT", json: { name: "Acme Plumbing", country: "US", timeZone: "UTC" } }), 200);
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
});
afterAll(() => s.stop());

let phoneSeq = 1000;
const newPhone = () => `+1415555${phoneSeq++}`;
/** A phone's report of a received text, the recipe's way (key in the path). */
const inbound = (from: string, body: string, key = standardKey) =>
  fetch(`${s.base}/messages/${key}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body, receivedAt: clock.now }) });
const submit = (json: Record<string, unknown>, id = formId) =>
  fetch(`${s.base}/forms/${id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
// What the requests changed is read back through the API: contactOf and messagesTo find the
// contact by its number and its messages (each read whole: status, failureReason, metadata).
const contactOf = async (phone: string, key = s.adminKey): Promise<any> => contactByPhone(s, phone, key);
const messagesTo = (phone: string, key = s.adminKey) => messagesToPhone(s, phone, key);
const leaseAll = async () => (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 50 } }), 200)).data.messages as any[];
const cancelAllQueued = () => clearQueue(s);

describe("STOP through POST /v1/messages/<KEY>/inbound", () => {
  test("cancels every queued message to the number and queues exactly one urgent confirmation", async () => {
    const phone = newPhone();
    const web = (await expectStatus(await submit({ phoneNumber: phone, firstName: "Ann" }), 200)).data.messageId;
    const manual = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: phone, content: "Your quote is ready" } }), 201)).data.messageId;
    const other = newPhone();
    const untouched = (await expectStatus(await submit({ phoneNumber: other }), 200)).data.messageId;
    // One of them is leased to a phone already: it is cancelled too and leaves the lease table.
    const leased = (await leaseAll()).map((m) => m.id);
    expect(leased).toContain(web);

    const b = await expectStatus(await inbound(phone, "Stop!"), 201);
    expect(b.data.message.keyword).toBe("opt-out");
    const after = (await messagesTo(phone));
    expect(after.filter((m) => m.id === web || m.id === manual).map((m) => [m.status, m.failureReason])).toEqual([
      ["cancelled", "opted-out"],
      ["cancelled", "opted-out"],
    ]);
    const replies = after.filter((m) => m.status === "queued");
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ priority: "urgent", content: "You're unsubscribed from Acme Plumbing. Reply START to resubscribe." });
    expect(replies[0].metadata).toMatchObject({ source: "keyword-reply", keyword: "opt-out" });
    expect((await messageOf(s, untouched))!.status).toBe("queued");
    const c = (await contactOf(phone));
    expect(c.optedOut).toBe(true);
    expect(c.optedOutAt).toBe(iso(T0));
    // The API shows it.
    const api = (await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact;
    expect(api).toMatchObject({ optedOut: true, optedOutAt: iso(T0), status: "responded" });
    // The in-memory queue agrees: the phone gets the confirmation (and the other number's), never the cancelled ones.
    const next = (await leaseAll()).map((m) => m.id);
    expect(next).toContain(replies[0].id);
    expect(next).not.toContain(manual);
    // The queue holds just the texts the API lists as queued (leased ones among them): the cancelled ones left it.
    expect(await queueLength(s, { phoneNumber: other })).toBe(await listTotal(s, "/messages?status=queued"));
    await cancelAllQueued();
  });

  test("a second STOP queues no second confirmation; START re-enables with one optInReply", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "STOP"), 201);
    expect((await messagesTo(phone))).toHaveLength(1);
    await expectStatus(await inbound(phone, "stop"), 201);
    await expectStatus(await inbound(phone, "UNSUBSCRIBE"), 201);
    expect((await messagesTo(phone))).toHaveLength(1);
    await expectStatus(await inbound(phone, "Start"), 201);
    const c = (await contactOf(phone));
    expect([c.optedOut, c.optedOutAt]).toEqual([false, null]);
    const all = (await messagesTo(phone));
    expect(all).toHaveLength(2);
    expect(all[1].content).toBe("You're resubscribed to Acme Plumbing. Reply STOP to unsubscribe.");
    // Texting again works.
    await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: phone, content: "Welcome back" } }), 201);
    await cancelAllQueued();
  });

  test("STOP twice still confirms once: the second neither cancels the pending confirmation (leased or not) nor queues another", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "STOP"), 201);
    await expectStatus(await inbound(phone, "stop"), 201);
    let all = (await messagesTo(phone));
    expect(all.map((m) => [m.status, m.metadata.keyword])).toEqual([["queued", "opt-out"]]);
    // Leased to a phone already: a third opt-out keyword leaves it with its holder.
    expect((await leaseAll()).map((m) => m.id)).toContain(all[0].id);
    await expectStatus(await inbound(phone, "UNSUBSCRIBE"), 201);
    all = (await messagesTo(phone));
    expect(all.map((m) => m.status)).toEqual(["queued"]);
    expect((await messageOf(s, all[0].id))!.stage).toBe("with-phone");
    await cancelAllQueued();
  });

  test("STOP keeps a pending HELP answer and cancels a pending resubscribe confirmation (no longer true)", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "HELP"), 201);
    await expectStatus(await inbound(phone, "STOP"), 201);
    expect((await messagesTo(phone)).map((m) => [m.status, m.metadata.keyword])).toEqual([["queued", "help"], ["queued", "opt-out"]]);
    await cancelAllQueued();
    await expectStatus(await inbound(phone, "START"), 201);
    await expectStatus(await inbound(phone, "STOP"), 201);
    const last = (await messagesTo(phone)).slice(-2);
    expect(last.map((m) => [m.status, m.metadata.keyword])).toEqual([["cancelled", "opt-in"], ["queued", "opt-out"]]);
    await cancelAllQueued();
  });

  test("a STOP from a number the owner opted out gets the one confirmation; the next STOP none", async () => {
    const phone = newPhone();
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone, optedOut: true } }), 201)).data.contact;
    expect(c.optedOut).toBe(true);
    expect((await messagesTo(phone))).toHaveLength(0);
    await expectStatus(await inbound(phone, "STOP"), 201);
    await expectStatus(await inbound(phone, "STOP"), 201);
    expect((await messagesTo(phone)).map((m) => [m.status, m.metadata.keyword])).toEqual([["queued", "opt-out"]]);
    await cancelAllQueued();
  });

  test("'stop by later' and 'STOP 12345' are replies, not opt-outs; YES from a subscribed contact sends nothing", async () => {
    const phone = newPhone();
    await expectStatus(await submit({ phoneNumber: phone }), 200);
    for (const text of ["stop by later", "STOP 12345", "Yes"]) {
      const b = await expectStatus(await inbound(phone, text), 201);
      expect(b.data.message.keyword).toBe(text === "Yes" ? "opt-in" : null);
    }
    expect((await contactOf(phone)).optedOut).toBe(false);
    expect((await messagesTo(phone)).map((m) => m.status)).toEqual(["queued"]);
    await cancelAllQueued();
  });

  test("HELP is answered every time, also when opted out, and that answer is leased", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "STOP"), 201);
    await cancelAllQueued();
    await expectStatus(await inbound(phone, "help"), 201);
    const help = (await messagesTo(phone)).filter((m) => m.status === "queued");
    expect(help).toHaveLength(1);
    expect(help[0].content).toContain("Acme Plumbing");
    expect(help[0].content).toContain("Reply STOP to unsubscribe");
    expect((await leaseAll()).map((m) => m.id)).toEqual([help[0].id]);
    await cancelAllQueued();
  });

  test("the confirmation goes out even when the monthly quota is used up, and is counted", async () => {
    const acct = newAccount(s, { name: "Tiny Shop", monthlyQuota: 1 });
    const phone = newPhone();
    await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: newPhone(), content: "first" }, key: acct.apiKey }), 201);
    expect((await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: phone, content: "x" }, key: acct.apiKey }), 429)).code).toBe("QUOTA_EXCEEDED");
    await expectStatus(await inbound(phone, "STOP", acct.apiKey), 201);
    const reply = await messagesTo(phone, acct.apiKey);
    expect(reply.map((r) => r.content)).toEqual(["You're unsubscribed from Tiny Shop. Reply START to resubscribe."]);
    expect((await expectStatus(await s.api("/account", { key: acct.apiKey }), 200)).data.usage.messages).toBe(2);
    await cancelAllQueued();
  });

  test("a repeated report of the same STOP (same externalId) changes nothing", async () => {
    const phone = newPhone();
    const json = { from: phone, body: "STOP", receivedAt: clock.now, deviceId: "p1", externalId: "x-1" };
    await expectStatus(await s.api("/messages/inbound", { method: "POST", json, key: standardKey }), 201);
    await expectStatus(await s.api("/messages/inbound", { method: "POST", json, key: standardKey }), 200);
    expect((await messagesTo(phone))).toHaveLength(1);
    await cancelAllQueued();
  });
});

describe("suppression", () => {
  test("a webhook for an opted-out number saves the contact and submission, answers 200 with messageId null and queues nothing", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "STOP"), 201);
    await cancelAllQueued();
    const before = (await messagesTo(phone)).length;
    const b = await expectStatus(await submit({ phoneNumber: phone, firstName: "Bob" }), 200);
    expect(b.data).toMatchObject({ messageId: null, suppressed: "opted-out", queuePosition: null, estimatedDelivery: null });
    expect(b.data.contactId).toBe((await contactOf(phone)).id);
    expect((await contactOf(phone)).firstName).toBe("Bob");
    expect((await messagesTo(phone))).toHaveLength(before);
    expect((await expectStatus(await s.api(`/submissions?contactId=${b.data.contactId}`), 200)).data.submissions[0].messageId).toBeNull();
    // An Idempotency-Key replay gives the same answer.
    const k = { "Content-Type": "application/json", "Idempotency-Key": "sup-1" };
    const first = await (await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: k, body: JSON.stringify({ phoneNumber: phone }) })).text();
    const again = await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: k, body: JSON.stringify({ phoneNumber: phone }) });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(first);
  });

  test("a manual message to an opted-out number is 409 RECIPIENT_OPTED_OUT, by number or by contact", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "QUIT"), 201);
    await cancelAllQueued();
    const before = (await messagesTo(phone)).length;
    const a = await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: phone, content: "hi" } }), 409);
    expect(a.code).toBe("RECIPIENT_OPTED_OUT");
    const b = await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: (await contactOf(phone)).id, content: "hi" } }), 409);
    expect(b.code).toBe("RECIPIENT_OPTED_OUT");
    expect((await messagesTo(phone))).toHaveLength(before);
  });

  test("a lease never hands out a message whose recipient opted out after it was queued", async () => {
    const phone = newPhone();
    const id = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: phone, content: "Reminder", priority: "urgent" } }), 201)).data.messageId;
    const otherPhone = newPhone();
    const other = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: otherPhone, content: "Reminder" } }), 201)).data.messageId;
    // The opt-out lands in SQLite by another way than a STOP (another process, a restore):
    // nothing cancelled the message, the lease check must.
    const cid = insertContact(s.running.deps, s.accountId, { phone });
    s.running.deps.sqlite.query("UPDATE contacts SET opted_out = 1 WHERE id = ?").run(cid); // arrange: opted out with its text left queued (no request does one without the other)
    const got = await leaseAll();
    expect(got.map((m) => m.id)).toEqual([other]);
    expect(await messageOf(s, id)).toMatchObject({ status: "cancelled", failureReason: "opted-out" });
    expect(await leaseAll()).toEqual([]);
    await cancelAllQueued();
  });

  test("broadcasts skip opted-out contacts and count them as suppressed", async () => {
    const a = insertContact(s.running.deps, s.accountId, { phone: newPhone() });
    const b = insertContact(s.running.deps, s.accountId, { phone: newPhone() });
    for (const id of [a, b]) await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { tags: ["optout-test"] } }), 200);
    await expectStatus(await s.api(`/contacts/${b}`, { method: "PUT", json: { optedOut: true } }), 200);
    const r = await expectStatus(await s.api("/broadcasts?dryRun=true", { method: "POST", json: { name: "x", content: "Sale", segment: { tags: ["optout-test"] } } }), 200);
    expect([r.data.recipients, r.data.suppressed]).toEqual([1, 1]);
  });
});

describe("optedOut on contacts", () => {
  test("PUT optedOut: true cancels queued texts without a confirmation; false opts back in; bad values are 400", async () => {
    const phone = newPhone();
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone } }), 201)).data.contact;
    expect(c).toMatchObject({ optedOut: false, optedOutAt: null, consent: { source: "api", at: iso(clock.now), ipAddress: "127.0.0.1" } });
    const m = (await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: c.id, content: "x" } }), 201)).data.messageId;
    const u = (await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: true } }), 200)).data.contact;
    expect(u).toMatchObject({ optedOut: true, optedOutAt: iso(clock.now) });
    expect(await messageOf(s, m)).toMatchObject({ status: "cancelled", failureReason: "opted-out" });
    expect((await messagesTo(phone))).toHaveLength(1);
    const bad = await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: "yes" } }), 400);
    expect(bad.errors.map((e: any) => e.field)).toEqual(["optedOut"]);
    expect((await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: false } }), 200)).data.contact).toMatchObject({ optedOut: false, optedOutAt: null });
  });

  test("GET /contacts?optedOut= filters; a bad value is 400", async () => {
    const out = (await expectStatus(await s.api("/contacts?optedOut=true&limit=100"), 200)).data;
    expect(out.contacts.length).toBeGreaterThan(0);
    expect(out.contacts.every((c: any) => c.optedOut === true)).toBe(true);
    const inn = (await expectStatus(await s.api("/contacts?optedOut=false&limit=100"), 200)).data;
    expect(inn.contacts.every((c: any) => c.optedOut === false)).toBe(true);
    expect(out.pagination.total + inn.pagination.total).toBe((await expectStatus(await s.api("/contacts"), 200)).data.pagination.total);
    expect((await expectStatus(await s.api("/contacts?optedOut=maybe"), 400)).code).toBe("VALIDATION_ERROR");
  });

  test("consent: manual on request, only on create", async () => {
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: newPhone(), consent: { source: "manual" } } }), 201)).data.contact;
    expect(c.consent.source).toBe("manual");
    expect((await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: newPhone(), consent: { source: "webhook" } } }), 400)).errors[0].field).toBe("consent");
    expect((await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { consent: { source: "api" } } }), 400)).errors[0].field).toBe("consent");
  });

  test("exports carry optedOut/optedOutAt; an import sets an opt-out, an empty cell never clears it, false does", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "STOP"), 201);
    await cancelAllQueued();
    const csv = await (await s.api(`/contacts/export?format=csv&fields=phoneNumber,optedOut,optedOutAt`)).text();
    expect(csv.split("\r\n")[0]).toBe("phoneNumber,optedOut,optedOutAt");
    expect(csv).toContain(`${phone},true,${iso(T0)}`);
    const json = JSON.parse(await (await s.api(`/contacts/export?format=json&optedOut=true`)).text());
    if (!Array.isArray(json)) throw new Error(JSON.stringify(json));
    expect(json.every((c: any) => c.optedOut === true)).toBe(true);

    const fresh = newPhone();
    const plain = newPhone();
    const imp = (body: string) => s.api("/contacts/import", { method: "POST", body, headers: { "Content-Type": "text/csv" } });
    const r = (await expectStatus(await imp(`phoneNumber,optedOut,optedOutAt\n${fresh},true,2026-01-02T03:04:05Z\n${plain},,\n${phone},,\n`), 200)).data;
    expect(r).toMatchObject({ created: 2, updated: 1, errors: [] });
    expect([((await contactOf(fresh))).optedOut, ((await contactOf(fresh))).optedOutAt]).toEqual([true, "2026-01-02T03:04:05.000Z"]);
    expect(((await contactOf(fresh))).consent).toMatchObject({ source: "import" });
    expect((await contactOf(plain)).optedOut).toBe(false);
    expect((await contactOf(phone)).optedOut).toBe(true);
    await expectStatus(await imp(`phoneNumber,optedOut\n${phone},false\n${plain},maybe\n`), 200).then((b) => {
      expect(b.data.updated).toBe(1);
      expect(b.data.errors).toEqual([{ row: 3, field: "optedOut", message: expect.any(String) }]);
    });
    expect((await contactOf(phone)).optedOut).toBe(false);
  });
});

describe("consent", () => {
  test("a webhook contact records source webhook, the form and the address", async () => {
    const phone = newPhone();
    const b = await expectStatus(await submit({ phoneNumber: phone }), 200);
    const c = (await expectStatus(await s.api(`/contacts/${b.data.contactId}`), 200)).data.contact;
    expect(c.consent).toEqual({ source: "webhook", formId, at: iso(clock.now), ipAddress: "127.0.0.1" });
    await cancelAllQueued();
  });

  test("settings.consentField: no truthy value → saved, no-consent, nothing queued; ticked → queued", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { consentField: "smsConsent" } }) }), 201)).data.form;
    expect(f.settings.consentField).toBe("smsConsent");
    for (const v of [undefined, "", "off", "false"]) {
      const phone = newPhone();
      const b = await expectStatus(await submit({ phoneNumber: phone, ...(v === undefined ? {} : { smsConsent: v }) }, f.id), 200);
      expect(b.data).toMatchObject({ messageId: null, suppressed: "no-consent" });
      expect((await contactOf(phone))).toBeDefined();
      expect((await messagesTo(phone))).toHaveLength(0);
    }
    const form = new URLSearchParams({ phoneNumber: newPhone(), smsConsent: "on" });
    const ok = await fetch(`${s.base}/forms/${f.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: form.toString() });
    const body = await expectStatus(ok, 200);
    expect(typeof body.data.messageId).toBe("string");
    expect(body.data.suppressed).toBeUndefined();
    expect((await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { consentField: "has space" } }) }), 400)).errors[0].field).toBe("settings.consentField");
    await cancelAllQueued();
  });
});

describe("GET/PUT /v1/account/settings", () => {
  test("defaults; admin only", async () => {
    const b = (await expectStatus(await s.api("/account/settings"), 200)).data;
    expect(b.settings.optOutKeywords).toContain("STOP");
    expect(b.preview.optOutReply).toBe("You're unsubscribed from Acme Plumbing. Reply START to resubscribe.");
    expect(b.updatedAt).toBeNull();
    expect((await expectStatus(await s.api("/account/settings", { key: standardKey }), 403)).code).toBe("PERMISSION_ERROR");
    expect((await expectStatus(await s.api("/account/settings", { key: standardKey, method: "PUT", json: {} }), 403)).code).toBe("PERMISSION_ERROR");
  });

  test("PUT changes what a keyword does and what is replied; 400 for bad values changes nothing", async () => {
    const bad = await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["😀"], helpReply: "" } }), 400);
    expect(bad.errors.map((e: any) => e.field).sort()).toEqual(["helpReply", "optOutKeywords"]);
    expect((await expectStatus(await s.api("/account/settings"), 200)).data.updatedAt).toBeNull();
    const put = (await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["STOP", "ARRET"], optOutReply: "{{accountName}}: done, no more texts." } }), 200)).data;
    expect(put.settings.optOutKeywords).toEqual(["STOP", "ARRET"]);
    expect(put.preview.optOutReply).toBe("Acme Plumbing: done, no more texts.");
    const phone = newPhone();
    await expectStatus(await inbound(phone, "arret"), 201);
    expect((await messagesTo(phone)).map((m) => m.content)).toEqual(["Acme Plumbing: done, no more texts."]);
    // UNSUBSCRIBE is no longer a keyword of this account.
    const phone2 = newPhone();
    await expectStatus(await inbound(phone2, "unsubscribe"), 201);
    expect((await contactOf(phone2)).optedOut).toBe(false);
    // null restores the defaults.
    const reset = (await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: null, optOutReply: null } }), 200)).data;
    expect(reset.settings.optOutKeywords).toContain("UNSUBSCRIBE");
    await cancelAllQueued();
  });
});
