import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { startTestServer, expectStatus, formBody, type TestServer } from "../../helpers/server";
import { newAccount, tenantWithForm } from "../../helpers/accounts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("monthly message quota across webhook and manual messages", () => {
  test("both kinds of message count; past the quota both are refused with 429 QUOTA_EXCEEDED", async () => {
    const acct = newAccount(s, { name: "Quota", monthlyQuota: 3 });
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
    expect((await expectStatus(await s.api("/messages", { key: acct.apiKey }), 200)).data.pagination.total).toBe(3);
    // A refused manual message changed nothing; a bad one does not use the quota either.
    await expectStatus(await s.api("/messages", { method: "POST", key: acct.apiKey, json: { phoneNumber: "nope", content: "x" } }), 400);
  });

  test("accounts without a quota are never refused", async () => {
    for (let i = 0; i < 5; i++) await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: `+1201555016${i}`, content: "Hi" } }), 201);
  });
});

describe("quota usage survives deletions and restarts", () => {
  test("deleting a message gives no quota back, before or after a restart", async () => {
    const { startTestServer } = await import("../../helpers/server");
    const { tempDir } = await import("../../helpers/server");
    const dir = tempDir();
    const first = await startTestServer({}, { dir });
    const acct = newAccount(first, { name: "Usage", monthlyQuota: 2 });
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

/**
 * The running server reads the quota of a webhook's account from a cache; a change committed by
 * another process (the CLI writing the same database file) must reach the very next submission,
 * whatever the timing: the cache asks SQLite's `PRAGMA data_version` on every lookup
 * (src/db/webhook-form-cache.ts). No sleeps and no retries below: each submission right after a
 * change must see it. (The same through a CLI process of its own: test/slow/cli/accounts-quota-live.test.ts.)
 */
describe("a quota changed by another process is seen by the very next submission", () => {
  const quotaForm = () => tenantWithForm(s, "Other process");

  test("forty changes by another connection, each followed at once by a submission: every one sees the change", async () => {
    const f = await quotaForm();
    // arrange: another process's connection, writing the quota as `textwire accounts update` does
    // (a connection of the server's own would tell its cache)
    const other = new Database(s.dbPath);
    try {
      other.exec("PRAGMA busy_timeout = 5000"); // arrange: (the other process's connection)
      const setQuota = other.prepare("UPDATE accounts SET monthly_quota = ? WHERE id = ?"); // arrange: the quota as the CLI writes it
      const seen: string[] = [];
      for (let round = 0; round < 20; round++) {
        setQuota.run(0, f.accountId);
        const refused = await f.submit();
        seen.push(`${round} quota 0: ${refused.status}`);
        await refused.arrayBuffer();
        setQuota.run(null, f.accountId);
        const accepted = await f.submit();
        seen.push(`${round} no quota: ${accepted.status}`);
        await accepted.arrayBuffer();
      }
      expect(seen).toEqual(Array.from({ length: 20 }, (_, r) => [`${r} quota 0: 429`, `${r} no quota: 200`]).flat());
    } finally {
      other.close(); // arrange: (closed)
    }
  });
  // A lookup in the same instant as another connection's commit is read inside the service:
  // test/services/form-lookup.test.ts.
});
