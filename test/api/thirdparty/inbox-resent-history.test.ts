/**
 * Texts a phone sends again after an SMSGate inbox export or refresh are history: stored, shown and
 * deduplicated, but they take no action — no keyword handling, no auto-reply or keyword reply, no
 * automation stop, no unread bump — while new texts, even during an export, act as ever
 * (docs/api-decisions.md, "SMSGate: signing key in the settings document, and re-sent history").
 * Through the real server and the SMSGate phone emulator.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator, gsonDate } from "../../helpers/smsgate-emulator";
import { contactByPhone, messagesToPhone } from "../../helpers/reads";

let ts: TestServer;
const phones: SmsGateEmulator[] = [];
/** The events the subscribed endpoint received, as an owner's receiver sees them. */
const delivered: any[] = [];
const rx = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async (req) => {
    delivered.push(await req.json());
    return new Response("ok");
  },
});
const DAY = 86_400_000;

beforeAll(async () => {
  ts = await startTestServer({ allowPrivateWebhookUrls: true });
  // Events are stored only for a subscribed endpoint.
  await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", json: { url: `http://127.0.0.1:${rx.port}/`, events: ["inbound.received"], allowInsecure: true } }), 201);
});
afterAll(async () => {
  for (const p of phones) p.disconnect();
  await ts.stop();
  rx.stop(true);
});

const exportInbox = (json: Record<string, unknown>, path = "/inbox/export") =>
  fetch(`${ts.url}/3rdparty/v1${path}`, {
    method: "POST",
    headers: { Authorization: `Basic ${btoa(`${ts.accountId}:${ts.adminKey}`)}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

async function phone(connect = true) {
  const token = (await expectStatus(await ts.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.token;
  const p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, behaviour: "hold" });
  await p.register(token);
  await p.loadSettings();
  p.webhooks = p.webhooks.map((w) => ({ ...w, url: w.url.replace(/^https:/, "http:") })); // the test server speaks plain HTTP
  if (connect) await p.connect();
  phones.push(p);
  return p;
}

let seq = 0;
/** The phone reports a text it received at `receivedAt` (epoch ms). */
const received = async (p: SmsGateEmulator, from: string, message: string, receivedAt: number, messageId = `in-${++seq}`) => {
  await expectStatus(await p.webhook("sms:received", { messageId, message, phoneNumber: from, simNumber: 1, receivedAt: gsonDate(receivedAt) }), 200);
  return messageId;
};

let numberSeq = 300;
const newNumber = () => `+1415555${String(numberSeq++).padStart(4, "0")}`;
// What the phone's reports changed, read back through the API: the contact (GET /contacts), its
// texts (GET /messages), the received texts (GET /inbound) and the events the endpoint received.
const contactOf = (phoneNumber: string) => contactByPhone(ts, phoneNumber);
const textsTo = (phoneNumber: string) => messagesToPhone(ts, phoneNumber);
/** The received texts with the phone's id `externalId`, as GET /v1/inbound lists them. */
async function inboundOf(externalId: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const d = (await expectStatus(await ts.api(`/inbound?limit=100&page=${page}`), 200)).data;
    out.push(...d.messages.filter((m: any) => m.externalId === externalId));
    if (page >= d.pagination.totalPages) return out;
  }
}
/** The inbound.received events delivered for one received text (waits for the first). */
async function eventsFor(inboundId: string): Promise<any[]> {
  for (const until = Date.now() + 10_000; ; await Bun.sleep(20)) {
    const found = delivered.filter((e) => e.type === "inbound.received" && e.data.message.id === inboundId);
    if (found.length || Date.now() > until) return found;
  }
}

/** Asks the phone for its texts of the last 30 days, as the npm client's exportInbox does. */
async function askExport(p: SmsGateEmulator) {
  const now = Date.now();
  expect((await exportInbox({ deviceId: p.id, since: new Date(now - 30 * DAY).toISOString(), until: new Date(now).toISOString() })).status).toBe(202);
}

describe("texts sent again after an inbox export", () => {
  let p: SmsGateEmulator;
  beforeAll(async () => {
    p = await phone();
    await askExport(p);
  });

  test("an old HELP is stored and shown, read, with history: true in its event — and gets no reply", async () => {
    const from = newNumber();
    const id = await received(p, from, "HELP", Date.now() - 3 * DAY);
    const [row] = await inboundOf(id);
    expect(row).toMatchObject({ keyword: null, history: true });
    expect(row.readAt).not.toBeNull();
    expect(await textsTo(from)).toEqual([]);
    // Shown in the conversation, at its own time, marked as history; it bumps no unread count.
    const thread = (await expectStatus(await ts.api(`/conversations/${row.contactId}`), 200)).data;
    expect(thread.messages.map((m: any) => [m.direction, m.content, m.history])).toEqual([["inbound", "HELP", true]]);
    const listed = (await expectStatus(await ts.api(`/conversations?limit=100`), 200)).data.conversations.find((c: any) => c.contactId === row.contactId);
    expect(listed.unreadCount).toBe(0);
    // GET /v1/inbound says so too.
    const inbound = (await expectStatus(await ts.api(`/inbound?contactId=${row.contactId}`), 200)).data.messages;
    expect(inbound.map((m: any) => [m.body, m.history, m.keyword])).toEqual([["HELP", true, null]]);
    const [event] = await eventsFor(row.id);
    expect(event.data.message).toMatchObject({ body: "HELP", history: true, keyword: null });
  });

  test("an old STOP does not opt out; a fresh STOP during the same export still does", async () => {
    const from = newNumber();
    // Known to the shop, texted before.
    await expectStatus(await ts.api("/contacts", { method: "POST", json: { phoneNumber: from, firstName: "Ann" } }), 201);
    const old = await received(p, from, "STOP", Date.now() - 5 * DAY);
    expect((await inboundOf(old))[0]).toMatchObject({ history: true, keyword: null });
    expect(await contactOf(from)).toMatchObject({ optedOut: false, status: "new" });
    expect(await textsTo(from)).toEqual([]);

    const fresh = await received(p, from, "STOP", Date.now());
    expect((await inboundOf(fresh))[0]).toMatchObject({ history: false, keyword: "opt-out", readAt: null });
    expect(await contactOf(from)).toMatchObject({ optedOut: true });
    expect((await textsTo(from)).map((m) => [m.status, m.metadata.keyword])).toEqual([["queued", "opt-out"]]);
    const [event] = await eventsFor((await inboundOf(fresh))[0].id);
    expect(event.data.message).toMatchObject({ history: false, keyword: "opt-out" });

    // An old START does not undo the later STOP.
    await received(p, from, "START", Date.now() - 2 * DAY);
    expect(await contactOf(from)).toMatchObject({ optedOut: true });
    expect(await textsTo(from)).toHaveLength(1);
  });

  test("an old text the shop already had is not stored twice (the export's usual case)", async () => {
    const from = newNumber();
    const at = Date.now() - 4 * DAY;
    const id = await received(p, from, "See you Tuesday", at, "dup-1");
    await received(p, from, "See you Tuesday", at, "dup-1");
    expect(await inboundOf(id)).toHaveLength(1);
  });

  test("an old keyword-reply word gets no keyword reply; a new one does", async () => {
    await expectStatus(await ts.api("/keyword-replies", { method: "POST", json: { keywords: ["hours"], reply: "We're open 9-5." } }), 201);
    const from = newNumber();
    await received(p, from, "HOURS", Date.now() - DAY);
    expect(await textsTo(from)).toEqual([]);
    await received(p, from, "HOURS", Date.now());
    expect((await textsTo(from)).map((m) => m.status)).toEqual(["queued"]);
  });

  test("an old reply does not stop an automation run; a new one does", async () => {
    const form = (await expectStatus(await ts.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 0 } }) }), 201)).data.form;
    const automation = (await expectStatus(await ts.api("/automations", {
      method: "POST",
      json: { name: "Review request", formId: form.id, steps: [{ template: "How did we do?", delay: "2d" }], stopOnReply: true },
    }), 201)).data.automation;
    const from = newNumber();
    const sub = await fetch(`${ts.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: from, firstName: "Bo" }) });
    expect(sub.status).toBe(200);
    const runs = async () => (await expectStatus(await ts.api(`/automations/${automation.id}/runs`), 200)).data.runs as any[];
    expect((await runs()).map((r) => r.status)).toEqual(["active"]);
    await received(p, from, "thanks!", Date.now() - 6 * DAY);
    expect((await runs()).map((r) => r.status)).toEqual(["active"]);
    expect((await contactOf(from))!.status).not.toBe("responded");
    await received(p, from, "thanks again", Date.now());
    expect((await runs()).map((r) => [r.status, r.stoppedReason])).toEqual([["stopped", "replied"]]);
  });

  test("a text received after the export was asked for is new, even if it falls in the window", async () => {
    const from = newNumber();
    await received(p, from, "HELP", Date.now());
    expect((await textsTo(from)).map((m) => [m.status, m.metadata.keyword])).toEqual([["queued", "help"]]);
  });
});

describe("without an export, late texts are not history", () => {
  test("a days-old HELP from a phone that was not asked (it was offline) is answered, and a STOP opts out", async () => {
    const q = await phone(false);
    const from = newNumber();
    const id = await received(q, from, "HELP", Date.now() - 2 * DAY);
    expect((await inboundOf(id))[0]).toMatchObject({ history: false, keyword: "help", readAt: null });
    expect((await textsTo(from)).map((m) => m.metadata.keyword)).toEqual(["help"]);
    await received(q, from, "STOP", Date.now() - DAY);
    expect(await contactOf(from)).toMatchObject({ optedOut: true });
  });

  test("an export asked of one phone makes no other phone's texts history", async () => {
    const a = await phone();
    const b = await phone(false);
    await askExport(a);
    const from = newNumber();
    await received(b, from, "STOP", Date.now() - 3 * DAY);
    expect(await contactOf(from)).toMatchObject({ optedOut: true });
  });

  test("texts older than the export's window are not history", async () => {
    const c = await phone();
    const now = Date.now();
    expect((await exportInbox({ deviceId: c.id, since: new Date(now - 2 * DAY).toISOString(), until: new Date(now - DAY).toISOString() })).status).toBe(202);
    const from = newNumber();
    await received(c, from, "STOP", now - 3 * DAY);
    expect(await contactOf(from)).toMatchObject({ optedOut: true });
  });
});
