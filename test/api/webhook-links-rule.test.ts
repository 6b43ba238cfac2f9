/**
 * The links rule through the webhook (docs/api-decisions.md, "Hostile input, round two: template
 * names, the links rule, outbound addresses"): the bypasses are refused with the usual
 * "no links" answer, ordinary values are queued and appear in the text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

let s: TestServer;
let formId: string;
beforeAll(async () => {
  s = await startTestServer();
  const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ messageTemplate: "Hi {{firstName}}: {{note}}", fields: [{ name: "firstName", type: "text" }, { name: "note", type: "text" }] }) }), 201)).data.form;
  formId = form.id;
});
afterAll(() => s.stop());

let phone = 4155550200;
const post = (body: Record<string, unknown>) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1${++phone}`, ...body }) });

describe("the links rule on the webhook", () => {
  test.each([["1.2.3.4/login"], ["ｅｖｉｌ.com"], ["evil。example/login"], ["mailto:x@evil.example"], ['<a href="…">'], ["evil .example/x"]])("%p is refused as a link", async (note) => {
    const b = await expectStatus(await post({ firstName: "Ann", note }), 400);
    expect(b.code).toBe("VALIDATION_ERROR");
    expect(b.errors).toEqual([{ field: "note", message: "note must not contain a link or web address (it is put into the text message)" }]);
    expect(b.details).toMatchObject({ field: "note", requirement: "no links" });
  });

  test("also in a name the template inserts", async () => {
    const b = await expectStatus(await post({ firstName: "ｗｗｗ．evil．com" }), 400);
    expect(b.details).toMatchObject({ field: "firstName", requirement: "no links" });
  });

  test.each([["Dr. Smith"], ["3.5 kg"], ["e.g. tomorrow"], ["St. John's"], ["$3.50 at 9.30"], ["v1.2.3"], ["Mr.Smith"], ["I finished. Com..."]])("%p is queued as written", async (note) => {
    const d = (await expectStatus(await post({ firstName: "Ann", note }), 200)).data;
    expect((await expectStatus(await s.api(`/messages/${d.messageId}`), 200)).data.message.content).toBe(`Hi Ann: ${note}`);
  });
});
