import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createForm, expectStatus, postWebhook, startTestServer, type TestServer } from "../helpers/server";
import { updateAccount } from "../helpers/accounts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const newForm = (overrides: Record<string, unknown> = {}) => createForm(s, overrides);
let n = 0;
const submit = (address: string) => postWebhook(s, address, { phoneNumber: `+1415555${String(1000 + ++n).slice(-4)}`, firstName: "Ann" });
describe("the webhook's cached form lookup", () => {
  // Whether a hit is answered from memory, and an unknown address never cached, is read inside the
  // service: test/services/form-lookup.test.ts.
  test("disabling, changing and deleting a form through the API take effect on the next submission", async () => {
    const id = await newForm();
    await expectStatus(await submit(id), 200);
    await expectStatus(await s.api(`/forms/${id}`, { method: "PUT", json: { isActive: false } }), 200);
    expect((await expectStatus(await submit(id), 503)).code).toBe("FORM_DISABLED");
    await expectStatus(await s.api(`/forms/${id}`, { method: "PUT", json: { isActive: true, messageTemplate: "Second text for {{firstName}}" } }), 200);
    const ok = await expectStatus(await submit(id), 200);
    const msg = await expectStatus(await s.api(`/messages/${ok.data.messageId}`), 200);
    expect(msg.data.message?.content ?? msg.data.content).toContain("Second text for Ann");
    await expectStatus(await s.api(`/forms/${id}`, { method: "DELETE" }), 200);
    await expectStatus(await submit(id), 404);
  });

  test("a rotated address stops working at once and the new one works", async () => {
    const id = await newForm();
    await expectStatus(await submit(id), 200);
    const rotated = await expectStatus(await s.api(`/forms/${id}/rotate-webhook`, { method: "POST" }), 200);
    const url: string = rotated.data.form?.webhookUrl ?? rotated.data.webhookUrl;
    const token = url.split("/forms/")[1].split("/")[0];
    await expectStatus(await submit(id), 404);
    await expectStatus(await submit(token), 200);
  });

  test("an account's monthly quota changed by the service applies at once", async () => {
    const id = await newForm();
    await expectStatus(await submit(id), 200);
    updateAccount(s, s.accountId, { monthlyQuota: 0 });
    expect((await expectStatus(await submit(id), 429)).code).toBe("QUOTA_EXCEEDED");
    updateAccount(s, s.accountId, { monthlyQuota: null });
    await expectStatus(await submit(id), 200);
  });

  test("a change committed by another process (the CLI) is seen on the next submission", async () => {
    const id = await newForm();
    await expectStatus(await submit(id), 200);
    // arrange: another process's connection (the CLI's), whose commits the server's cache must see
    const other = new Database(s.dbPath);
    try {
      // arrange: the form turned off by that other process
      other.exec("PRAGMA busy_timeout = 5000");
      other.query("UPDATE forms SET is_active = 0 WHERE id = ?").run(id);
      expect((await expectStatus(await submit(id), 503)).code).toBe("FORM_DISABLED");
      // arrange: back on, and a quota of 0, by the other process
      other.query("UPDATE forms SET is_active = 1 WHERE id = ?").run(id);
      other.query("UPDATE accounts SET monthly_quota = 0 WHERE id = ?").run(s.accountId);
      expect((await expectStatus(await submit(id), 429)).code).toBe("QUOTA_EXCEEDED");
      other.query("UPDATE accounts SET monthly_quota = NULL WHERE id = ?").run(s.accountId); // arrange: no quota again
      await expectStatus(await submit(id), 200);
    } finally {
      other.close(); // arrange: (closed)
    }
  });
});
