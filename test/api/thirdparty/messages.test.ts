import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus as expectHttp, startTestServer, type TestServer } from "../../helpers/server";
import { SmsGateEmulator, gsonDate } from "../../helpers/smsgate-emulator";
import { newAccount } from "../../helpers/accounts";
import { raiseApiLimits } from "../../helpers/reads";

/**
 * SMSGate's third-party messages: send, state, list, cancel, and Textwire's rules per recipient
 * (docs/api-decisions.md, "SMSGate third-party API").
 */
let ts: TestServer;
let offsetMs = 0;
beforeAll(async () => {
  ts = await startTestServer({}, { clock: () => Date.now() + offsetMs });
  raiseApiLimits(ts); // texts are read back one by one through the API
});
afterAll(() => ts.stop());

const basic = (login: string, password: string) => `Basic ${btoa(`${login}:${password}`)}`;
async function tp(path: string, init: { method?: string; json?: unknown; auth?: string } = {}) {
  const headers: Record<string, string> = { Authorization: init.auth ?? basic(ts.accountId, ts.adminKey) };
  if (init.json !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${ts.url}/3rdparty/v1${path}`, { method: init.method ?? "GET", headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
async function expectStatus(r: { status: number; body: any }, status: number) {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

let n = 0;
/** A fresh mobile number each time (+1 415 555 01xx are not mobile; these are real US mobile shapes). */
const phone = () => `+1202555${String(1000 + ++n).slice(-4)}`;
/** Textwire's texts for one SMSGate message, as GET /v1/messages lists them (by recipient). */
async function messagesOf(smsgateId: string) {
  const out: Array<{ id: string; recipient_phone: string; priority: string; scheduled_for: string; status: string; failure_reason: string | null }> = [];
  for (let page = 1; ; page++) {
    const d = (await expectHttp(await ts.api(`/messages?limit=100&page=${page}`), 200)).data;
    for (const listed of d.messages) {
      // The list leaves metadata out: each text is read whole (GET /v1/messages/:id) for its SMSGate id.
      const m = (await expectHttp(await ts.api(`/messages/${listed.id}`), 200)).data.message;
      if (m.metadata?.smsgateId === smsgateId) out.push({ id: m.id, recipient_phone: m.recipientPhone, priority: m.priority, scheduled_for: m.scheduledFor, status: m.status, failure_reason: m.failureReason });
    }
    if (page >= d.pagination.totalPages) return out.sort((a, b) => a.recipient_phone.localeCompare(b.recipient_phone));
  }
}
/** How many texts Textwire holds, and how many SMSGate messages the client API lists. */
const textsHeld = async () => (await expectHttp(await ts.api("/messages?limit=1"), 200)).data.pagination.total as number;
const smsgateListed = async () => Number((await tp("/messages?limit=1")).headers.get("x-total-count"));

describe("send", () => {
  test("two numbers under the npm client's /message: 202, Location, two Pending recipients, one Textwire message each", async () => {
    const [a, b] = [phone(), phone()];
    const r = await tp("/message", { method: "POST", json: { message: "Your order is ready", phoneNumbers: [a, b] } });
    const body = await expectStatus(r, 202);
    expect(body).toEqual({
      id: expect.any(String),
      deviceId: "",
      state: "Pending",
      isHashed: false,
      isEncrypted: false,
      recipients: [
        { phoneNumber: a, state: "Pending" },
        { phoneNumber: b, state: "Pending" },
      ],
      states: { Pending: expect.any(String) },
    });
    expect(r.headers.get("location")).toBe(`/3rdparty/v1/messages/${body.id}`);
    const rows = (await messagesOf(body.id));
    expect(rows.map((m) => [m.recipient_phone, m.status])).toEqual([
      [a, "queued"],
      [b, "queued"],
    ]);
    // The state reads the same under both spellings.
    expect(await expectStatus(await tp(`/messages/${body.id}`), 200)).toEqual(body);
    expect(await expectStatus(await tp(`/message/${body.id}`), 200)).toEqual(body);
  });

  test("the client's id is kept; reusing it answers 409 and queues nothing", async () => {
    const id = "order-4711";
    const first = await expectStatus(await tp("/messages", { method: "POST", json: { id, textMessage: { text: "hi" }, phoneNumbers: [phone()] } }), 202);
    expect(first.id).toBe(id);
    const again = await tp("/messages", { method: "POST", json: { id, textMessage: { text: "hi again" }, phoneNumbers: [phone()] } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: expect.stringContaining(id), code: 409, data: "INVALID_STATE" });
    expect((await messagesOf(id))).toHaveLength(1);
  });

  test("an opted-out number is that recipient Failed with error opted-out; the others are queued", async () => {
    const [out, ok] = [phone(), phone()];
    expect((await ts.api("/contacts", { method: "POST", json: { phoneNumber: out, optedOut: true } })).status).toBe(201);
    const body = await expectStatus(await tp("/messages", { method: "POST", json: { textMessage: { text: "Sale today" }, phoneNumbers: [out, ok] } }), 202);
    expect(body.recipients).toEqual([
      { phoneNumber: out, state: "Failed", error: "opted-out" },
      { phoneNumber: ok, state: "Pending" },
    ]);
    expect(body.state).toBe("Pending");
    expect((await messagesOf(body.id)).map((m) => m.recipient_phone)).toEqual([ok]);
  });

  test("every recipient opted out: the message is Failed", async () => {
    const out = phone();
    await ts.api("/contacts", { method: "POST", json: { phoneNumber: out, optedOut: true } });
    const body = await expectStatus(await tp("/messages", { method: "POST", json: { message: "x", phoneNumbers: [out] } }), 202);
    expect(body.state).toBe("Failed");
    expect(body.states.Failed).toEqual(expect.any(String));
  });

  test("priority maps to Textwire's: ≥ 100 urgent, ≥ 50 high, < 0 low, else normal", async () => {
    const cases: Array<[number, string]> = [[127, "urgent"], [100, "urgent"], [99, "high"], [50, "high"], [49, "normal"], [0, "normal"], [-1, "low"], [-128, "low"]];
    for (const [priority, expected] of cases) {
      const body = await expectStatus(await tp("/messages", { method: "POST", json: { message: "p", phoneNumbers: [phone()], priority } }), 202);
      expect([priority, (await messagesOf(body.id))[0].priority]).toEqual([priority, expected]);
    }
  });

  test("scheduleAt delays the text", async () => {
    const at = new Date(Date.now() + offsetMs + 3_600_000).toISOString();
    const body = await expectStatus(await tp("/messages", { method: "POST", json: { message: "later", phoneNumbers: [phone()], scheduleAt: at } }), 202);
    expect((await messagesOf(body.id))[0].scheduled_for).toBe(at);
  });

  test("skipPhoneValidation keeps the normalisation but accepts a number that is not a mobile", async () => {
    const landline = "+442071838750"; // a London landline
    const refused = await tp("/messages", { method: "POST", json: { message: "x", phoneNumbers: [landline] } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("landline");
    const ok = await expectStatus(await tp("/messages?skipPhoneValidation=true", { method: "POST", json: { message: "x", phoneNumbers: ["+44 20 7183 8750"] } }), 202);
    expect(ok.recipients).toEqual([{ phoneNumber: landline, state: "Pending" }]);
    // Still refused when it is no phone number at all.
    expect((await tp("/messages?skipPhoneValidation=true", { method: "POST", json: { message: "x", phoneNumbers: ["12"] } })).status).toBe(400);
  });

  test("encrypted and data messages are refused plainly (400), and nothing is queued", async () => {
    const before = await textsHeld();
    const enc = await tp("/messages", { method: "POST", json: { message: "x", phoneNumbers: [phone()], isEncrypted: true } });
    expect(enc.status).toBe(400);
    expect(enc.body).toEqual({ message: expect.stringContaining("Encrypted messages are not supported"), code: 400, data: "VALIDATION_ERROR" });
    const data = await tp("/messages", { method: "POST", json: { dataMessage: { data: "aGk=", port: 53739 }, phoneNumbers: [phone()] } });
    expect(data.status).toBe(400);
    expect(data.body.message).toContain("Data messages");
    expect(await textsHeld()).toBe(before);
  });

  test("bad requests: a 400 that names the field, in SMSGate's body, and nothing queued", async () => {
    const bad: Array<[unknown, string]> = [
      [{ message: "x" }, "phoneNumbers"],
      [{ message: "x", phoneNumbers: [] }, "phoneNumbers"],
      [{ message: "x", phoneNumbers: Array.from({ length: 101 }, () => phone()) }, "phoneNumbers"],
      [{ message: "x", phoneNumbers: [42] }, "phoneNumbers[0]"],
      [{ message: "x", phoneNumbers: ["not a number"] }, "phoneNumbers[0]"],
      [{ phoneNumbers: [phone()] }, "No message content"],
      [{ textMessage: { text: "" }, phoneNumbers: [phone()] }, "textMessage.text"],
      [{ message: "x".repeat(1601), phoneNumbers: [phone()] }, "at most 1600"],
      [{ message: "x", phoneNumbers: [phone()], id: "x".repeat(37) }, "id must be"],
      [{ message: "x", phoneNumbers: [phone()], id: "a/b" }, "id must be"],
      [{ message: "x", phoneNumbers: [phone()], simNumber: 4 }, "simNumber"],
      [{ message: "x", phoneNumbers: [phone()], priority: 128 }, "priority"],
      [{ message: "x", phoneNumbers: [phone()], priority: 1.5 }, "priority"],
      [{ message: "x", phoneNumbers: [phone()], ttl: 4 }, "ttl"],
      [{ message: "x", phoneNumbers: [phone()], ttl: 60, validUntil: "2099-01-01T00:00:00Z" }, "not both"],
      [{ message: "x", phoneNumbers: [phone()], validUntil: "2001-01-01T00:00:00Z" }, "already past"],
      [{ message: "x", phoneNumbers: [phone()], validUntil: "soon" }, "validUntil"],
      [{ message: "x", phoneNumbers: [phone()], scheduleAt: 12 }, "scheduleAt"],
      [{ message: "x", phoneNumbers: [phone()], withDeliveryReport: "yes" }, "withDeliveryReport"],
      [{ message: "x", phoneNumbers: [phone()], deviceId: "no-such-phone" }, "deviceId"],
      [[1, 2], "JSON object"],
      ["text", "JSON object"],
    ];
    const before = await smsgateListed();
    for (const [json, says] of bad) {
      const r = await tp("/messages", { method: "POST", json });
      if (r.status !== 400) throw new Error(`${JSON.stringify(json).slice(0, 80)}: ${r.status} ${JSON.stringify(r.body)}`);
      expect(r.body.code).toBe(400);
      expect(r.body.data).toBe("VALIDATION_ERROR");
      expect([JSON.stringify(json).slice(0, 60), r.body.message]).toEqual([JSON.stringify(json).slice(0, 60), expect.stringContaining(says)]);
    }
    expect(await smsgateListed()).toBe(before);
    // Malformed JSON and a wrong Content-Type are 400 and 415 in SMSGate's body too.
    const raw = await fetch(`${ts.url}/3rdparty/v1/messages`, { method: "POST", headers: { Authorization: basic(ts.accountId, ts.adminKey), "Content-Type": "application/json" }, body: "{nope" });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { code: number }).code).toBe(400);
    const form = await fetch(`${ts.url}/3rdparty/v1/messages`, { method: "POST", headers: { Authorization: basic(ts.accountId, ts.adminKey), "Content-Type": "text/plain" }, body: "hi" });
    expect(form.status).toBe(415);
    expect(((await form.json()) as { code: number }).code).toBe(415);
  });

  test("a number given twice is texted once", async () => {
    const a = phone();
    const body = await expectStatus(await tp("/messages", { method: "POST", json: { message: "once", phoneNumbers: [a, a.replace("+1", "+1 ")] } }), 202);
    expect(body.recipients).toEqual([{ phoneNumber: a, state: "Pending" }]);
  });
});

describe("the account's rules for SMSGate clients", () => {
  /** Settings → SMSGate clients, as the owner saves them (PUT /v1/account/smsgate-clients). */
  const setRules = async (json: Record<string, unknown>) => expectHttp(await ts.api("/account/smsgate-clients", { method: "PUT", json }), 200);

  test("the per-recipient limit makes the extra recipient Failed with recipient-limit", async () => {
    await setRules({ recipientLimitPerDay: 1 });
    try {
      const a = phone();
      const first = await expectStatus(await tp("/messages", { method: "POST", json: { message: "1", phoneNumbers: [a] } }), 202);
      expect(first.recipients[0].state).toBe("Pending");
      const second = await expectStatus(await tp("/messages", { method: "POST", json: { message: "2", phoneNumbers: [a] } }), 202);
      expect(second.recipients).toEqual([{ phoneNumber: a, state: "Failed", error: "recipient-limit" }]);
    } finally {
      await setRules({ recipientLimitPerDay: null });
    }
  });

  test("quiet hours move the text to their end", async () => {
    // Quiet from an hour ago to an hour from now (UTC: the account has no time zone set).
    const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const now = Date.now() + offsetMs;
    await setRules({ quietHours: { start: hhmm(now - 3_600_000), end: hhmm(now + 3_600_000) } });
    try {
      const body = await expectStatus(await tp("/messages", { method: "POST", json: { message: "q", phoneNumbers: [phone()] } }), 202);
      const at = Date.parse((await messagesOf(body.id))[0].scheduled_for);
      expect(at).toBeGreaterThan(now + 3_500_000);
      expect(body.recipients[0].state).toBe("Pending");
    } finally {
      await setRules({ quietHours: null });
    }
  });

  test("rules refuse bad values plainly and change nothing", async () => {
    for (const [json, field] of [[{ quietHours: { start: "25:00", end: "08:00" } }, "quietHours"], [{ recipientLimitPerDay: 0 }, "recipientLimitPerDay"]] as const) {
      const bad = await expectHttp(await ts.api("/account/smsgate-clients", { method: "PUT", json }), 400);
      expect(bad.errors.map((e: any) => e.field)).toEqual([field]);
    }
    expect((await expectHttp(await ts.api("/account/smsgate-clients"), 200)).data).toMatchObject({ quietHours: null, recipientLimitPerDay: null });
  });
});

describe("state through an SMSGate phone, list, cancel, expiry", () => {
  let p: SmsGateEmulator;
  beforeAll(async () => {
    p = new SmsGateEmulator({ base: `${ts.url}/api/mobile/v1`, behaviour: "hold" });
    const token = ((await (await ts.api("/devices/registration-tokens", { method: "POST", json: {} })).json()) as any).data.token;
    await p.register(token);
  });

  const report = async (id: string, state: string, phones: string[], states: Record<string, string>) => {
    const res = await fetch(`${ts.url}/api/mobile/v1/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id, state, recipients: phones.map((ph) => ({ phoneNumber: ph, state, error: null })), states }]),
    });
    expect(res.status).toBe(204);
  };
  const take = async () => {
    const res = await fetch(`${ts.url}/api/mobile/v1/message`, { headers: { Authorization: `Bearer ${p.token}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as any[];
  };

  test("Pending → Processed → Sent → Delivered; the phone gets the SIM and delivery-report choice", async () => {
    // Whatever earlier tests queued is handed out first.
    await take();
    const [a, b] = [phone(), phone()];
    const sent = await expectStatus(await tp("/messages", { method: "POST", json: { textMessage: { text: "step" }, phoneNumbers: [a, b], simNumber: 2, withDeliveryReport: false, priority: 100 } }), 202);
    const got = await take();
    const mine = await messagesOf(sent.id);
    const handed = got.filter((m) => mine.some((r) => r.id === m.id));
    expect(handed).toHaveLength(2);
    for (const m of handed) expect([m.simNumber, m.withDeliveryReport]).toEqual([2, false]);
    let st = await expectStatus(await tp(`/messages/${sent.id}`), 200);
    expect([st.state, st.recipients.map((r: any) => r.state)]).toEqual(["Processed", ["Processed", "Processed"]]);
    expect(st.deviceId).toBe(p.id);
    expect(st.states.Processed).toEqual(expect.any(String));
    const now = Date.now();
    const times = { Processed: gsonDate(now), Sent: gsonDate(now + 1) };
    await report(handed[0].id, "Sent", handed[0].phoneNumbers, times);
    st = await expectStatus(await tp(`/messages/${sent.id}`), 200);
    expect(st.state).toBe("Processed"); // the least advanced recipient's
    await report(handed[1].id, "Sent", handed[1].phoneNumbers, times);
    st = await expectStatus(await tp(`/messages/${sent.id}`), 200);
    expect([st.state, st.recipients.map((r: any) => r.state)]).toEqual(["Sent", ["Sent", "Sent"]]);
    expect(st.states.Sent).toEqual(expect.any(String));
    for (const m of handed) await report(m.id, "Delivered", m.phoneNumbers, { ...times, Delivered: gsonDate(now + 2) });
    st = await expectStatus(await tp(`/messages/${sent.id}`), 200);
    expect([st.state, st.recipients.map((r: any) => r.state)]).toEqual(["Delivered", ["Delivered", "Delivered"]]);
    expect(Object.keys(st.states).sort()).toEqual(["Delivered", "Pending", "Processed", "Sent"]);
  });

  test("a phone's failure shows as Failed with its error", async () => {
    await take();
    const sent = await expectStatus(await tp("/messages", { method: "POST", json: { message: "f", phoneNumbers: [phone()] } }), 202);
    const got = await take();
    const mine = (await messagesOf(sent.id))[0].id;
    const [m] = got.filter((x) => x.id === mine);
    const res = await fetch(`${ts.url}/api/mobile/v1/message`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${p.token}`, "Content-Type": "application/json" },
      body: JSON.stringify([{ id: m.id, state: "Failed", recipients: [{ phoneNumber: m.phoneNumbers[0], state: "Failed", error: "RESULT_ERROR_NULL_PDU" }], states: { Failed: gsonDate(Date.now()) } }]),
    });
    expect(res.status).toBe(204);
    const st = await expectStatus(await tp(`/messages/${sent.id}`), 200);
    expect(st.state).toBe("Failed");
    expect(st.recipients[0]).toEqual({ phoneNumber: m.phoneNumbers[0], state: "Failed", error: expect.any(String) });
  });

  test("cancel stops what no phone has taken; again is 409", async () => {
    const sent = await expectStatus(await tp("/messages", { method: "POST", json: { message: "c", phoneNumbers: [phone(), phone()], scheduleAt: new Date(Date.now() + offsetMs + 86_400_000).toISOString() } }), 202);
    const st = await expectStatus(await tp(`/messages/${sent.id}`, { method: "DELETE" }), 200);
    expect([st.state, st.recipients.map((r: any) => r.state)]).toEqual(["Cancelled", ["Cancelled", "Cancelled"]]);
    expect((await messagesOf(sent.id)).map((m) => m.status)).toEqual(["cancelled", "cancelled"]);
    const again = await tp(`/messages/${sent.id}`, { method: "DELETE" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(409);
    expect((await tp("/messages/no-such-id", { method: "DELETE" })).status).toBe(404);
  });

  test("ttl: a text no phone took in time fails with expired; one already taken does not", async () => {
    await take();
    const late = await expectStatus(await tp("/messages", { method: "POST", json: { message: "t", phoneNumbers: [phone()], ttl: 60, scheduleAt: new Date(Date.now() + offsetMs + 86_400_000).toISOString() } }), 202);
    const taken = await expectStatus(await tp("/messages", { method: "POST", json: { message: "t2", phoneNumbers: [phone()], ttl: 60 } }), 202);
    const got = await take();
    const mine = (await messagesOf(taken.id))[0].id;
    expect(got.some((m) => m.id === mine)).toBe(true);
    offsetMs += 61_000;
    try {
      ts.running.deps.thirdParty.expireDue(); // arrange: the expiry sweep's tick, run at once a minute ahead
    } finally {
      offsetMs -= 61_000;
    }
    const st = await expectStatus(await tp(`/messages/${late.id}`), 200);
    expect([st.state, st.recipients[0].state, st.recipients[0].error]).toEqual(["Failed", "Failed", "expired"]);
    expect((await expectStatus(await tp(`/messages/${taken.id}`), 200)).state).toBe("Processed");
  });

  test("GET /messages lists newest first with X-Total-Count, paged", async () => {
    const all = await tp("/messages?limit=100");
    expect(all.status).toBe(200);
    const total = Number(all.headers.get("x-total-count"));
    expect(total).toBeGreaterThan(10);
    expect(all.body).toHaveLength(Math.min(100, total));
    const page = await tp("/messages?limit=2&offset=1");
    expect(page.headers.get("x-total-count")).toBe(String(total));
    expect(page.body.map((m: any) => m.id)).toEqual(all.body.slice(1, 3).map((m: any) => m.id));
    expect(total).toBeLessThan(100);
    const ascending = await tp("/messages?limit=100&sort=created_at");
    expect(ascending.body.map((m: any) => m.id)).toEqual(all.body.map((m: any) => m.id).reverse());
    const withText = await tp("/messages?limit=1&includeContent=true");
    expect(withText.body[0].textMessage).toEqual({ text: expect.any(String) });
    for (const q of ["limit=0", "limit=101", "offset=-1", "sort=name", "from=yesterday", "state=Sending", "includeContent=maybe"]) {
      const r = await tp(`/messages?${q}`);
      expect([q, r.status, r.body.code]).toEqual([q, 400, 400]);
    }
  });
});

describe("tenant isolation", () => {
  test("another account sees none of this account's messages, and cannot reuse its ids against it", async () => {
    const mine = await expectStatus(await tp("/messages", { method: "POST", json: { id: "shared-id", message: "m", phoneNumbers: [phone()] } }), 202);
    const other = newAccount(ts, { name: "Other shop" });
    const auth = basic(other.account.id, other.apiKey);
    expect((await tp(`/messages/${mine.id}`, { auth })).status).toBe(404);
    expect((await tp(`/messages/${mine.id}`, { method: "DELETE", auth })).status).toBe(404);
    const list = await tp("/messages", { auth });
    expect([list.body, list.headers.get("x-total-count")]).toEqual([[], "0"]);
    // The same id is free in another account.
    expect((await tp("/messages", { method: "POST", auth, json: { id: "shared-id", message: "m", phoneNumbers: [phone()] } })).status).toBe(202);
    // One account's key under the other's login is refused.
    expect((await tp("/messages", { auth: basic(ts.accountId, other.apiKey) })).status).toBe(401);
  });
});

describe("Settings → SMSGate clients (GET/PUT /v1/account/smsgate-clients)", () => {
  test("shows the base URL, the login (the account id), where the password comes from, and a stable signing key", async () => {
    const res = await ts.api("/account/smsgate-clients");
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as any;
    expect(data).toEqual({
      baseUrl: `${ts.url}/3rdparty/v1`,
      login: ts.accountId,
      passwordHint: expect.stringContaining("API key"),
      signingKey: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      quietHours: null,
      recipientLimitPerDay: null,
    });
    const again = ((await (await ts.api("/account/smsgate-clients")).json()) as any).data;
    expect(again.signingKey).toBe(data.signingKey);
  });

  test("saves the rules, refuses bad values with a 400 naming each field (changing nothing), and is for admins", async () => {
    const ok = await ts.api("/account/smsgate-clients", { method: "PUT", json: { recipientLimitPerDay: 3, quietHours: { start: "21:00", end: "08:00" } } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).data).toMatchObject({ recipientLimitPerDay: 3, quietHours: { start: "21:00", end: "08:00" } });
    const bad = await ts.api("/account/smsgate-clients", { method: "PUT", json: { recipientLimitPerDay: 0, quietHours: "night" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).errors.map((e: any) => e.field).sort()).toEqual(["quietHours", "recipientLimitPerDay"]);
    expect((await expectHttp(await ts.api("/account/smsgate-clients"), 200)).data).toMatchObject({ recipientLimitPerDay: 3, quietHours: { start: "21:00", end: "08:00" } });
    const off = await ts.api("/account/smsgate-clients", { method: "PUT", json: { recipientLimitPerDay: null, quietHours: null } });
    expect(((await off.json()) as any).data).toMatchObject({ recipientLimitPerDay: null, quietHours: null });
    const std = ((await (await ts.api("/api-keys", { method: "POST", json: { permission: "standard_access" } })).json()) as any).data.apiKey;
    expect((await ts.api("/account/smsgate-clients", { key: std })).status).toBe(403);
  });
});
