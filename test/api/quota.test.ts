import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer } from "../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("monthly message quota across webhook and manual messages", () => {
  test("both kinds of message count; past the quota both are refused with 429 QUOTA_EXCEEDED", async () => {
    const acct = s.running.deps.accounts.createAccount({ name: "Quota", monthlyQuota: 3 });
    const form = (await expectStatus(await s.api("/forms", { method: "POST", key: acct.apiKey, json: formBody() }), 201)).data.form;
    const submit = (phone: string) =>
      fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) });
    const manual = (phone: string) => s.api("/messages", { method: "POST", key: acct.apiKey, json: { phoneNumber: phone, content: "Hello" } });

    await expectStatus(await submit("+12015550141"), 200);
    await expectStatus(await manual("+12015550142"), 201);
    await expectStatus(await manual("+12015550143"), 201);
    const refusedManual = await expectStatus(await manual("+12015550144"), 429);
    expect(refusedManual.code).toBe("QUOTA_EXCEEDED");
    expect(refusedManual.details).toMatchObject({ limit: 3, used: 3 });
    expect(Date.parse(refusedManual.details.resetsAt)).toBeGreaterThan(Date.now());
    const refusedHook = await expectStatus(await submit("+12015550145"), 429);
    expect(refusedHook.code).toBe("QUOTA_EXCEEDED");
    const n = s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages WHERE account_id = ?").get(acct.account.id) as { n: number };
    expect(n.n).toBe(3);
    // A refused manual message changed nothing; a bad one does not use the quota either.
    await expectStatus(await s.api("/messages", { method: "POST", key: acct.apiKey, json: { phoneNumber: "nope", content: "x" } }), 400);
  });

  test("accounts without a quota are never refused", async () => {
    for (let i = 0; i < 5; i++) await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: `+1201555016${i}`, content: "Hi" } }), 201);
  });
});

describe("quota usage survives deletions and restarts", () => {
  test("deleting a message gives no quota back, before or after a restart", async () => {
    const { startTestServer } = await import("../helpers/server");
    const { tempDir } = await import("../helpers/server");
    const dir = tempDir();
    const first = await startTestServer({}, { dir });
    const acct = first.running.deps.accounts.createAccount({ name: "Usage", monthlyQuota: 2 });
    const manual = (t: TestServer) => t.api("/messages", { method: "POST", key: acct.apiKey, json: { phoneNumber: "+12015550171", content: "Hi" } });
    const m1 = (await expectStatus(await manual(first), 201)).data.messageId;
    await expectStatus(await manual(first), 201);
    await expectStatus(await first.api(`/messages/${m1}`, { method: "DELETE", key: acct.apiKey }), 200);
    expect((await expectStatus(await manual(first), 429)).details.used).toBe(2);
    await first.stop();
    const again = await startTestServer({ db: first.dbPath }, { dir });
    try {
      const body = await expectStatus(await manual(again), 429);
      expect(body.details).toMatchObject({ limit: 2, used: 2 });
    } finally {
      await again.stop();
    }
  });
});
