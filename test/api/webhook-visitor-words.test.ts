/**
 * What a website visitor reads when a form refuses a post (docs/api-decisions.md, "Plain words
 * for visitors"): the built-in error page and the JSON `message` name each field by its label in
 * plain words; `details` and `errors` keep the field names for the website's code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { listTotal } from "../helpers/reads";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

const createForm = async (overrides: Record<string, unknown> = {}) =>
  (await expectStatus(await s.api("/forms", { method: "POST", json: formBody(overrides) }), 201)).data.form as { id: string; webhookUrl: string };

/** A booking form whose fields all carry labels, as the dashboard's builder makes them. */
const labelled = () =>
  createForm({
    messageTemplate: "Hi {{firstName}}, we got your request for {{service}}.",
    fields: [
      { name: "phoneNumber", type: "phone", label: "Your mobile" },
      { name: "firstName", type: "text", label: "Your name", required: true },
      { name: "service", type: "text", label: "Which service" },
    ],
  });

/** Contacts and texts the account holds, as the API counts them: a refused post adds neither. */
const countRows = async () => (await listTotal(s, "/contacts")) + (await listTotal(s, "/messages"));

function postForm(url: string, body: Record<string, string>, accept = BROWSER_ACCEPT) {
  return fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: accept }, body: new URLSearchParams(body).toString() });
}

describe("a website form's error page", () => {
  test("names the field's label, not its name", async () => {
    const form = await labelled();
    const before = await countRows();
    const res = await postForm(form.webhookUrl, { phoneNumber: "+14155550150", firstName: "Ann", service: "see evil.example/win" });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain("Please leave links out of &#39;Which service&#39;.");
    expect(page).not.toMatch(/\bservice must|phoneNumber|firstName/);
    expect(await countRows()).toBe(before);
  });

  test("lists every field's problem, each by its label", async () => {
    const form = await labelled();
    const page = await (await postForm(form.webhookUrl, { phoneNumber: "12" })).text();
    expect(page).toContain("<p>Please enter a mobile phone number in &#39;Your mobile&#39;.</p>");
    expect(page).toContain("<p>Please fill in &#39;Your name&#39;.</p>");
    expect(page).not.toContain("phoneNumber");
  });

  test("a landline and a number from another country are explained", async () => {
    const form = await createForm({ settings: { delayMinutes: 0, timezone: "UTC", allowedCountries: ["US"] } });
    const landline = await (await postForm(form.webhookUrl, { phoneNumber: "+442071838750" })).text();
    expect(landline).toContain("That number is a landline; please enter a mobile number.");
    const abroad = await (await postForm(form.webhookUrl, { phoneNumber: "+447911123456" })).text();
    expect(abroad).toContain("Please enter a mobile phone number (US).");
  });
});

describe("the JSON a website shows", () => {
  test("message in plain words; details and errors keep the field names", async () => {
    const form = await labelled();
    const b = await expectStatus(
      await fetch(form.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550151", firstName: "Ann", service: "www.evil.example" }) }),
      400,
    );
    expect(b.code).toBe("VALIDATION_ERROR");
    expect(b.message).toBe("Please leave links out of 'Which service'.");
    expect(b.details).toMatchObject({ field: "service", requirement: "no links" });
    expect(b.errors).toEqual([{ field: "service", message: "service must not contain a link or web address (it is put into the text message)" }]);
  });

  test("several problems: one sentence each, in the form's order", async () => {
    const form = await labelled();
    const b = await expectStatus(await fetch(form.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+18005550199" }) }), 400);
    expect(b.message).toBe("That number is a toll-free number; please enter a mobile number in 'Your mobile'. Please fill in 'Your name'.");
    expect(b.errors.map((e: { field: string }) => e.field)).toEqual(["phoneNumber", "firstName"]);
  });

  test("an unlabelled built-in field gets its plain name", async () => {
    const form = await createForm({ fields: [{ name: "email", type: "email", required: true }] });
    const b = await expectStatus(await fetch(form.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550152", email: "nope" }) }), 400);
    expect(b.message).toBe("Please enter an e-mail address like name@example.com in 'E-mail'.");
    expect(b.details.field).toBe("email");
  });

  test("a refusal of the whole post is plain too; its figures stay in details", async () => {
    const form = await createForm();
    await expectStatus(await s.api(`/forms/${form.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const b = await expectStatus(await fetch(form.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550153" }) }), 503);
    expect(b.code).toBe("FORM_DISABLED");
    expect(b.message).toBe("This form is not accepting messages at the moment.");
    expect(b.details.formId).toBe(form.id);
  });
});
