import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { newApiKey } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";
import { raiseApiLimits } from "../helpers/reads";

/**
 * Every accepted submission is kept with what the visitor sent and listed for the team
 * (docs/api-decisions.md, "The owner hears back", every request kept).
 */
let s: TestServer;
let form: any;
let other: { account: { id: string }; apiKey: string };
const post = (json: Record<string, unknown>, formId = form.id, headers: Record<string, string> = {}) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(json) });

beforeAll(async () => {
  s = await startTestServer();
  raiseApiLimits(s);
  form = (
    await expectStatus(
      await s.api("/forms", {
        method: "POST",
        json: formBody({
          name: "Contact us",
          fields: [
            { name: "firstName", type: "text", label: "Your name" },
            { name: "message", type: "text", label: "Message", validation: { maxLength: 500 } },
          ],
        }),
      }),
      201,
    )
  ).data.form;
  other = newAccount(s, { name: "Other shop" });
});
afterAll(() => s.stop());

describe("each submission keeps what the visitor sent", () => {
  test("a second submission does not overwrite the first: both are listed, newest first, with the form's labels", async () => {
    const a = await expectStatus(await post({ phoneNumber: "+12015550101", firstName: "Ann", message: "Do you bake gluten-free bread?" }), 200);
    const b = await expectStatus(await post({ phoneNumber: "+12015550101", firstName: "Ann", message: "Me again, any news?" }), 200);
    const contactId = a.data.contactId;
    expect(b.data.contactId).toBe(contactId);
    const list = await expectStatus(await s.api(`/submissions?contactId=${contactId}`), 200);
    expect(list.data.pagination).toEqual({ total: 2, page: 1, limit: 50, totalPages: 1 });
    const [newest, oldest] = list.data.submissions;
    expect(newest.values.find((v: any) => v.field === "message")).toEqual({ field: "message", label: "Message", value: "Me again, any news?" });
    expect(oldest.values.find((v: any) => v.field === "message").value).toBe("Do you bake gluten-free bread?");
    expect(oldest.values.slice(0, 2).map((v: any) => v.label)).toEqual(["Your name", "Message"]);
    expect(oldest.values.find((v: any) => v.field === "phoneNumber").value).toBe("+12015550101");
    expect(newest).toMatchObject({ formId: form.id, formName: "Contact us", contactId, messageId: b.data.messageId, suppressed: null, readAt: null });
    const one = await expectStatus(await s.api(`/submissions/${oldest.id}`), 200);
    expect(one.data.submission).toEqual(oldest);
    expect(Object.keys(one.data.submission).sort()).toEqual(["contactId", "createdAt", "formId", "formName", "id", "messageId", "readAt", "suppressed", "values"]);
  });

  test("marking read sets readAt once; unread=true leaves it out", async () => {
    const r = await expectStatus(await post({ phoneNumber: "+12015550102", message: "Cake for Saturday?" }), 200);
    const id = (await expectStatus(await s.api(`/submissions?contactId=${r.data.contactId}`), 200)).data.submissions[0].id;
    const first = (await expectStatus(await s.api(`/submissions/${id}/read`, { method: "POST" }), 200)).data.submission.readAt;
    expect(typeof first).toBe("string");
    expect((await expectStatus(await s.api(`/submissions/${id}/read`, { method: "POST" }), 200)).data.submission.readAt).toBe(first);
    const unread = (await expectStatus(await s.api("/submissions?unread=true&limit=100"), 200)).data.submissions.map((x: any) => x.id);
    expect(unread).not.toContain(id);
  });

  test("an opted-out visitor's request is kept, marked opted-out, and not promised a text", async () => {
    const phone = "+12015550103";
    const first = await expectStatus(await post({ phoneNumber: phone, message: "Hello" }), 200);
    await expectStatus(await s.api(`/contacts/${first.data.contactId}/opt-out`, { method: "POST", json: { reason: "asked by phone" } }), 200);
    const again = await expectStatus(await post({ phoneNumber: phone, message: "Are you open Sunday?" }), 200);
    expect(again.data.suppressed).toBe("opted-out");
    expect(again.message).not.toMatch(/will be in touch by text|message queued/i);
    const page = await fetch(`${s.base}/forms/${form.id}/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "text/html" },
      body: new URLSearchParams({ phoneNumber: phone, message: "Once more" }).toString(),
    });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Thank you!");
    expect(html).not.toContain("by text message");
    const list = (await expectStatus(await s.api("/submissions?suppressed=opted-out"), 200)).data.submissions;
    expect(list.map((x: any) => x.values.find((v: any) => v.field === "message")?.value)).toEqual(["Once more", "Are you open Sunday?"]);
    expect(list.every((x: any) => x.suppressed === "opted-out" && x.messageId === null)).toBe(true);
    const none = (await expectStatus(await s.api("/submissions?suppressed=false&limit=100"), 200)).data.submissions;
    expect(none.some((x: any) => x.suppressed !== null)).toBe(false);
  });

  test("filters by form and by time; another form's submissions are left out", async () => {
    const f2 = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Orders" }) }), 201)).data.form;
    await expectStatus(await post({ phoneNumber: "+12015550104", company: "Acme" }, f2.id), 200);
    const mine = (await expectStatus(await s.api(`/submissions?formId=${f2.id}`), 200)).data;
    expect(mine.pagination.total).toBe(1);
    expect(mine.submissions[0].values.find((v: any) => v.field === "company")).toEqual({ field: "company", label: "Company", value: "Acme" });
    const later = (await expectStatus(await s.api("/submissions?from=2999-01-01"), 200)).data;
    expect(later.pagination.total).toBe(0);
    const all = (await expectStatus(await s.api("/submissions?to=2999-01-01&limit=2&page=2"), 200)).data;
    expect(all.pagination.page).toBe(2);
    expect(all.submissions.length).toBe(2);
  });

  test("CSV export: one row per submission, columns by label, formula cells neutralised", async () => {
    await expectStatus(await post({ phoneNumber: "+12015550105", message: "=HYPERLINK(\"x\")" }), 200);
    const res = await s.api(`/submissions/export?formId=${form.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const text = await res.text();
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toContain("Message");
    expect(lines[0].startsWith("Received,Form,")).toBe(true);
    expect(text).toContain("'=HYPERLINK");
    expect(text).toContain("not sent: opted out of texts");
    const total = (await expectStatus(await s.api(`/submissions?formId=${form.id}`), 200)).data.pagination.total;
    expect(lines.length).toBe(total + 1);
  });

  test("a deleted contact's submissions go with it", async () => {
    const r = await expectStatus(await post({ phoneNumber: "+12015550106", message: "Delete me" }), 200);
    await expectStatus(await s.api(`/contacts/${r.data.contactId}`, { method: "DELETE" }), 200);
    const list = (await expectStatus(await s.api(`/submissions?limit=100`), 200)).data.submissions;
    expect(list.some((x: any) => x.contactId === r.data.contactId)).toBe(false);
  });
});

describe("hostile input and other accounts", () => {
  test("bad filters are 400 naming each, never 500", async () => {
    const bad = await expectStatus(await s.api("/submissions?formId=nope&contactId=1&from=yesterday&to=2026-13-45&suppressed=maybe&unread=2&limit=0"), 400);
    expect(bad.code).toBe("VALIDATION_ERROR");
    expect(bad.errors.map((e: any) => e.field).sort()).toEqual(["contactId", "formId", "from", "limit", "suppressed", "to", "unread"]);
    expect((await expectStatus(await s.api("/submissions/export?suppressed=x"), 400)).errors[0].field).toBe("suppressed");
    for (const q of ["page=-1", "limit=1000", "from=%00", "formId=' OR 1=1 --"]) await expectStatus(await s.api(`/submissions?${q}`), 400);
  });

  test("another account's submission, form and contact are 404; its list is its own", async () => {
    const mine = (await expectStatus(await s.api("/submissions?limit=1"), 200)).data.submissions[0];
    expect((await expectStatus(await s.api(`/submissions/${mine.id}`, { key: other.apiKey }), 404)).code).toBe("SUBMISSION_NOT_FOUND");
    expect((await expectStatus(await s.api(`/submissions/${mine.id}/read`, { method: "POST", key: other.apiKey }), 404)).code).toBe("SUBMISSION_NOT_FOUND");
    expect((await expectStatus(await s.api(`/submissions?formId=${form.id}`, { key: other.apiKey }), 404)).code).toBe("FORM_NOT_FOUND");
    expect((await expectStatus(await s.api(`/submissions?contactId=${mine.contactId}`, { key: other.apiKey }), 404)).code).toBe("CONTACT_NOT_FOUND");
    expect((await expectStatus(await s.api(`/submissions/export?formId=${form.id}`, { key: other.apiKey }), 404)).code).toBe("FORM_NOT_FOUND");
    expect((await expectStatus(await s.api("/submissions", { key: other.apiKey }), 200)).data.submissions).toEqual([]);
    expect((await expectStatus(await s.api("/submissions/not-an-id"), 404)).code).toBe("SUBMISSION_NOT_FOUND");
    expect((await expectStatus(await s.api(`/submissions/${crypto.randomUUID()}`), 404)).code).toBe("SUBMISSION_NOT_FOUND");
  });

  test("the export is for admins; a standard key reads the list", async () => {
    const std = await newApiKey(s, "standard_access");
    await expectStatus(await s.api("/submissions", { key: std }), 200);
    expect((await expectStatus(await s.api("/submissions/export", { key: std }), 403)).code).toBe("PERMISSION_ERROR");
  });
});

describe("dates in the texts", () => {
  test("a date field reads \"Thu, Dec 10\" in the form's language; a template asks for another way by suffix", async () => {
    const f = (
      await expectStatus(
        await s.api("/forms", {
          method: "POST",
          json: formBody({
            name: "Cakes",
            messageTemplate: "Your cake is ready for pickup on {{pickup}} ({{pickup.iso}}).",
            fields: [{ name: "pickup", type: "date", label: "Pickup day" }],
          }),
        }),
        201,
      )
    ).data.form;
    const r = await expectStatus(await post({ phoneNumber: "+12015550120", pickup: "2099-12-10" }, f.id), 200);
    const m = (await expectStatus(await s.api(`/messages/${r.data.messageId}`), 200)).data.message;
    expect(m.content).toBe("Your cake is ready for pickup on Thu, Dec 10, 2099 (2099-12-10).");
    const fr = (await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { settings: { language: "fr" } } }), 200)).data.form;
    expect(fr.settings.language).toBe("fr");
    const r2 = await expectStatus(await post({ phoneNumber: "+12015550121", pickup: "2099-12-10" }, f.id), 200);
    expect((await expectStatus(await s.api(`/messages/${r2.data.messageId}`), 200)).data.message.content).toBe("Your cake is ready for pickup on jeu. 10 déc. 2099 (2099-12-10).");
    expect((await expectStatus(await s.api(`/forms/${f.id}`, { method: "PUT", json: { settings: { language: "klingon!" } } }), 400)).errors[0].field).toBe("settings.language");
  });
});
