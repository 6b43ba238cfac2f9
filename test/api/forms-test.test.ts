/**
 * "Send a test submission" (POST /v1/forms/:id/test; docs/api-decisions.md, "Test submissions"):
 * the form's checks and template on sample values, and nothing written — no contact made, none
 * renamed or changed — unless the owner asks for the text on their own phone, which then goes as
 * a test message linked to no contact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";
import { contactByPhone, listTotal } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
let form: { id: string; webhookUrl: string; name: string };
beforeAll(async () => {
  s = await startTestServer();
  form = (
    await expectStatus(
      await s.api("/forms", {
        method: "POST",
        json: formBody({
          name: "Bookings",
          messageTemplate: "Hi {{firstName}}, we will call you about {{service}}.",
          fields: [
            { name: "firstName", type: "text", label: "Your name" },
            { name: "service", type: "text", label: "Which service" },
          ],
        }),
      }),
      201,
    )
  ).data.form;
});
afterAll(() => s.stop());

/** What the account holds, as the API counts it. */
const rows = async () => ({ contacts: await listTotal(s, "/contacts"), messages: await listTotal(s, "/messages"), submissions: await listTotal(s, "/submissions") });
const tryForm = (body: unknown, key?: string | null, id = form.id) => s.api(`/forms/${id}/test`, { method: "POST", json: body, ...(key !== undefined ? { key } : {}) });

async function contactAt(phone: string, firstName: string) {
  return (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone, firstName, email: `${firstName.toLowerCase()}@example.com` } }), 201)).data.contact;
}

describe("a test submission", () => {
  test("leaves an existing contact's name unchanged and writes nothing", async () => {
    const bob = await contactAt("+14155550123", "Bob");
    const before = (await rows());
    const r = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550123", firstName: "Ada", service: "a haircut" } }), 200);
    expect(r.data).toMatchObject({ test: true, text: "Hi Ada, we will call you about a haircut.", segments: 1, sent: null });
    expect(r.message).toContain("no contact was made or changed");
    expect((await rows())).toEqual(before);
    const after = (await expectStatus(await s.api(`/contacts/${bob.id}`), 200)).data.contact;
    expect(after).toMatchObject({ firstName: "Bob", email: "bob@example.com", updatedAt: bob.updatedAt });
  });

  test("refused values get the visitor's words, by label; nothing written", async () => {
    const before = (await rows());
    const b = await expectStatus(await tryForm({ values: { phoneNumber: "12", service: "win at evil.example" } }), 400);
    expect(b.code).toBe("VALIDATION_ERROR");
    expect(b.message).toBe("Please enter a mobile phone number.");
    const links = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550124", service: "win at evil.example" } }), 400);
    expect(links.message).toBe("Please leave links out of 'Which service'.");
    expect(links.details.field).toBe("service");
    expect((await rows())).toEqual(before);
  });

  test("notes say what a post from the website meets that the test skips", async () => {
    const off = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ settings: { delayMinutes: 5, timezone: "UTC", allowedOrigins: ["https://shop.example"] } }) }), 201)).data.form;
    await expectStatus(await s.api(`/forms/${off.id}`, { method: "PUT", json: { isActive: false } }), 200);
    const r = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550125" } }, undefined, off.id), 200);
    expect(r.data.notes).toEqual([
      "This form is switched off: posts from your website are refused until you switch it on.",
      "Posts are accepted only from https://shop.example.",
      "On your website, the text goes out 5 minutes after the post.",
    ]);
  });
});

describe("also sent to the owner's phone", () => {
  test("one test message to that number, linked to no contact; the contact at that number is untouched", async () => {
    const me = await contactAt("+14155550131", "Carla");
    const before = (await rows());
    const r = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550132", firstName: "Ada", service: "nails" }, sendTo: "(415) 555-0131" }), 200);
    expect(r.data.sent).toMatchObject({ to: "+14155550131", queuePosition: expect.any(Number) });
    expect((await rows())).toEqual({ ...before, messages: before.messages + 1 });
    const m = (await expectStatus(await s.api(`/messages/${r.data.sent.messageId}`), 200)).data.message;
    expect(m).toMatchObject({ contactId: null, formId: null, recipientPhone: "+14155550131", recipientName: "Test of “Bookings”", content: "Hi Ada, we will call you about nails.", status: "queued" });
    expect(m.metadata).toMatchObject({ source: "test", test: true, formId: form.id });
    const after = (await expectStatus(await s.api(`/contacts/${me.id}`), 200)).data.contact;
    expect(after).toMatchObject({ firstName: "Carla", updatedAt: me.updatedAt });
    // No contact was made for the sample number either.
    expect(await contactByPhone(s, "+14155550132")).toBeUndefined();
  });

  test("a bad number of one's own is refused in plain words; nothing written", async () => {
    const before = (await rows());
    const b = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550133" }, sendTo: "+442071838750" }), 400);
    expect(b.message).toBe("That number is a landline; please enter a mobile number in 'Your phone number'.");
    expect(b.details.field).toBe("sendTo");
    expect((await rows())).toEqual(before);
  });

  test("blank sendTo sends nothing", async () => {
    const r = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550134" }, sendTo: "  " }), 200);
    expect(r.data.sent).toBeNull();
  });

  test("a number that replied STOP is not texted, test or not", async () => {
    const c = await contactAt("+14155550135", "Dee");
    await expectStatus(await s.api(`/contacts/${c.id}`, { method: "PUT", json: { optedOut: true } }), 200);
    const before = (await rows());
    const b = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550136" }, sendTo: "+14155550135" }), 409);
    expect(b.code).toBe("RECIPIENT_OPTED_OUT");
    expect((await rows())).toEqual(before);
  });
});

describe("who may test", () => {
  test("only a signed-in caller of the form's own account", async () => {
    await expectStatus(await tryForm({ values: { phoneNumber: "+14155550137" } }, null), 401);
    const other = newAccount(s, { name: "Other shop" });
    const b = await expectStatus(await tryForm({ values: { phoneNumber: "+14155550137" } }, other.apiKey), 404);
    expect(b.code).toBe("FORM_NOT_FOUND");
  });

  test("a body that is not {values} is a 400, not a 500", async () => {
    await expectStatus(await tryForm({ values: "nope" }), 400);
    await expectStatus(await tryForm([1, 2]), 400);
    await expectStatus(await tryForm({ values: { phoneNumber: "+14155550138" }, sendTo: 42 }), 400);
  });
});
