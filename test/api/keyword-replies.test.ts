/**
 * Keyword replies (docs/api-decisions.md, "Keyword replies") and keyword phrases in the
 * STOP/START/HELP lists ("Keyword phrases"), through the API and the phone's inbound report.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestServer, expectStatus, tempDir, type TestServer } from "../helpers/server";
import { eventSink, type EventSink } from "../helpers/event-sink";
import { contactByPhone, messagesToPhone, newApiKey, raiseApiLimits } from "../helpers/reads";
import { newAccount, operatorKey } from "../helpers/accounts";

const T0 = Date.parse("2026-11-23T09:00:00.000Z");
const HOUR = 3_600_000;

let s: TestServer;
let standardKey: string;
const clock = { now: T0 };
beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true }, { clock: () => clock.now });
  standardKey = await newApiKey(s, "standard_access");
  raiseApiLimits(s);
  await expectStatus(await s.api("/account/profile", { method: "PUT", json: { name: "Acme Plumbing", country: "US", timeZone: "UTC" } }), 200);
  // The owner's receiver: the contact events are read as it gets them.
  sink = await eventSink(s);
});
afterAll(async () => {
  sink.stop();
  await s.stop();
});
let sink: EventSink;
/** The contact's contact.created / contact.updated events, as the receiver got them, oldest first. */
const contactEvents = async (contactId: string, types = ["contact.created", "contact.updated"]) =>
  (await sink.events()).filter((e) => types.includes(e.type) && e.data.contact?.id === contactId);

let phoneSeq = 2000;
const newPhone = () => `+1415555${phoneSeq++}`;
const inbound = (from: string, body: string, key = standardKey, base = s.base) =>
  fetch(`${base}/messages/${key}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body, receivedAt: clock.now }) });
// What a text or a request changed is read back through the API; the outbox's event payloads (what
// an endpoint will be sent) are read in SQL, as no API lists them before they are delivered.
const messagesTo = (phone: string) => messagesToPhone(s, phone);
const contactOf = async (phone: string): Promise<any> => contactByPhone(s, phone);
const create = (json: unknown, key?: string) => s.api("/keyword-replies", { method: "POST", json, key });
/** The account's rules, as the list shows them. */
const count = async () => (await expectStatus(await s.api("/keyword-replies"), 200)).data.keywordReplies.length as number;

describe("/v1/keyword-replies: admin, tenant isolated, every bad field named", () => {
  test("create, read, list, change, switch off and delete", async () => {
    const b = await expectStatus(await create({ keywords: ["hours", "Open!"], reply: "{{accountName}}: we're open 9–5, Mon–Sat.", addTags: ["asked-hours"] }), 201);
    const r = b.data.keywordReply;
    expect(r).toMatchObject({ keywords: ["HOURS", "OPEN"], reply: "{{accountName}}: we're open 9–5, Mon–Sat.", preview: "Acme Plumbing: we're open 9–5, Mon–Sat.", addTags: ["asked-hours"], setStatus: null, isActive: true });
    expect((await expectStatus(await s.api(`/keyword-replies/${r.id}`), 200)).data.keywordReply).toEqual(r);
    expect((await expectStatus(await s.api("/keyword-replies"), 200)).data.keywordReplies.map((x: any) => x.id)).toContain(r.id);
    const put = (await expectStatus(await s.api(`/keyword-replies/${r.id}`, { method: "PUT", json: { isActive: false, setStatus: "converted" } }), 200)).data.keywordReply;
    expect(put).toMatchObject({ keywords: ["HOURS", "OPEN"], isActive: false, setStatus: "converted", addTags: ["asked-hours"] });
    await expectStatus(await s.api(`/keyword-replies/${r.id}`, { method: "DELETE" }), 200);
    expect((await expectStatus(await s.api(`/keyword-replies/${r.id}`), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
    expect((await expectStatus(await s.api(`/keyword-replies/${r.id}`, { method: "DELETE" }), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
    expect((await expectStatus(await s.api("/keyword-replies/not-an-id", { method: "PUT", json: { isActive: true } }), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
  });

  test("a standard key is refused; another account sees and changes nothing", async () => {
    expect((await expectStatus(await s.api("/keyword-replies", { key: standardKey }), 403)).code).toBe("PERMISSION_ERROR");
    expect((await expectStatus(await create({ keywords: ["PRICES"], reply: "x" }, standardKey), 403)).code).toBe("PERMISSION_ERROR");
    const mine = (await expectStatus(await create({ keywords: ["PARKING"], reply: "Park round the back." }), 201)).data.keywordReply;
    const other = newAccount(s, { name: "Bakery" });
    expect((await expectStatus(await s.api("/keyword-replies", { key: other.apiKey }), 200)).data.keywordReplies).toEqual([]);
    expect((await expectStatus(await s.api(`/keyword-replies/${mine.id}`, { key: other.apiKey }), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
    expect((await expectStatus(await s.api(`/keyword-replies/${mine.id}`, { key: other.apiKey, method: "PUT", json: { reply: "hacked" } }), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
    expect((await expectStatus(await s.api(`/keyword-replies/${mine.id}`, { key: other.apiKey, method: "DELETE" }), 404)).code).toBe("KEYWORD_REPLY_NOT_FOUND");
    // The same keyword is free in another account, and its texts are answered by its own rule only.
    await expectStatus(await create({ keywords: ["PARKING"], reply: "Street parking only." }, other.apiKey), 201);
    const otherStd = operatorKey(s, other.account.id, "standard_access").apiKey;
    const phone = newPhone();
    await expectStatus(await inbound(phone, "parking", otherStd), 201);
    expect((await messagesToPhone(s, phone, other.apiKey)).map((m) => m.content)).toEqual(["Street parking only."]);
    expect(await messagesTo(phone)).toEqual([]);
    expect((await expectStatus(await s.api(`/keyword-replies/${mine.id}`), 200)).data.keywordReply.reply).toBe("Park round the back.");
    await expectStatus(await s.api(`/keyword-replies/${mine.id}`, { method: "DELETE" }), 200);
  });

  test("bad bodies: 400 naming each field, nothing saved", async () => {
    const before = (await count());
    const bad = await expectStatus(await create({ keywords: [], reply: "", addTags: "vip", setStatus: "gold", isActive: 1, extra: true }), 400);
    expect(bad.code).toBe("VALIDATION_ERROR");
    expect(bad.errors.map((e: any) => e.field).sort()).toEqual(["addTags", "extra", "isActive", "keywords", "reply", "setStatus"]);
    expect((await expectStatus(await create({ reply: "x" }), 400)).errors.map((e: any) => e.field)).toEqual(["keywords"]);
    expect((await expectStatus(await create({ keywords: ["😀"], reply: "x" }), 400)).errors.map((e: any) => e.field)).toEqual(["keywords"]);
    for (const body of ["[", "null", "[]", '"x"']) {
      const r = await s.api("/keyword-replies", { method: "POST", body, headers: { "Content-Type": "application/json" } });
      expect(r.status).toBe(400);
    }
    expect((await count())).toBe(before);
  });

  test("a STOP, START or HELP keyword, or another reply's, is refused in plain words", async () => {
    const stop = await expectStatus(await create({ keywords: ["HOURS", "stop"], reply: "x" }), 400);
    expect(stop.errors).toEqual([{ field: "keywords", message: expect.stringContaining('"STOP" already stops all texts') }]);
    expect((await expectStatus(await create({ keywords: ["yes"], reply: "x" }), 400)).errors[0].message).toContain("starts texts again");
    expect((await expectStatus(await create({ keywords: ["Info"], reply: "x" }), 400)).errors[0].message).toContain("help reply");
    const a = (await expectStatus(await create({ keywords: ["MENU"], reply: "See our menu" }), 201)).data.keywordReply;
    expect((await expectStatus(await create({ keywords: ["menu"], reply: "x" }), 400)).errors[0].message).toContain("another reply");
    const b = (await expectStatus(await create({ keywords: ["PRICES"], reply: "From $50" }), 201)).data.keywordReply;
    expect((await expectStatus(await s.api(`/keyword-replies/${b.id}`, { method: "PUT", json: { keywords: ["PRICES", "MENU"] } }), 400)).errors[0].field).toBe("keywords");
    // A reply keeps its own keywords when saved again.
    await expectStatus(await s.api(`/keyword-replies/${a.id}`, { method: "PUT", json: { keywords: ["menu", "MENUS"] } }), 200);
    // The other way: the Settings lists refuse a keyword reply's keyword.
    const put = await expectStatus(await s.api("/account/settings", { method: "PUT", json: { helpKeywords: ["HELP", "MENU"] } }), 400);
    expect(put.errors[0]).toMatchObject({ field: "helpKeywords" });
    expect((await expectStatus(await s.api("/account/settings"), 200)).data.settings.helpKeywords).toEqual(["HELP", "INFO"]);
    for (const r of [a, b]) await expectStatus(await s.api(`/keyword-replies/${r.id}`, { method: "DELETE" }), 200);
  });

  test("everyday words need confirmCommonWords: 409 first, nothing saved", async () => {
    const before = (await count());
    const r = await expectStatus(await create({ keywords: ["OK", "thanks"], reply: "You're welcome!" }), 409);
    expect(r.code).toBe("COMMON_WORDS_UNCONFIRMED");
    expect(r.details.words).toEqual({ keywords: ["OK", "THANKS"] });
    expect((await count())).toBe(before);
    const ok = (await expectStatus(await create({ keywords: ["OK", "thanks"], reply: "You're welcome!", confirmCommonWords: true }), 201)).data.keywordReply;
    // Saving it again without adding one does not ask again.
    await expectStatus(await s.api(`/keyword-replies/${ok.id}`, { method: "PUT", json: { reply: "Any time!" } }), 200);
    await expectStatus(await s.api(`/keyword-replies/${ok.id}`, { method: "DELETE" }), 200);
  });
});

describe("answering a text", () => {
  let rule: any;
  beforeAll(async () => {
    rule = (await expectStatus(await create({ keywords: ["HOURS", "when are you open"], reply: "We're open 9–5, Mon–Sat.", addTags: ["asked-hours"], setStatus: "converted" }), 201)).data.keywordReply;
  });

  test("the keyword (any case, punctuation around it) is answered once, queued high; tags and status go to the contact with contact.updated", async () => {
    const phone = newPhone();
    const b = await expectStatus(await inbound(phone, "Hours?"), 201);
    expect(b.data.message.keyword).toBeNull();
    const sent = (await messagesTo(phone));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ status: "queued", priority: "high", content: "We're open 9–5, Mon–Sat." });
    expect(sent[0].metadata).toMatchObject({ source: "keyword-rule", keywordReplyId: rule.id });
    const c = (await contactOf(phone));
    expect(c.tags).toEqual(["asked-hours"]);
    expect(c.status).toBe("converted");
    const events = await contactEvents(c.id);
    expect(events.length).toBeGreaterThan(0);
    expect(events.at(-1)!.data.contact).toMatchObject({ tags: ["asked-hours"], status: "converted" });
    // The API shows it on the contact.
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact).toMatchObject({ tags: ["asked-hours"], status: "converted" });
  });

  test("a known contact keeps its tags, gains the rule's, and contact.updated fires", async () => {
    const phone = newPhone();
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone, tags: ["vip"] } }), 201)).data.contact;
    await expectStatus(await inbound(phone, "WHEN ARE YOU OPEN?"), 201);
    expect((await expectStatus(await s.api(`/contacts/${c.id}`), 200)).data.contact).toMatchObject({ tags: ["vip", "asked-hours"], status: "converted" });
    const upd = (await contactEvents(c.id, ["contact.updated"])).at(-1);
    expect(upd?.data.contact.tags).toEqual(["vip", "asked-hours"]);
  });

  test("once per rule per contact per hour; again after the hour", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "hours"), 201);
    clock.now += 30 * 60_000;
    await expectStatus(await inbound(phone, "HOURS"), 201);
    expect((await messagesTo(phone))).toHaveLength(1);
    clock.now += 31 * 60_000;
    await expectStatus(await inbound(phone, "hours!"), 201);
    expect((await messagesTo(phone))).toHaveLength(2);
    clock.now += HOUR;
  });

  test("two texts arriving together get one reply", async () => {
    const phone = newPhone();
    const all = await Promise.all([1, 2, 3, 4].map(() => inbound(phone, "hours")));
    for (const r of all) expect(r.status).toBe(201);
    expect((await messagesTo(phone))).toHaveLength(1);
  });

  test("other words around the keyword make it a sentence: no reply", async () => {
    const phone = newPhone();
    for (const t of ["hours please", "what are your hours?", "HOURS HOURS", "open"]) await expectStatus(await inbound(phone, t), 201);
    expect((await messagesTo(phone))).toEqual([]);
  });

  test("never to an opted-out number; a reply still queued is cancelled by STOP", async () => {
    const phone = newPhone();
    await expectStatus(await inbound(phone, "hours"), 201);
    const [first] = (await messagesTo(phone));
    await expectStatus(await inbound(phone, "STOP"), 201);
    expect((await messagesTo(phone)).find((m) => m.id === first.id)).toMatchObject({ status: "cancelled", failureReason: "opted-out" });
    clock.now += 2 * HOUR;
    await expectStatus(await inbound(phone, "hours"), 201);
    const after = (await messagesTo(phone));
    expect(after.filter((m) => m.metadata.source === "keyword-rule" && m.status === "queued")).toEqual([]);
    // A number the owner opted out by hand gets nothing either.
    const phone2 = newPhone();
    const c = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone2, optedOut: true } }), 201)).data.contact;
    await expectStatus(await inbound(phone2, "hours"), 201);
    expect((await messagesTo(phone2))).toEqual([]);
    expect(c.id).toBeTruthy();
  });

  test("a rule switched off answers nothing", async () => {
    await expectStatus(await s.api(`/keyword-replies/${rule.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const phone = newPhone();
    await expectStatus(await inbound(phone, "hours"), 201);
    expect((await messagesTo(phone))).toEqual([]);
    await expectStatus(await s.api(`/keyword-replies/${rule.id}`, { method: "PUT", json: { isActive: true } }), 200);
  });

  test("STOP, START and HELP always win: a help keyword added later is answered as help", async () => {
    // Settings refuse a reply's keyword; a text that is a help keyword gets the help reply only.
    const phone = newPhone();
    await expectStatus(await inbound(phone, "help"), 201);
    expect((await messagesTo(phone)).map((m) => m.metadata.source)).toEqual(["keyword-reply"]);
  });
});

describe("restart: the hour is read from stored messages", () => {
  test("a text after a restart within the hour gets no second reply", async () => {
    const dir = tempDir();
    const c = { now: T0 };
    let a = await startTestServer({}, { clock: () => c.now, dir });
    const key = a.adminKey;
    const accountId = a.accountId;
    try {
      await expectStatus(await a.api("/keyword-replies", { method: "POST", json: { keywords: ["HOURS"], reply: "9 to 5" } }), 201);
      await expectStatus(await inbound("+14155550999", "hours", key, a.base), 201);
      await a.stop();
      c.now += 10 * 60_000;
      a = await startTestServer({}, { clock: () => c.now, dir });
      a.adminKey = key;
      a.accountId = accountId;
      await expectStatus(await inbound("+14155550999", "hours", key, a.base), 201);
      expect(await messagesToPhone(a, "+14155550999", key)).toHaveLength(1);
    } finally {
      await a.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("keyword phrases in Settings", () => {
  test("a multi-word opt-out phrase stays one phrase, and a text of exactly it opts out", async () => {
    const put = (await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["STOP", "stop texting me"] } }), 200)).data;
    expect(put.settings.optOutKeywords).toEqual(["STOP", "STOP TEXTING ME"]);
    expect((await expectStatus(await s.api("/account/settings"), 200)).data.settings.optOutKeywords).toEqual(["STOP", "STOP TEXTING ME"]);
    const phone = newPhone();
    await expectStatus(await inbound(phone, "me"), 201);
    await expectStatus(await inbound(phone, "texting"), 201);
    expect((await contactOf(phone)).optedOut).toBe(false);
    const b = await expectStatus(await inbound(phone, "Stop texting me!"), 201);
    expect(b.data.message.keyword).toBe("opt-out");
    expect((await contactOf(phone)).optedOut).toBe(true);
    const phone2 = newPhone();
    await expectStatus(await inbound(phone2, "stop by later"), 201);
    expect((await contactOf(phone2)).optedOut).toBe(false);
    await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: null } }), 200);
  });

  test("everyday words in a list: 409 COMMON_WORDS_UNCONFIRMED unless confirmed; nothing changes", async () => {
    const r = await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["STOP", "me", "ok"], optOutReply: "Bye" } }), 409);
    expect(r.code).toBe("COMMON_WORDS_UNCONFIRMED");
    expect(r.details.words).toEqual({ optOutKeywords: ["ME", "OK"] });
    expect(r.errors).toEqual([{ field: "optOutKeywords", message: expect.stringContaining('"ME"') }]);
    const now = (await expectStatus(await s.api("/account/settings"), 200)).data.settings;
    expect(now.optOutKeywords).not.toContain("ME");
    expect(now.optOutReply).not.toBe("Bye");
    // YES is a default opt-in word: never too common for that list.
    await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optInKeywords: ["START", "YES"] } }), 200);
    expect((await expectStatus(await s.api("/account/settings", { method: "PUT", json: { confirmCommonWords: "yes" } }), 400)).errors[0].field).toBe("confirmCommonWords");
    const ok = (await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["STOP", "me"], confirmCommonWords: true } }), 200)).data;
    expect(ok.settings.optOutKeywords).toEqual(["STOP", "ME"]);
    // Saving a reply later does not ask again about the list confirmed before.
    await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: ["STOP", "ME"], optOutReply: "Done." } }), 200);
    await expectStatus(await s.api("/account/settings", { method: "PUT", json: { optOutKeywords: null, optInKeywords: null, optOutReply: null } }), 200);
  });
});
