import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const contentOf = async (id: string) => (await expectStatus(await s.api(`/messages/${id}`), 200)).data.message.content as string;
const formCount = async () => (await expectStatus(await s.api("/forms"), 200)).data.total as number;

async function submit(formId: string, body: Record<string, unknown>) {
  const res = await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return (await expectStatus(res, 200)).data.messageId as string;
}

describe("{{ name | fallback }} in a form's template", () => {
  test("a missing or blank value gets the fallback; a given one is used", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "Hi {{firstName | there}}, about {{ topic | your request }}." }) }), 201)).data.form;
    expect(await contentOf(await submit(form.id, { phoneNumber: "+14155550101" }))).toBe("Hi there, about your request.");
    expect(await contentOf(await submit(form.id, { phoneNumber: "+14155550102", firstName: "   ", topic: "" }))).toBe("Hi there, about your request.");
    expect(await contentOf(await submit(form.id, { phoneNumber: "+14155550103", firstName: "Ann", topic: "solar" }))).toBe("Hi Ann, about solar.");
  });

  test("a malformed fallback is refused on create and on update, naming it; nothing changes", async () => {
    const before = await formCount();
    const bad = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "Hi {{firstName |}} and {{ x | a | b }}" }) }), 400);
    expect(bad.code).toBe("VALIDATION_ERROR");
    const messages = bad.errors.filter((e: any) => e.field === "messageTemplate").map((e: any) => e.message);
    expect(messages.length).toBe(2);
    expect(messages[0]).toContain("{{firstName |}}");
    expect(messages[1]).toContain("{{ x | a | b }}");
    expect(await formCount()).toBe(before);

    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "Hi {{firstName | there}}" }) }), 201)).data.form;
    const upd = await expectStatus(await s.api(`/forms/${form.id}`, { method: "PUT", json: { messageTemplate: "Hi {{firstName | there" } }), 400);
    expect(upd.code).toBe("VALIDATION_ERROR");
    const after = (await expectStatus(await s.api(`/forms/${form.id}`), 200)).data.form;
    expect(after.messageTemplate).toBe("Hi {{firstName | there}}");
  });
});
