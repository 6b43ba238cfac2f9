import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { contactOf, listTotal, messageOf, raiseApiLimits } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

// What a submission wrote is read back through the API (the message, the contact, the lists'
// totals); SQL remains only where the API shows nothing of it (a submission's new-contact mark).

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  raiseApiLimits(s);
});
afterAll(() => s.stop());

async function createForm(t: TestServer, overrides: Record<string, unknown> = {}, key?: string) {
  const res = await t.api("/forms", { method: "POST", json: formBody(overrides), key });
  return (await expectStatus(res, 201)).data.form as { id: string; webhookUrl: string; name: string };
}

function post(t: TestServer, formId: string, body: unknown, init: { headers?: Record<string, string>; raw?: string | ReadableStream; contentType?: string | null } = {}) {
  const headers = new Headers(init.headers);
  const ct = init.contentType === undefined ? "application/json" : init.contentType;
  if (ct !== null) headers.set("Content-Type", ct);
  return fetch(`${t.base}/forms/${formId}/webhook`, {
    method: "POST",
    headers,
    body: init.raw !== undefined ? init.raw : JSON.stringify(body),
  });
}


/** What the account holds, as the API counts it: nothing written is nothing counted. */
async function totals(t: TestServer) {
  return { messages: await listTotal(t, "/messages"), contacts: await listTotal(t, "/contacts"), submissions: await listTotal(t, "/submissions") };
}

let phoneCounter = 1000;
/** A fresh valid US number each call. */
const nextPhone = () => `+1415555${String(phoneCounter++).padStart(4, "0")}`;

describe("accepting a submission", () => {
  test("200 with messageId, contactId, queuePosition, estimatedDelivery; rows written", async () => {
    const form = await createForm(s, { messageTemplate: "Hi {{firstName}} from {{company}}" });
    const phone = nextPhone();
    const res = await post(s, form.id, { phoneNumber: phone, firstName: "Ann", lastName: "Lee", email: "ann@example.com", company: "Acme" });
    const body = await expectStatus(res, 200);
    expect(body.status).toBe("success");
    expect(typeof body.message).toBe("string");
    expect(body.data.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.data.contactId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(body.data.queuePosition)).toBe(true);
    expect(body.data.queuePosition).toBeGreaterThanOrEqual(1);
    expect(new Date(body.data.estimatedDelivery).toISOString()).toBe(body.data.estimatedDelivery);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    for (const h of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Burst-Limit", "X-RateLimit-Burst-Remaining"]) {
      expect(res.headers.get(h)).not.toBeNull();
    }
    expect(res.headers.get("X-RateLimit-Limit")).toBe("100");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();

    const m = (await messageOf(s, body.data.messageId))!;
    expect(m.status).toBe("queued");
    expect(m.priority).toBe("normal");
    expect(m.content).toBe("Hi Ann from Acme");
    expect(m.recipientPhone).toBe(phone);
    expect(m.recipientName).toBe("Ann Lee");
    expect(m.contactId).toBe(body.data.contactId);
    expect(m.formId).toBe(form.id);
    expect(m.formName).toBe(form.name);
    expect(m.templateUsed).toBe("Hi {{firstName}} from {{company}}");
    expect(m.webhookData).toEqual({ phoneNumber: phone, firstName: "Ann", lastName: "Lee", email: "ann@example.com", company: "Acme" });
    expect(m.scheduledFor).toBe(m.createdAt);
    const meta = m.metadata;
    expect(meta).toMatchObject({ messageLength: 16, variablesUsed: ["firstName", "company"], source: "webhook", ipAddress: "127.0.0.1", encoding: "GSM-7", segments: 1 });
    expect(typeof meta.userAgent).toBe("string");
    // In the queue: its position above comes from the queue itself.

    const c = (await contactOf(s, body.data.contactId))!;
    expect(c).toMatchObject({ phoneNumber: phone, firstName: "Ann", lastName: "Lee", email: "ann@example.com", status: "new", formId: form.id });
    expect(c.customFields).toEqual({ company: "Acme" });
    expect((await expectStatus(await s.api("/contacts?search=ann%20lee"), 200)).data.contacts.map((x: any) => x.id)).toContain(c.id);
    const subs = (await expectStatus(await s.api(`/submissions?contactId=${c.id}`), 200)).data.submissions;
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ formId: form.id, contactId: c.id, messageId: m.id, suppressed: null });
    // The submission made the contact: the form's new contacts count it.
    expect((await expectStatus(await s.api(`/forms/${form.id}/stats`), 200)).data.stats.periodStats).toMatchObject({ submissions: 1, newContacts: 1 });
  });

  test("application/x-www-form-urlencoded (plain HTML forms) is accepted", async () => {
    const form = await createForm(s);
    const res = await post(s, form.id, null, {
      contentType: "application/x-www-form-urlencoded",
      raw: "phoneNumber=%28415%29+555-2699&firstName=Jos%C3%A9&company=Caf%C3%A9",
    });
    const body = await expectStatus(res, 200);
    const m = (await messageOf(s, body.data.messageId))!;
    expect(m.recipientPhone).toBe("+14155552699");
    expect(m.content).toStartWith("Hi José,");
    expect(m.webhookData).toEqual({ phoneNumber: "(415) 555-2699", firstName: "José", company: "Café" });
  });

  test("OPTIONS preflight answers any origin", async () => {
    const form = await createForm(s);
    const res = await fetch(`${s.base}/forms/${form.id}/webhook`, {
      method: "OPTIONS",
      headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("idempotency-key");
  });

  test("no API key needed; a Bearer header changes nothing", async () => {
    const form = await createForm(s);
    await expectStatus(await post(s, form.id, { phoneNumber: nextPhone() }, { headers: { Authorization: "Bearer nonsense" } }), 200);
  });
});

describe("failure codes (nothing written)", () => {
  let form: { id: string };
  beforeAll(async () => {
    form = await createForm(s);
  });

  test("unknown, malformed and deleted form ids are 404 NOT_FOUND with details.formId, never 401", async () => {
    const before = (await totals(s));
    const unknown = crypto.randomUUID();
    for (const id of [unknown, "not-a-uuid", "123"]) {
      const body = await expectStatus(await post(s, id, { phoneNumber: nextPhone() }), 404);
      expect(body.code).toBe("NOT_FOUND");
      expect(body.details.formId).toBe(id);
    }
    const doomed = await createForm(s);
    await expectStatus(await s.api(`/forms/${doomed.id}`, { method: "DELETE" }), 200);
    const body = await expectStatus(await post(s, doomed.id, { phoneNumber: nextPhone() }), 404);
    expect(body.code).toBe("NOT_FOUND");
    expect(body.details.formId).toBe(doomed.id);
    expect((await totals(s))).toEqual(before);
  });

  test("inactive form: 503 FORM_DISABLED with formId and action", async () => {
    const f = await createForm(s);
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const before = (await totals(s));
    const res = await post(s, f.id, { phoneNumber: nextPhone() });
    const body = await expectStatus(res, 503);
    expect(body.code).toBe("FORM_DISABLED");
    expect(body.details.formId).toBe(f.id);
    expect(typeof body.details.action).toBe("string");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("X-RateLimit-Limit")).toBe("100");
    expect((await totals(s))).toEqual(before);
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { isActive: true } }), 200);
    await expectStatus(await post(s, f.id, { phoneNumber: nextPhone() }), 200);
  });

  test("body over 10 KB: 413 with limit and provided (Content-Length and chunked)", async () => {
    const before = (await totals(s));
    const big = JSON.stringify({ phoneNumber: nextPhone(), note: "x".repeat(10_300) });
    const res = await post(s, form.id, null, { raw: big });
    const body = await expectStatus(res, 413);
    expect(body.code).toBe("PAYLOAD_TOO_LARGE");
    expect(body.details).toEqual({ limit: 10240, provided: big.length });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");

    const enc = new TextEncoder();
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 12; i++) c.enqueue(enc.encode("x".repeat(1000)));
        c.close();
      },
    });
    const chunkedRes = await post(s, form.id, null, { raw: stream });
    expect(chunkedRes.headers.get("X-RateLimit-Remaining")).not.toBeNull();
    const chunked = await expectStatus(chunkedRes, 413);
    expect(chunked.code).toBe("PAYLOAD_TOO_LARGE");
    expect(chunked.details.limit).toBe(10240);
    expect(chunked.details.provided).toBeGreaterThan(10240);
    expect((await totals(s))).toEqual(before);
  });

  test("a body of exactly 10 240 bytes is accepted, also chunked", async () => {
    const base = JSON.stringify({ phoneNumber: nextPhone(), note: "" });
    const exact = JSON.stringify({ phoneNumber: JSON.parse(base).phoneNumber, note: "y".repeat(10_240 - base.length) });
    expect(exact.length).toBe(10_240);
    // note exceeds 500 characters, so validation (not the size limit) answers.
    const body = await expectStatus(await post(s, form.id, null, { raw: exact }), 400);
    expect(body.details.field).toBe("note");
    const small = JSON.stringify({ phoneNumber: nextPhone() });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(small));
        c.close();
      },
    });
    await expectStatus(await post(s, form.id, null, { raw: stream }), 200);
  });

  test("malformed JSON, non-object JSON: 400 VALIDATION_ERROR", async () => {
    const before = (await totals(s));
    for (const raw of ["{", '{"phoneNumber": }', "", "[1,2]", "null", '"text"', "42"]) {
      const body = await expectStatus(await post(s, form.id, null, { raw }), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.details.field).toBe("body");
    }
    expect((await totals(s))).toEqual(before);
  });

  test("other content types: 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    for (const ct of ["text/plain", "multipart/form-data; boundary=x", null]) {
      const body = await expectStatus(await post(s, form.id, null, { raw: JSON.stringify({ phoneNumber: nextPhone() }), contentType: ct }), 415);
      expect(body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    }
  });

  test("missing phoneNumber: 400 with details {field, requirement, provided}", async () => {
    const before = (await totals(s));
    const body = await expectStatus(await post(s, form.id, { firstName: "Ann" }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.details.field).toBe("phoneNumber");
    expect(body.details).toHaveProperty("requirement");
    expect(body.details).toHaveProperty("provided");
    expect(body.errors[0].field).toBe("phoneNumber");
    expect((await totals(s))).toEqual(before);
  });

  test("every failing field is listed in errors[]", async () => {
    const body = await expectStatus(
      await post(s, form.id, { phoneNumber: "12", firstName: "x".repeat(51), email: "nope", company: "c".repeat(101) }),
      400,
    );
    expect(body.errors.map((e: any) => e.field).sort()).toEqual(["company", "email", "firstName", "phoneNumber"]);
  });

  test("custom values over 500 characters are refused", async () => {
    const body = await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), favourite: "z".repeat(501) }), 400);
    expect(body.details.field).toBe("favourite");
    await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), favourite: "z".repeat(500) }), 200);
  });
});

describe("phone input forms", () => {
  let form: { id: string };
  beforeAll(async () => {
    form = await createForm(s);
  });
  test.each([
    ["+14155552671", "+14155552671"],
    ["(415) 555-2672", "+14155552672"],
    ["415-555-2673", "+14155552673"],
    ["415.555.2674", "+14155552674"],
    ["4155552675", "+14155552675"],
    ["+1 415 555 2676", "+14155552676"],
    ["+44 7400 123456", "+447400123456"],
  ])("%s is stored as %s", async (input, e164) => {
    const body = await expectStatus(await post(s, form.id, { phoneNumber: input }), 200);
    expect((await messageOf(s, body.data.messageId))!.recipientPhone).toBe(e164);
  });

  test.each([["123"], ["+442071838750"], ["+18005550199"], ["(123) 456-7890"], ["call me"]])("%s is refused", async (input) => {
    const body = await expectStatus(await post(s, form.id, { phoneNumber: input }), 400);
    expect(body.details.field).toBe("phoneNumber");
    expect(body.details.provided).toBe(input);
  });

  test("a number posted as a JSON number is accepted", async () => {
    await expectStatus(await post(s, form.id, { phoneNumber: 4155552677 }), 200);
  });
});

describe("field validation keys through HTTP", () => {
  let form: { id: string };
  beforeAll(async () => {
    form = await createForm(s, {
      messageTemplate: "Hello {{firstName}}",
      fields: [
        { name: "nick", type: "text", label: "Nick", validation: { minLength: 2, maxLength: 5, pattern: "^[a-z]+$" } },
        { name: "bio", type: "text", label: "Bio", validation: { maxLength: 3, message: "Bio is too long, sorry" } },
        { name: "work", type: "email", label: "Work e-mail", validation: { domains: ["acme.com"] } },
        { name: "mustMail", type: "email", label: "Must", required: false, validation: { required: false } },
        { name: "intl", type: "phone", label: "Intl", validation: { format: "international" } },
        { name: "natl", type: "phone", label: "Natl", validation: { format: "national" } },
        { name: "uk", type: "phone", label: "UK", validation: { regions: ["GB"] } },
        { name: "age", type: "number", label: "Age", validation: { min: 18, max: 99, integer: true } },
        { name: "site", type: "url", label: "Site", validation: { protocols: ["https"], domains: ["example.com"] } },
        { name: "when", type: "date", label: "When", validation: { format: "DD/MM/YYYY", min: "01/01/2020", max: "31/12/2030" } },
        { name: "day", type: "date", label: "Day" },
      ],
    });
  });

  const cases: Array<[string, unknown, unknown]> = [
    ["nick", "abc", "a"], // minLength
    ["nick", "abcde", "abcdef"], // maxLength
    ["nick", "abc", "ABC"], // pattern
    ["bio", "ok", "long"], // custom message
    ["work", "jo@acme.com", "jo@other.com"], // domains
    ["work", "jo@acme.com", "not-an-email"], // format
    ["intl", "+14155552671", "4155552671"], // format international
    ["natl", "4155552671", "+14155552671"], // format national
    ["uk", "+447400123456", "+14155552671"], // regions
    ["age", 30, 17], // min
    ["age", "99", 100], // max
    ["age", 42, 42.5], // integer
    ["age", "21", "twenty"], // number
    ["site", "https://example.com/x", "http://example.com/x"], // protocols
    ["site", "https://www.example.com", "https://evil.com"], // domains
    ["when", "15/06/2025", "2025-06-15"], // format
    ["when", "01/01/2020", "31/12/2019"], // min
    ["when", "31/12/2030", "01/01/2031"], // max
    ["day", "2024-02-29", "2023-02-29"], // default format, real date
  ];
  test.each(cases)("%s: %p passes, %p fails", async (field, good, bad) => {
    await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), [field]: good }), 200);
    const before = (await totals(s));
    const body = await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), [field]: bad }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.details.field).toBe(field);
    expect(body.errors.map((e: any) => e.field)).toEqual([field]);
    expect((await totals(s))).toEqual(before);
  });

  test("a field's custom message is used", async () => {
    const body = await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), bio: "much too long" }), 400);
    expect(body.errors[0].message).toBe("Bio is too long, sorry");
  });

  test("required fields and email validation.required", async () => {
    const f = await createForm(s, {
      fields: [
        { name: "company", type: "text", label: "Company", required: true },
        { name: "work", type: "email", label: "Work", validation: { required: true } },
      ],
    });
    const body = await expectStatus(await post(s, f.id, { phoneNumber: nextPhone() }), 400);
    expect(body.errors.map((e: any) => e.field)).toEqual(["company", "work"]);
    await expectStatus(await post(s, f.id, { phoneNumber: nextPhone(), company: "Acme", work: "a@b.co" }), 200);
  });

  test("declared names are case-sensitive: Email does not satisfy email", async () => {
    const f = await createForm(s, { fields: [{ name: "email", type: "email", label: "E-mail", required: true }] });
    const body = await expectStatus(await post(s, f.id, { phoneNumber: nextPhone(), Email: "a@b.co" }), 400);
    expect(body.details.field).toBe("email");
  });

  test("a declared phone field is stored in E.164 in customFields", async () => {
    const body = await expectStatus(await post(s, form.id, { phoneNumber: nextPhone(), uk: "+44 7400 123456" }), 200);
    expect((await contactOf(s, body.data.contactId))!.customFields.uk).toBe("+447400123456");
  });
});

describe("templates", () => {
  async function render(template: string, data: Record<string, unknown>, settings: Record<string, unknown> = { timezone: "UTC" }, fields?: unknown[]) {
    const f = await createForm(s, { messageTemplate: template, settings, ...(fields ? { fields } : {}) });
    const body = await expectStatus(await post(s, f.id, { phoneNumber: nextPhone(), ...data }), 200);
    const m = (await messageOf(s, body.data.messageId))!;
    return { content: m.content as string, meta: m.metadata, form: f };
  }

  test("whitespace inside braces is trimmed; names are case-sensitive; missing → empty", async () => {
    const r = await render("A{{ firstName }}B{{FirstName}}C{{  company}}D{{missing}}E", { firstName: "Ann", company: "Acme" });
    expect(r.content).toBe("AAnnBCAcmeDE");
    expect(r.meta.variablesUsed).toEqual(["firstName", "FirstName", "company", "missing"]);
  });

  test("built-ins: fullName, formName, phoneNumber, email, source, date", async () => {
    const r = await render("{{fullName}}|{{formName}}|{{phoneNumber}}|{{email}}|{{source}}|{{date}}", {
      firstName: "Ann",
      lastName: "Lee",
      email: "a@b.co",
      source: "ads",
    });
    const parts = r.content.split("|");
    expect(parts[0]).toBe("Ann Lee");
    expect(parts[1]).toBe(r.form.name);
    expect(parts[2]).toMatch(/^\+1\d{10}$/);
    expect(parts[3]).toBe("a@b.co");
    expect(parts[4]).toBe("ads");
    expect(parts[5]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test("a submitted value containing {{x}} is inserted verbatim, not re-expanded", async () => {
    const r = await render("Note: {{note}}", { note: "{{firstName}}", firstName: "Ann" });
    expect(r.content).toBe("Note: {{firstName}}");
  });

  test("UCS-2 and segment counting in metadata; long messages allowed", async () => {
    const emoji = await render("Hi {{firstName}} 😀", { firstName: "Ann" });
    expect(emoji.meta.encoding).toBe("UCS-2");
    expect(emoji.meta.segments).toBe(1);
    // Inserted values are capped at 100 characters unless the field allows more.
    const long400 = ["a", "b", "c"].map((name) => ({ name, type: "text", validation: { maxLength: 400 } }));
    const long = await render("{{a}}{{b}}{{c}}", { a: "x".repeat(400), b: "y".repeat(400), c: "z".repeat(400) }, { timezone: "UTC" }, long400);
    expect(long.content.length).toBe(1200);
    expect(long.meta.messageLength).toBe(1200);
    expect(long.meta.encoding).toBe("GSM-7");
    expect(long.meta.segments).toBe(Math.ceil(1200 / 153));
    const ext = await render("{{a}}", { a: "€".repeat(81) }); // extension table: two septets each
    expect(ext.meta.encoding).toBe("GSM-7");
    expect(ext.meta.segments).toBe(2);
  });
});

describe("contacts from submissions", () => {
  test("same phone → same contact: names/e-mail overwrite, custom fields merge, source only if empty, status and tags kept", async () => {
    const f1 = await createForm(s);
    const f2 = await createForm(s);
    const phone = nextPhone();
    const a = await expectStatus(await post(s, f1.id, { phoneNumber: phone, firstName: "Ann", email: "ann@a.co", color: "red", size: "M" }), 200);
    const contactId = a.data.contactId;
    await expectStatus(await s.api(`/contacts/${contactId}`, { method: "PUT", json: { status: "responded", tags: ["vip"] } }), 200);
    const digits = phone.slice(2);
    const b = await expectStatus(
      await post(s, f2.id, { phoneNumber: `(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`, lastName: "Lee", email: "ann@b.co", color: "blue", source: "ads" }),
      200,
    );
    expect(b.data.contactId).toBe(contactId);
    expect(b.data.messageId).not.toBe(a.data.messageId);
    const c = (await contactOf(s, contactId))!;
    expect(c.firstName).toBe("Ann");
    expect(c.lastName).toBe("Lee");
    expect(c.email).toBe("ann@b.co");
    expect(c.customFields).toEqual({ color: "blue", size: "M" });
    expect(c.source).toBe("ads"); // was empty
    expect(c.status).toBe("responded");
    expect(c.tags).toEqual(["vip"]);
    expect(c.formId).toBe(f1.id);
    const found = (await expectStatus(await s.api(`/contacts?limit=100&search=${digits}`), 200)).data.contacts.filter((x: any) => x.phoneNumber === phone);
    expect(found.map((x: any) => x.id)).toEqual([contactId]);
    expect((await expectStatus(await s.api("/contacts?search=ann%20lee&limit=100"), 200)).data.contacts.map((x: any) => x.id)).toContain(contactId);
    expect((await messageOf(s, b.data.messageId))!.recipientName).toBe("Ann Lee");
    // A later source does not replace the first.
    await expectStatus(await post(s, f1.id, { phoneNumber: phone, source: "radio" }), 200);
    expect((await contactOf(s, contactId))!.source).toBe("ads");
    // Only the first submission made the contact: the forms' new contacts count it once.
    const period = async (id: string) => (await expectStatus(await s.api(`/forms/${id}/stats`), 200)).data.stats.periodStats;
    expect(await period(f1.id)).toMatchObject({ submissions: 2, newContacts: 1 });
    expect(await period(f2.id)).toMatchObject({ submissions: 1, newContacts: 0 });
  });

  test("contacts never cross accounts", async () => {
    const other = newAccount(s, { name: "Other co" });
    const theirs = await createForm(s, {}, other.apiKey);
    const mine = await createForm(s);
    const phone = nextPhone();
    const a = await expectStatus(await post(s, mine.id, { phoneNumber: phone }), 200);
    const b = await expectStatus(await post(s, theirs.id, { phoneNumber: phone }), 200);
    expect(a.data.contactId).not.toBe(b.data.contactId);
  });
});

describe("Idempotency-Key", () => {
  test("a retry returns the first answer byte for byte and creates nothing", async () => {
    const f = await createForm(s);
    const phone = nextPhone();
    const first = await post(s, f.id, { phoneNumber: phone, firstName: "A" }, { headers: { "Idempotency-Key": "order-1" } });
    const text1 = await first.text();
    expect(first.status).toBe(200);
    const before = (await totals(s));
    const again = await post(s, f.id, { phoneNumber: phone, firstName: "A" }, { headers: { "Idempotency-Key": "order-1" } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(text1);
    expect((await totals(s))).toEqual(before);
    // The same key with another body is refused, nothing written.
    const changed = await post(s, f.id, { phoneNumber: phone, firstName: "Changed" }, { headers: { "Idempotency-Key": "order-1" } });
    expect((await expectStatus(changed, 422)).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect((await totals(s))).toEqual(before);
    expect((await expectStatus(await s.api(`/contacts?limit=100&search=${phone.slice(2)}`), 200)).data.contacts.find((x: any) => x.phoneNumber === phone).firstName).toBe("A");
    // A new key is a new submission.
    const other = await expectStatus(await post(s, f.id, { phoneNumber: phone }, { headers: { "Idempotency-Key": "order-2" } }), 200);
    expect(other.data.messageId).not.toBe(JSON.parse(text1).data.messageId);
  });

  test("keys are per form", async () => {
    const f1 = await createForm(s);
    const f2 = await createForm(s);
    const a = await expectStatus(await post(s, f1.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "k" } }), 200);
    const b = await expectStatus(await post(s, f2.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "k" } }), 200);
    expect(a.data.messageId).not.toBe(b.data.messageId);
  });

  test("concurrent duplicates create one message", async () => {
    const f = await createForm(s);
    const before = await listTotal(s, `/messages?formId=${f.id}`);
    const phone = nextPhone();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(s, f.id, { phoneNumber: phone }, { headers: { "Idempotency-Key": "same" } }).then(async (r) => [r.status, await r.text()] as const)),
    );
    for (const [status, text] of answers) {
      expect(status).toBe(200);
      expect(text).toBe(answers[0][1]);
    }
    expect(await listTotal(s, `/messages?formId=${f.id}`)).toBe(before + 1);
  });

  test("a key over 255 characters is 400", async () => {
    const f = await createForm(s);
    const before = (await totals(s));
    const body = await expectStatus(await post(s, f.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "k".repeat(256) } }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.details.field).toBe("Idempotency-Key");
    expect((await totals(s))).toEqual(before);
    await expectStatus(await post(s, f.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "k".repeat(255) } }), 200);
  });

  test("after 24 hours the key is forgotten", async () => {
    let now = Date.parse("2026-03-01T12:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const f = await createForm(t);
      const phone = nextPhone();
      const a = await expectStatus(await post(t, f.id, { phoneNumber: phone }, { headers: { "Idempotency-Key": "x" } }), 200);
      now += 23 * 3_600_000;
      const b = await expectStatus(await post(t, f.id, { phoneNumber: phone }, { headers: { "Idempotency-Key": "x" } }), 200);
      expect(b.data.messageId).toBe(a.data.messageId);
      now += 2 * 3_600_000;
      const c = await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "x" } }), 200);
      expect(c.data.messageId).not.toBe(a.data.messageId);
      // What the sweep then removes is read inside the service: test/services/submissions.test.ts.
    } finally {
      await t.stop();
    }
  });
});

describe("per-form rate limit", () => {
  test("the (limit+1)th submission in a minute is 429 with Retry-After and retryAfter; other forms unaffected", async () => {
    let now = Date.parse("2026-03-01T12:00:00.000Z");
    const t = await startTestServer({ webhookLimitPerMinute: 3 }, { clock: () => now });
    try {
      const f = await createForm(t);
      const g = await createForm(t);
      for (let i = 0; i < 3; i++) {
        const res = await post(t, f.id, { phoneNumber: nextPhone() });
        await expectStatus(res, 200);
        expect(res.headers.get("X-RateLimit-Limit")).toBe("3");
        expect(res.headers.get("X-RateLimit-Remaining")).toBe(String(2 - i));
      }
      const before = (await totals(t));
      const res = await post(t, f.id, { phoneNumber: nextPhone() });
      const body = await expectStatus(res, 429);
      expect(body.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(body.retryAfter).toBeGreaterThanOrEqual(1);
      expect(body.details).toEqual({ limit: 3, window: "1 minute", retryAfter: body.retryAfter, scope: "form" });
      expect(res.headers.get("Retry-After")).toBe(String(body.retryAfter));
      expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
      expect(res.headers.get("X-RateLimit-Burst-Limit")).toBe("3");
      expect(res.headers.get("X-RateLimit-Burst-Remaining")).toBe("0");
      expect((await totals(t))).toEqual(before);
      await expectStatus(await post(t, g.id, { phoneNumber: nextPhone() }), 200);
      now += 20_000; // one token back (3 per minute)
      await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
      await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 429);
    } finally {
      await t.stop();
    }
  });
});

describe("daily limit deferral (settings.rateLimitPerDay)", () => {
  test("past the limit the message is scheduled for the start of the next local day with room; nothing refused", async () => {
    // 2026-03-10 22:30 in New York (UTC-4 after the DST change on 8 March) = 2026-03-11T02:30Z
    let now = Date.parse("2026-03-11T02:30:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const f = await createForm(t, { settings: { timezone: "America/New_York", rateLimitPerDay: 2 } });
      const sched = async () => {
        const body = await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
        return { scheduledFor: (await messageOf(t, body.data.messageId))!.scheduledFor as string, body };
      };
      expect((await sched()).scheduledFor).toBe("2026-03-11T02:30:00.000Z");
      expect((await sched()).scheduledFor).toBe("2026-03-11T02:30:00.000Z");
      const third = await sched();
      expect(third.scheduledFor).toBe("2026-03-11T04:00:00.000Z"); // midnight 11 March in New York
      expect(third.body.data.estimatedDelivery).toBe("2026-03-11T04:00:00.000Z");
      expect((await sched()).scheduledFor).toBe("2026-03-11T04:00:00.000Z");
      expect((await sched()).scheduledFor).toBe("2026-03-12T04:00:00.000Z"); // day after is full too
      expect(await listTotal(t, `/contacts?formId=${f.id}`)).toBe(5);
      // Next local day: the deferred messages already fill 11 March, so 12 March is next.
      now = Date.parse("2026-03-11T15:00:00.000Z");
      expect((await sched()).scheduledFor).toBe("2026-03-12T04:00:00.000Z");
      expect((await sched()).scheduledFor).toBe("2026-03-13T04:00:00.000Z");
    } finally {
      await t.stop();
    }
  });

  test("delayMinutes sets scheduledFor = createdAt + delay", async () => {
    const f = await createForm(s, { settings: { delayMinutes: 90 } });
    const body = await expectStatus(await post(s, f.id, { phoneNumber: nextPhone() }), 200);
    const m = (await messageOf(s, body.data.messageId))!;
    expect(Date.parse(m.scheduledFor) - Date.parse(m.createdAt)).toBe(90 * 60_000);
    expect(body.data.estimatedDelivery).toBe(m.scheduledFor);
  });
});

describe("monthly quota", () => {
  test("429 QUOTA_EXCEEDED with {limit, used, resetsAt} once the month's messages reach the quota", async () => {
    let now = Date.parse("2026-05-31T23:59:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    try {
      const acct = newAccount(t, { name: "Small", monthlyQuota: 2 });
      const f = await createForm(t, {}, acct.apiKey);
      await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
      await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
      const before = (await totals(t));
      const refused = await post(t, f.id, { phoneNumber: nextPhone() });
      // Retry-After and retryAfter: the seconds until the quota resets (60 s to midnight UTC).
      expect(refused.headers.get("retry-after")).toBe("60");
      const body = await expectStatus(refused, 429);
      expect(body.code).toBe("QUOTA_EXCEEDED");
      expect(body.retryAfter).toBe(60);
      expect(body.details).toEqual({ limit: 2, used: 2, resetsAt: "2026-06-01T00:00:00.000Z", retryAfter: 60, action: `textwire accounts update ${acct.account.id} --monthly-quota N` });
      expect((await totals(t))).toEqual(before);
      // Accounts without a quota are unaffected.
      const mine = await createForm(t);
      await expectStatus(await post(t, mine.id, { phoneNumber: nextPhone() }), 200);
      // A new month resets the count.
      now = Date.parse("2026-06-01T00:00:01.000Z");
      await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
    } finally {
      await t.stop();
    }
  });

  test("concurrent submissions cannot overshoot the quota; the count survives a restart", async () => {
    const t = await startTestServer();
    let t2: TestServer | undefined;
    try {
      const acct = newAccount(t, { name: "Busy", monthlyQuota: 5 });
      const f = await createForm(t, {}, acct.apiKey);
      const statuses = await Promise.all(Array.from({ length: 12 }, () => post(t, f.id, { phoneNumber: nextPhone() }).then((r) => r.status)));
      expect(statuses.filter((x) => x === 200).length).toBe(5);
      expect(statuses.filter((x) => x === 429).length).toBe(7);
      await t.running.stop();
      t2 = await startTestServer({ db: t.dbPath }, { dir: t.dir });
      const body = await expectStatus(await post(t2, f.id, { phoneNumber: nextPhone() }), 429);
      expect(body.details.used).toBe(5);
    } finally {
      await t2?.stop();
      await t.stop();
    }
  });
});

describe("queue positions", () => {
  test("urgent first, then high, normal, low; within a priority by scheduledFor, then creation order", async () => {
    const now = Date.parse("2026-04-01T10:00:00.000Z");
    // The phones' real budgets give the times (docs/phones.md): none registered, so as if one were.
    const t = await startTestServer({ sendRatePerMinute: 60 }, { clock: () => now, sendingLimits: "real" });
    try {
      const normal = await createForm(t, { settings: { defaultPriority: "normal" } });
      const urgent = await createForm(t, { settings: { defaultPriority: "urgent" } });
      const low = await createForm(t, { settings: { defaultPriority: "low" } });
      const high = await createForm(t, { settings: { defaultPriority: "high" } });
      const later = await createForm(t, { settings: { delayMinutes: 30 } });
      const sub = async (f: { id: string }) => (await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200)).data;
      const n1 = await sub(normal);
      expect(n1.queuePosition).toBe(1);
      expect(n1.estimatedDelivery).toBe("2026-04-01T10:00:00.000Z");
      const n2 = await sub(normal);
      expect(n2.queuePosition).toBe(2);
      // 1 ahead, and the default budget's pause between two texts of a phone is 3-8 s (5.5 on average).
      expect(n2.estimatedDelivery).toBe("2026-04-01T10:00:05.500Z");
      expect(n2.estimate).toEqual({ basis: "no-phone-connected" });
      const l1 = await sub(low);
      expect(l1.queuePosition).toBe(3);
      const u1 = await sub(urgent);
      expect(u1.queuePosition).toBe(1);
      const d1 = await sub(later); // normal, scheduled 30 minutes out: after the due normals
      expect(d1.queuePosition).toBe(4);
      expect(d1.estimatedDelivery).toBe("2026-04-01T10:30:00.000Z");
      const h1 = await sub(high);
      expect(h1.queuePosition).toBe(2);
      const n3 = await sub(normal);
      expect(n3.queuePosition).toBe(5); // urgent, high, n1, n2, n3 | delayed, low
      // A tool asking for work gets the due ones in that order (the delayed one is not due yet).
      const handed = (await expectStatus(await t.api("/messages/next", { method: "POST", json: { limit: 10 } }), 200)).data.messages.map((m: { id: string }) => m.id);
      expect(handed).toEqual([u1, h1, n1, n2, n3, l1].map((x) => x.messageId));
      const msgs = (await Promise.all([u1.messageId, h1.messageId].map((id) => messageOf(t, id)))).map((m) => m!.priority).sort();
      expect(msgs).toEqual(["high", "urgent"]);
    } finally {
      await t.stop();
    }
  });

  test("each account has its own queue", async () => {
    const t = await startTestServer();
    try {
      const other = newAccount(t, { name: "Other" });
      const mine = await createForm(t);
      const theirs = await createForm(t, {}, other.apiKey);
      await expectStatus(await post(t, mine.id, { phoneNumber: nextPhone() }), 200);
      await expectStatus(await post(t, mine.id, { phoneNumber: nextPhone() }), 200);
      const b = await expectStatus(await post(t, theirs.id, { phoneNumber: nextPhone() }), 200);
      expect(b.data.queuePosition).toBe(1);
    } finally {
      await t.stop();
    }
  });

  test("the queue is rebuilt from SQLite after a restart on the same database", async () => {
    const now = Date.parse("2026-04-01T10:00:00.000Z");
    const t = await startTestServer({}, { clock: () => now });
    let t2: TestServer | undefined;
    try {
      const forms = [
        await createForm(t, { settings: { defaultPriority: "low" } }),
        await createForm(t, { settings: { defaultPriority: "urgent", delayMinutes: 5 } }),
        await createForm(t),
        await createForm(t, { settings: { defaultPriority: "high" } }),
      ];
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) {
        const b = await expectStatus(await post(t, forms[i % 4].id, { phoneNumber: nextPhone() }), 200);
        ids.push(b.data.messageId);
      }
      // A message that is no longer queued must not come back.
      // arrange: sent behind the queue's back, as a crash between the report and the queue leaves it
      t.running.deps.sqlite.query("UPDATE messages SET status = 'sent', sent_at = created_at WHERE id = ?").run(ids[0]);
      t.running.deps.queue.remove(ids[0]);
      await t.running.stop();
      let clock = now;
      t2 = await startTestServer({ db: t.dbPath }, { dir: t.dir, clock: () => clock });
      // New submissions continue the creation order after the old ones.
      const next = (await expectStatus(await post(t2, forms[2].id, { phoneNumber: nextPhone() }), 200)).data.messageId as string;
      // The rebuilt queue, as a tool asking for work gets it (the first server's key is in the file):
      // the due texts by priority, each priority in creation order, the new one after the old normals …
      const take = async () => (await expectStatus(await t2!.api("/messages/next", { method: "POST", key: t.adminKey, json: { limit: 50, leaseSeconds: 3600 } }), 200)).data.messages.map((m: { id: string }) => m.id);
      const of = (form: number) => ids.filter((_, i) => i % 4 === form);
      expect(await take()).toEqual([...of(3), ...of(2), next, ...of(0).filter((id) => id !== ids[0])]);
      // … then the delayed urgent ones once due; the one sent behind the queue's back never.
      clock = now + 5 * 60_000 + 1_000;
      expect(await take()).toEqual(of(1));
    } finally {
      await t2?.stop();
      await t.stop();
    }
  });
});

describe("database unavailable", () => {
  test("a write lock held by another process past busy_timeout is 503 SERVICE_UNAVAILABLE with Retry-After, nothing written", async () => {
    const { Database } = await import("bun:sqlite");
    const t = await startTestServer();
    const other = new Database(t.dbPath); // arrange: another process's connection, to hold the write lock
    try {
      const f = await createForm(t);
      // arrange: the lock held past a short busy timeout
      t.running.deps.sqlite.exec("PRAGMA busy_timeout = 50");
      other.exec("BEGIN IMMEDIATE");
      const before = (await totals(t));
      const res = await post(t, f.id, { phoneNumber: nextPhone() });
      const body = await expectStatus(res, 503);
      expect(body.code).toBe("SERVICE_UNAVAILABLE");
      expect(res.headers.get("Retry-After")).toBe("1");
      other.exec("ROLLBACK"); // arrange: the lock let go
      expect((await totals(t))).toEqual(before);
      // Nothing of the refused post was left in the queue: the next one is first in line.
      expect((await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200)).data.queuePosition).toBe(1);
    } finally {
      other.close(); // arrange: (the other connection closed)
      await t.stop();
    }
  });
});

describe("a write that fails after the queue entry went in", () => {
  test("the idempotency row failing rolls the submission back and leaves no queue entry", async () => {
    const t = await startTestServer();
    try {
      const f = await createForm(t);
      const before = (await totals(t));
      // arrange: an I/O error on the job's last write, stood in for by a trigger
      t.running.deps.sqlite.run("CREATE TEMP TRIGGER idem_fails BEFORE INSERT ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
      const res = await post(t, f.id, { phoneNumber: nextPhone() }, { headers: { "Idempotency-Key": "k-fails" } });
      expect(res.status).toBe(500);
      expect((await totals(t))).toEqual(before);
      // The next submission is unaffected and is the only one the queue holds: first in line.
      t.running.deps.sqlite.run("DROP TRIGGER temp.idem_fails"); // arrange: the disk well again
      const ok = await expectStatus(await post(t, f.id, { phoneNumber: nextPhone() }), 200);
      expect(ok.data.queuePosition).toBe(1);
      expect(await listTotal(t, "/messages?status=queued")).toBe(1);
    } finally {
      await t.stop();
    }
  });
});
