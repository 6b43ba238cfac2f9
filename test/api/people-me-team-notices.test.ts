import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { expectStatus, formBody, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { NOTICE_GAP_MS } from "../../src/services/team-notices";
import { raiseApiLimits } from "../helpers/reads";
import { setTimeZone } from "../helpers/accounts";

/**
 * The team is told: each person's mobile number and choices (PATCH /v1/people/me), a text through
 * the shop's own phones for a new request or a customer's reply, batched, in quiet hours held,
 * exactly once across a restart; a text from a team member's mobile is no customer's; e-mail
 * through a real local SMTP server (docs/api-decisions.md, "The owner hears back", the team told).
 */
const OWNER = { name: "Rosa", email: "rosa@bakery.example", password: "blue-bicycle-42" };
const TEAM_PHONE = "+14155550199";

async function signIn(s: TestServer, who = OWNER) {
  const res = await fetch(`${s.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: who.email, password: who.password }) });
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const body = await expectStatus(res, 201);
  const csrf = body.data.csrfToken as string;
  return (path: string, init: { method?: string; json?: unknown } = {}) =>
    fetch(`${s.base}${path}`, {
      method: init.method ?? "GET",
      headers: { Cookie: cookie, "X-CSRF-Token": csrf, ...(init.json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
}

const post = (s: TestServer, formId: string, json: Record<string, unknown>) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
const inbound = (s: TestServer, from: string, body: string) =>
  fetch(`${s.base}/messages/${s.adminKey}/inbound`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from, body }) });
/** One look of the notifier, once every acknowledged submission is applied (as the applier soon does). */
async function tick(t: TestServer) {
  // arrange: the notifier's timer tick, run at once at the test's clock, once the intake is applied
  // (the test helper's getter of the connection waits for it)
  void t.running.deps.sqlite;
  await t.running.deps.teamNotices.tick();
}
/** The dashboard's address as the team's links give it (no server address set: the port listened on). */
const site = (s: TestServer) => s.url.replace("127.0.0.1", "localhost");
/** The texts queued to the team's phone, oldest first. */
async function teamTexts(s: TestServer, phone = TEAM_PHONE): Promise<any[]> {
  const all = (await expectStatus(await s.api("/messages?limit=100&order=asc"), 200)).data.messages;
  return all.filter((m: any) => m.recipientPhone === phone);
}

let now = Date.parse("2026-12-10T15:00:00Z");
let s: TestServer;
let me: Awaited<ReturnType<typeof signIn>>;
let form: any;
const dir = tempDir();

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => now, dir });
  raiseApiLimits(s);
  setTimeZone(s, s.accountId, "America/New_York");
  await s.running.deps.people.add(s.accountId, { ...OWNER, role: "owner" }); // arrange: the owner with the password the test signs in with (textwire users add makes a random one)
  me = await signIn(s);
  form = (
    await expectStatus(
      await s.api("/forms", { method: "POST", json: formBody({ name: "Contact us", fields: [{ name: "firstName", type: "text", label: "Name" }, { name: "message", type: "text", label: "Message" }] }) }),
      201,
    )
  ).data.form;
});
afterAll(() => s.stop());

describe("PATCH /v1/people/me", () => {
  test("starts with nothing chosen; bad values are 400 naming each field and change nothing", async () => {
    const first = await expectStatus(await me("/people/me"), 200);
    expect(first.data).toEqual({ phoneNumber: null, notifications: { submissions: false, replies: false, email: false }, quietHours: null, emailAvailable: false });
    const bad = await expectStatus(await me("/people/me", { method: "PATCH", json: { phoneNumber: "12", notifications: { submissions: "yes", sms: true }, quietHours: { start: "25:00", end: "x" }, extra: 1 } }), 400);
    expect(bad.errors.map((e: any) => e.field).sort()).toEqual(["extra", "notifications.sms", "notifications.submissions", "phoneNumber", "quietHours"]);
    // Told by text without a number; e-mail without SMTP.
    expect((await expectStatus(await me("/people/me", { method: "PATCH", json: { notifications: { submissions: true } } }), 400)).errors[0].field).toBe("phoneNumber");
    expect((await expectStatus(await me("/people/me", { method: "PATCH", json: { phoneNumber: TEAM_PHONE, notifications: { email: true } } }), 400)).errors[0].field).toBe("notifications.email");
    for (const body of ["[]", "null", '"x"', "{"]) {
      const r = await fetch(`${s.base}/people/me`, { method: "PATCH", headers: { "Content-Type": "application/json" } as Record<string, string>, body });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect((await expectStatus(await me("/people/me"), 200)).data).toEqual(first.data);
  });

  test("an API key has no profile", async () => {
    expect((await expectStatus(await s.api("/people/me"), 404)).code).toBe("SESSION_NOT_FOUND");
    expect((await expectStatus(await s.api("/people/me", { method: "PATCH", json: { phoneNumber: TEAM_PHONE } }), 404)).code).toBe("SESSION_NOT_FOUND");
  });

  test("saves a national number as E.164, the choices and quiet hours; fields not given stay", async () => {
    const r = await expectStatus(await me("/people/me", { method: "PATCH", json: { phoneNumber: "(415) 555-0199", notifications: { submissions: true, replies: true } } }), 200);
    expect(r.data).toEqual({ phoneNumber: TEAM_PHONE, notifications: { submissions: true, replies: true, email: false }, quietHours: null, emailAvailable: false });
    const q = await expectStatus(await me("/people/me", { method: "PATCH", json: { quietHours: { start: "21:00", end: "08:00" } } }), 200);
    expect(q.data.quietHours).toEqual({ start: "21:00", end: "08:00" });
    expect(q.data.notifications.submissions).toBe(true);
  });
});

describe("the team's texts", () => {
  test("a new request texts the person: who, which form, what they wrote and a link; exactly once; no contact for the team", async () => {
    const contactsBefore = (await expectStatus(await s.api("/contacts"), 200)).data.pagination.total;
    const a = await expectStatus(await post(s, form.id, { phoneNumber: "+14155550101", firstName: "Ann", message: "Do you bake gluten-free bread?" }), 200);
    await tick(s);
    await tick(s);
    const texts = await teamTexts(s);
    expect(texts).toHaveLength(1);
    const sub = (await expectStatus(await s.api(`/submissions?contactId=${a.data.contactId}`), 200)).data.submissions[0];
    expect(texts[0].content).toBe(`New request from Ann (Contact us): Do you bake gluten-free bread? ${site(s)}/inbox/${sub.id}`);
    expect(texts[0]).toMatchObject({ contactId: null, recipientName: "Team: Rosa", priority: "high", status: "queued" });
    // Only Ann became a contact; the team's number is none.
    expect((await expectStatus(await s.api("/contacts"), 200)).data.pagination.total).toBe(contactsBefore + 1);
    expect((await expectStatus(await s.api(`/contacts?search=${TEAM_PHONE.slice(1)}`), 200)).data.contacts).toEqual([]);
  });

  test("many at once are batched into one text after the gap", async () => {
    await expectStatus(await post(s, form.id, { phoneNumber: "+14155550102", firstName: "Bob", message: "Wedding cake?" }), 200);
    await expectStatus(await post(s, form.id, { phoneNumber: "+14155550103", firstName: "Carla", message: "Open Sunday?" }), 200);
    await expectStatus(await inbound(s, "+14155550101", "Thanks! See you Friday"), 201);
    await tick(s);
    expect(await teamTexts(s)).toHaveLength(1);
    now += NOTICE_GAP_MS;
    await tick(s);
    await tick(s);
    const texts = await teamTexts(s);
    expect(texts).toHaveLength(2);
    expect(texts[1].content).toBe(`2 new requests and 1 reply from Bob, Carla, Ann ${site(s)}/inbox`);
  });

  test("a reply alone names the customer and links the conversation", async () => {
    now += NOTICE_GAP_MS;
    const r = await expectStatus(await inbound(s, "+14155550102", "Yes please, 3 tiers"), 201);
    await tick(s);
    const texts = await teamTexts(s);
    expect(texts.at(-1).content).toBe(`Bob replied: Yes please, 3 tiers ${site(s)}/conversations/${r.data.message.contactId}`);
  });

  test("quiet hours hold texts until they end (the business's time zone)", async () => {
    // 03:00 in New York.
    now = Date.parse("2026-12-11T08:00:00Z");
    const before = (await teamTexts(s)).length;
    await expectStatus(await post(s, form.id, { phoneNumber: "+14155550104", firstName: "Dan", message: "Night owl" }), 200);
    await tick(s);
    expect(await teamTexts(s)).toHaveLength(before);
    now = Date.parse("2026-12-11T13:05:00Z"); // 08:05 in New York
    await tick(s);
    expect((await teamTexts(s)).at(-1).content).toContain("New request from Dan (Contact us): Night owl");
  });

  test("a text from the team's own mobile is no customer's; STOP from it switches the team texts off", async () => {
    const contactsBefore = (await expectStatus(await s.api("/contacts"), 200)).data.pagination.total;
    const r = await expectStatus(await inbound(s, TEAM_PHONE, "On my way to the shop"), 200);
    expect(r.data.fromTeam).toBe(true);
    expect((await expectStatus(await s.api("/contacts"), 200)).data.pagination.total).toBe(contactsBefore);
    expect((await expectStatus(await s.api("/inbound?limit=100"), 200)).data.messages.some((m: any) => m.from === TEAM_PHONE)).toBe(false);
    await expectStatus(await inbound(s, TEAM_PHONE, "STOP"), 200);
    const mine = (await expectStatus(await me("/people/me"), 200)).data;
    expect(mine.notifications).toEqual({ submissions: false, replies: false, email: false });
    expect(mine.phoneNumber).toBe(TEAM_PHONE);
    await expectStatus(await me("/people/me", { method: "PATCH", json: { notifications: { submissions: true, replies: true } } }), 200);
  });

  test("a notice pending when the server stops is sent once after the restart", async () => {
    now += NOTICE_GAP_MS;
    const before = (await teamTexts(s)).length;
    await expectStatus(await post(s, form.id, { phoneNumber: "+14155550105", firstName: "Eve", message: "Before the restart" }), 200);
    const key = s.adminKey;
    const accountId = s.accountId;
    await s.stop();
    s = await startTestServer({ db: `${dir}/textwire.db` }, { clock: () => now, dir });
    Object.assign(s, { adminKey: key, accountId });
    await tick(s);
    await tick(s);
    const texts = await teamTexts(s);
    expect(texts).toHaveLength(before + 1);
    expect(texts.at(-1).content).toContain("New request from Eve");
  });
});

describe("an opted-out visitor's request", () => {
  test("is told like any other, saying to reply another way", async () => {
    now += NOTICE_GAP_MS;
    const first = await expectStatus(await post(s, form.id, { phoneNumber: "+14155550107", firstName: "Gus", message: "Hi" }), 200);
    await expectStatus(await s.api(`/contacts/${first.data.contactId}/opt-out`, { method: "POST", json: { reason: "asked by phone" } }), 200);
    await tick(s);
    now += NOTICE_GAP_MS;
    const again = await expectStatus(await post(s, form.id, { phoneNumber: "+14155550107", firstName: "Gus", message: "Call me about a wedding cake" }), 200);
    expect(again.data.suppressed).toBe("opted-out");
    await tick(s);
    expect((await teamTexts(s)).at(-1).content).toStartWith("New request from Gus (Contact us; opted out of texts: reply another way): Call me about a wedding cake ");
  });
});

describe("e-mail through the operator's SMTP server", () => {
  test("a request is e-mailed once to the person's sign-in address", async () => {
    const received: Array<{ to: string; data: string }> = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData(stream, session, cb) {
        let data = "";
        stream.on("data", (c: Buffer) => (data += c.toString()));
        stream.on("end", () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address).join(","), data });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
    const port = (smtp.server.address() as { port: number }).port;
    const t = await startTestServer({ smtpUrl: `smtp://127.0.0.1:${port}`, smtpFrom: "Rosa's Bakery <shop@bakery.example>" }, { clock: () => now });
    try {
      await t.running.deps.people.add(t.accountId, { name: "Sam", email: "sam@bakery.example", password: "green-bicycle-42", role: "staff" }); // arrange: a person with a known password (textwire users add makes a random one)
      const sam = await signIn(t, { name: "Sam", email: "sam@bakery.example", password: "green-bicycle-42" });
      const saved = await expectStatus(await sam("/people/me", { method: "PATCH", json: { notifications: { submissions: true, email: true } } }), 200);
      expect(saved.data).toMatchObject({ phoneNumber: null, emailAvailable: true, notifications: { submissions: true, replies: false, email: true } });
      const f = (await expectStatus(await t.api("/forms", { method: "POST", json: formBody({ name: "Orders", fields: [{ name: "message", type: "text", label: "Message" }] }) }), 201)).data.form;
      await expectStatus(await post(t, f.id, { phoneNumber: "+14155550111", firstName: "Fay", message: "Two dozen bagels" }), 200);
      await tick(t);
      await tick(t);
      expect(received).toHaveLength(1);
      expect(received[0].to).toBe("sam@bakery.example");
      expect(received[0].data).toContain("New request from Fay (Orders)");
      expect(received[0].data).toContain("Two dozen bagels");
      expect(received[0].data).toContain(`From: "Rosa's Bakery" <shop@bakery.example>`);
      expect(received[0].data).toContain("Subject: Default account: New request from Fay (Orders): Two dozen bagels");
      // No text: Sam gave no number.
      expect((await expectStatus(await t.api("/messages?limit=100"), 200)).data.messages.filter((m: any) => m.contactId === null)).toEqual([]);
    } finally {
      await t.stop();
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  });
});
