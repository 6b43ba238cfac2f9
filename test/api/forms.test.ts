import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, withServer, type TestServer } from "../helpers/server";
import { contactOf, messageOf } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
let otherAdmin: string;

beforeAll(async () => {
  s = await startTestServer();
  otherAdmin = newAccount(s, { name: "Other" }).apiKey;
});
afterAll(() => s.stop());

describe("POST /forms", () => {
  test("creates a form: 201 with id, name, webhookUrl, isActive, timestamps", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Contact us" }) }), 201);
    expect(body.status).toBe("success");
    const f = body.data.form;
    expect(f.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(f.name).toBe("Contact us");
    expect(f.isActive).toBe(true);
    expect(f.webhookUrl).toBe(`${s.url}/v1/forms/${f.id}/webhook`);
    expect(Date.parse(f.createdAt)).toBeGreaterThan(0);
    expect(f.updatedAt).toBe(f.createdAt);
  });

  test("lists every validation failure at once in errors[]", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: { name: "", fields: [] } }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    const fields = body.errors.map((e: any) => e.field);
    expect(fields).toContain("name");
    expect(fields).toContain("messageTemplate");
    expect(fields).toContain("fields");
    expect(body.details.field).toBe(body.errors[0].field);
  });

  test("template over 1600 characters is refused", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "x".repeat(1601) }) }), 400);
    expect(body.errors.map((e: any) => e.field)).toContain("messageTemplate");
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "x".repeat(1600) }) }), 201);
  });

  test("bad field definitions and settings are refused with their paths", async () => {
    const body = await expectStatus(
      await s.api("/forms", {
        method: "POST",
        json: formBody({
          fields: [
            { name: "1bad", type: "text" },
            { name: "age", type: "number", validation: { minLength: 3 } },
            { name: "when", type: "calendar" },
          ],
          settings: { timezone: "Mars/Olympus", delayMinutes: -1 },
        }),
      }),
      400,
    );
    const fields: string[] = body.errors.map((e: any) => e.field);
    expect(fields.some((f) => f.startsWith("fields[0]"))).toBe(true);
    expect(fields.some((f) => f.startsWith("fields[1].validation"))).toBe(true);
    expect(fields.some((f) => f.startsWith("fields[2]"))).toBe(true);
    expect(fields).toContain("settings.timezone");
  });

  test("wrong JSON types are 400 VALIDATION_ERROR, never 500", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: { ...formBody(), description: 42 } }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.errors[0].field).toBe("description");
    await expectStatus(await s.api("/forms", { method: "POST", json: [1, 2] }), 400);
    await expectStatus(await s.api("/forms", { method: "POST", json: "text" }), 400);
  });

  test("duplicate names (case-insensitive) are 409 DUPLICATE_FORM_NAME", async () => {
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Quote request" }) }), 201);
    const body = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "QUOTE REQUEST" }) }), 409);
    expect(body.code).toBe("DUPLICATE_FORM_NAME");
  });

  test("the same name in another account is fine", async () => {
    await expectStatus(await s.api("/forms", { method: "POST", key: otherAdmin, json: formBody({ name: "Contact us" }) }), 201);
  });

  test("malformed JSON is 400 VALIDATION_ERROR", async () => {
    const res = await s.api("/forms", { method: "POST", body: "{not json", headers: { "Content-Type": "application/json" } });
    const body = await expectStatus(res, 400);
    expect(body.status).toBe("error");
    expect(body.code).toBe("VALIDATION_ERROR");
  });

  test("a non-JSON content type is 415", async () => {
    const body = await expectStatus(await s.api("/forms", { method: "POST", body: "name=x", headers: { "Content-Type": "text/plain" } }), 415);
    expect(body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("webhookUrl follows --public-url", async () => {
    const p = await startTestServer({ publicUrl: "https://sms.example.com" });
    try {
      const body = await expectStatus(await p.api("/forms", { method: "POST", json: formBody() }), 201);
      expect(body.data.form.webhookUrl).toBe(`https://sms.example.com/v1/forms/${body.data.form.id}/webhook`);
    } finally {
      await p.stop();
    }
  });
});

describe("GET /forms", () => {
  test("paginates, filters by isActive and searches name or description", async () => {
    const t = await startTestServer();
    try {
      for (let i = 0; i < 7; i++) {
        await expectStatus(await t.api("/forms", { method: "POST", json: formBody({ name: `Lead ${i}`, description: i === 3 ? "Spring PROMO page" : "plain" }) }), 201);
      }
      const list = await expectStatus(await t.api("/forms?page=2&limit=3"), 200);
      expect(list.data.total).toBe(7);
      expect(list.data.page).toBe(2);
      expect(list.data.limit).toBe(3);
      expect(list.data.forms.length).toBe(3);
      expect(Object.keys(list.data.forms[0]).sort()).toEqual(["createdAt", "description", "id", "isActive", "name", "updatedAt", "webhookUrl"]);
      const last = await expectStatus(await t.api("/forms?page=3&limit=3"), 200);
      expect(last.data.forms.length).toBe(1);
      const beyond = await expectStatus(await t.api("/forms?page=9&limit=3"), 200);
      expect(beyond.data.forms).toEqual([]);

      const id = list.data.forms[0].id;
      await expectStatus(await t.api(`/forms/${id}`, { method: "PUT", json: { isActive: false } }), 200);
      const inactive = await expectStatus(await t.api("/forms?isActive=false"), 200);
      expect(inactive.data.total).toBe(1);
      expect(inactive.data.forms[0].id).toBe(id);
      expect((await expectStatus(await t.api("/forms?isActive=true"), 200)).data.total).toBe(6);

      const promo = await expectStatus(await t.api("/forms?search=promo"), 200);
      expect(promo.data.forms.map((f: any) => f.name)).toEqual(["Lead 3"]);
      expect((await expectStatus(await t.api("/forms?search=lead%205"), 200)).data.total).toBe(1);
      expect((await expectStatus(await t.api("/forms?search=%25"), 200)).data.total).toBe(0);
    } finally {
      await t.stop();
    }
  });

  test("page and limit out of range are 400", async () => {
    for (const q of ["page=0", "limit=0", "limit=101", "page=abc", "isActive=maybe"]) {
      const body = await expectStatus(await s.api(`/forms?${q}`), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.errors.length).toBeGreaterThan(0);
    }
  });

});

describe("GET /forms/:id", () => {
  test("returns every form field", async () => {
    const created = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 5, timezone: "America/New_York", rateLimitPerDay: 10 } }) }), 201)).data.form;
    const f = (await expectStatus(await s.api(`/forms/${created.id}`), 200)).data.form;
    for (const k of ["id", "name", "description", "webhookUrl", "messageTemplate", "isActive", "fields", "settings", "createdAt", "updatedAt"]) {
      expect(f).toHaveProperty(k);
    }
    expect(f.settings).toEqual({ delayMinutes: 5, timezone: "America/New_York", rateLimitPerDay: 10 });
    expect(f.fields[1].validation).toEqual({ maxLength: 100 });
    expect(f.accountId).toBeUndefined();
  });

  test("unknown, malformed and other-account ids are 404 FORM_NOT_FOUND", async () => {
    const mine = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
      const body = await expectStatus(await s.api(`/forms/${id}`), 404);
      expect(body.code).toBe("FORM_NOT_FOUND");
    }
    const body = await expectStatus(await s.api(`/forms/${mine.id}`, { key: otherAdmin }), 404);
    expect(body.code).toBe("FORM_NOT_FOUND");
    await expectStatus(await s.api(`/forms/${mine.id}`, { key: otherAdmin, method: "PUT", json: { name: "stolen" } }), 404);
    await expectStatus(await s.api(`/forms/${mine.id}`, { key: otherAdmin, method: "DELETE" }), 404);
    await expectStatus(await s.api(`/forms/${mine.id}`), 200);
  });
});

describe("PUT /forms/:id", () => {
  test("partial update changes only what is given and moves updatedAt", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Before" }) }), 201)).data.form;
    const upd = (await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { name: "After", messageTemplate: "Hello {{firstName}}" } }), 200)).data.form;
    expect(upd.id).toBe(f.id);
    expect(upd.name).toBe("After");
    expect(upd.messageTemplate).toBe("Hello {{firstName}}");
    expect(Date.parse(upd.updatedAt)).toBeGreaterThan(Date.parse(f.updatedAt));
    const full = (await expectStatus(await s.api(`/forms/${f.id}`), 200)).data.form;
    expect(full.description).toBe("Contact form");
    expect(full.fields.length).toBe(2);
  });

  test("settings merge; null clears a setting", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 5, rateLimitPerDay: 3 } }) }), 201)).data.form;
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { settings: { timezone: "Europe/Berlin", rateLimitPerDay: null } } }), 200);
    const full = (await expectStatus(await s.api(`/forms/${f.id}`), 200)).data.form;
    expect(full.settings).toEqual({ delayMinutes: 5, timezone: "Europe/Berlin" });
  });

  test("validation applies to updates and changes nothing on failure", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Keep me" }) }), 201)).data.form;
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { name: "Renamed", fields: [] } }), 400);
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { isActive: "yes" } }), 400);
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { messageTemplate: "" } }), 400);
    expect((await expectStatus(await s.api(`/forms/${f.id}`), 200)).data.form.name).toBe("Keep me");
  });

  test("renaming onto another form's name is 409; keeping its own name is fine", async () => {
    const a = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Alpha" }) }), 201)).data.form;
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Beta" }) }), 201);
    const body = await expectStatus(await s.api(`/forms/${a.id}`, { method: "PUT", json: { name: "beta" } }), 409);
    expect(body.code).toBe("DUPLICATE_FORM_NAME");
    await expectStatus(await s.api(`/forms/${a.id}`, { method: "PUT", json: { name: "ALPHA" } }), 200);
  });
});

describe("DELETE /forms/:id", () => {
  test("deletes the form; a second delete is 404", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const body = await expectStatus(await s.api(`/forms/${f.id}`, { method: "DELETE" }), 200);
    expect(body.data.deletedId).toBe(f.id);
    expect(typeof body.message).toBe("string");
    await expectStatus(await s.api(`/forms/${f.id}`), 404);
    await expectStatus(await s.api(`/forms/${f.id}`, { method: "DELETE" }), 404);
  });

  test("cascades to submissions, messages and the contacts the form created", async () => {
    // A server of its own: its queue holds only what this test queues.
    await withServer(async (s) => {
      const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
      const other = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
      // Made as visitors make them: a post to each form, and one to the other form from the deleted
      // form's contact (the same number: the same contact, still the deleted form's).
      const submit = async (formId: string, phoneNumber: string) =>
        (await expectStatus(await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber }) }), 200)).data;
      const own = await submit(f.id, "+12015550101");
      const kept = await submit(other.id, "+12015550102");
      const cross = await submit(other.id, "+12015550101");
      expect(cross.contactId).toBe(own.contactId);
      expect([own, kept, cross].map((x) => x.queuePosition)).toEqual([1, 2, 3]);

      await expectStatus(await s.api(`/forms/${f.id}`, { method: "DELETE" }), 200);
      expect(await contactOf(s, own.contactId)).toBeNull();
      expect(await contactOf(s, kept.contactId)).not.toBeNull();
      // A message from the other form to the deleted form's contact goes with the contact.
      for (const m of [own, cross]) expect(await messageOf(s, m.messageId)).toBeNull();
      expect(await messageOf(s, kept.messageId)).not.toBeNull();
      const formsOfSubmissions = (await expectStatus(await s.api("/submissions?limit=100"), 200)).data.submissions.map((x: any) => x.formId);
      expect(formsOfSubmissions).not.toContain(f.id);
      expect(formsOfSubmissions).toContain(other.id);
      // The deleted texts left the queue and the kept one stayed: the next text is second in line.
      expect((await submit(other.id, "+12015550103")).queuePosition).toBe(2);
    });
  });
});
