/**
 * Template and field names that are also names on Object.prototype are data like any other
 * (docs/api-decisions.md, "Hostile input, round two: template names, the links rule, outbound
 * addresses"): forms using them are created, every post to them is answered as usual, and the
 * values show in the text, read back through the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "prototype", "valueOf", "__defineGetter__"];

let phone = 4155550100;
const nextPhone = () => `+1${++phone}`;

async function createForm(overrides: Record<string, unknown>) {
  return (await expectStatus(await s.api("/forms", { method: "POST", json: formBody(overrides) }), 201)).data.form;
}

async function post(formId: string, body: string, contentType = "application/json") {
  const res = await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": contentType }, body });
  return (await expectStatus(res, 200)).data as { messageId: string; contactId: string };
}

async function textOf(messageId: string): Promise<string> {
  return (await expectStatus(await s.api(`/messages/${messageId}`), 200)).data.message.content;
}

describe("a template naming a prototype member", () => {
  for (const name of NAMES) {
    test(`{{${name}}}: created, posts accepted, absent renders empty or its fallback, present renders the value`, async () => {
      const form = await createForm({ messageTemplate: `Hi {{firstName}}, [{{${name}}}] [{{ ${name} | none }}]` });
      // Absent: like any missing value.
      const absent = await post(form.id, JSON.stringify({ phoneNumber: nextPhone(), firstName: "Ann" }));
      expect(await textOf(absent.messageId)).toBe("Hi Ann, [] [none]");
      // Posted as an undeclared key (JSON keeps `__proto__` as an own key).
      const present = await post(form.id, `{"phoneNumber":"${nextPhone()}","firstName":"Bo","${name}":"blue"}`);
      expect(await textOf(present.messageId)).toBe("Hi Bo, [blue] [blue]");
      // And from an HTML form post.
      const html = await post(form.id, new URLSearchParams({ phoneNumber: nextPhone(), firstName: "Cy", [name]: "red" }).toString(), "application/x-www-form-urlencoded");
      expect(await textOf(html.messageId)).toBe("Hi Cy, [red] [red]");
    });
  }

  test("a declared field with each name is accepted, validated and put into the text", async () => {
    const form = await createForm({
      messageTemplate: NAMES.map((n) => `${n}={{${n}}}`).join(" "),
      fields: NAMES.map((n) => ({ name: n, type: "text", required: true, validation: { maxLength: 10 } })),
    });
    expect(form.fields.map((f: { name: string }) => f.name)).toEqual(NAMES);
    // Required like any field: each name is reported missing, no 500.
    const res = await fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: nextPhone() }) });
    const refused = await expectStatus(res, 400);
    expect(refused.errors.map((e: { field: string }) => e.field)).toEqual(NAMES);
    const values = Object.fromEntries(NAMES.map((n, i) => [n, `v${i}`]));
    const ok = await post(form.id, JSON.stringify({ phoneNumber: nextPhone(), ...values }));
    expect(await textOf(ok.messageId)).toBe(NAMES.map((n, i) => `${n}=v${i}`).join(" "));
    // The contact keeps them as custom fields, `__proto__` included.
    const contact = (await expectStatus(await s.api(`/contacts/${ok.contactId}`), 200)).data.contact;
    for (const [i, n] of NAMES.entries()) expect(Object.hasOwn(contact.customFields, n) && contact.customFields[n]).toBe(`v${i}`);
    // The embed snippet labels them from their names.
    const embed: string = (await expectStatus(await s.api(`/forms/${form.id}/embed`), 200)).data.html;
    expect(embed).toContain('name="constructor"');
    expect(embed).not.toContain("function");
  });

  test("a consent field named like a prototype member is not ticked unless posted", async () => {
    const form = await createForm({ settings: { consentField: "constructor" } });
    const res = await fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: nextPhone() }) });
    expect((await expectStatus(res, 200)).data.suppressed).toBe("no-consent");
    const ticked = await post(form.id, JSON.stringify({ phoneNumber: nextPhone(), constructor: "yes" }));
    expect(ticked.messageId).toEqual(expect.any(String));
  });
});

describe("contacts with custom fields named like prototype members", () => {
  test("create, update, search and export keep them as fields", async () => {
    const created = await expectStatus(
      await s.api("/contacts", { method: "POST", json: JSON.parse(`{"phoneNumber":"${nextPhone()}","customFields":{"__proto__":"p","constructor":"c","toString":"t"}}`) }),
      201,
    );
    const id = created.data.contact.id;
    expect(created.data.contact.customFields).toEqual(JSON.parse('{"__proto__":"p","constructor":"c","toString":"t"}'));
    const updated = await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: JSON.parse('{"customFields":{"__proto__":"p2","constructor":null,"valueOf":"v"}}') }), 200);
    expect(updated.data.contact.customFields).toEqual(JSON.parse('{"__proto__":"p2","toString":"t","valueOf":"v"}'));
    const found = await expectStatus(await s.api("/contacts/search", { method: "POST", json: JSON.parse('{"customFields":{"__proto__":"p2"}}') }), 200);
    expect(found.data.contacts.map((c: { id: string }) => c.id)).toContain(id);
    // Exporting a column nobody has, named like a prototype member, is an empty column.
    const csv = await (await s.api(`/contacts/export?format=csv&fields=phoneNumber,customFields.hasOwnProperty,customFields.__proto__`)).text();
    const row = csv.split(/\r?\n/).find((l) => l.startsWith(created.data.contact.phoneNumber) || l.includes(created.data.contact.phoneNumber));
    expect(row).toBeDefined();
    expect(row!.split(",").slice(1)).toEqual(["", "p2"]);
    const json = await (await s.api(`/contacts/export?format=json&fields=phoneNumber,customFields.constructor,customFields.__proto__`)).json();
    const mine = (json as Array<{ phoneNumber: string; customFields: Record<string, string> }>).find((c) => c.phoneNumber === created.data.contact.phoneNumber)!;
    expect(Object.keys(mine.customFields)).toEqual(["__proto__"]);
  });

  test("an import column customFields.__proto__ sets a field", async () => {
    const p = nextPhone();
    const res = await s.api("/contacts/import", { method: "POST", headers: { "Content-Type": "text/csv" }, body: `phoneNumber,customFields.__proto__,customFields.constructor\n${p},x,y\n` });
    expect((await expectStatus(res, 200)).data.created).toBe(1);
    const list = await expectStatus(await s.api(`/contacts?limit=100`), 200);
    const id = list.data.contacts.find((c: { phoneNumber: string }) => c.phoneNumber === p).id;
    expect((await expectStatus(await s.api(`/contacts/${id}`), 200)).data.contact.customFields).toEqual(JSON.parse('{"__proto__":"x","constructor":"y"}'));
  });
});
