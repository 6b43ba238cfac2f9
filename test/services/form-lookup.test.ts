/**
 * The webhook's form lookup (src/services/submissions/form-lookup.ts) on a running server, read
 * inside: whether a hit is answered from memory, whether an unknown address is cached, and what a
 * lookup returns in the same instant as another connection's commit show in no answer. What a
 * visitor sees of the same cache (a change through the API or by another process taking effect on
 * the next submission) is test/api/webhook-form-cache.test.ts's and test/api/sending/quota.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createForm, expectStatus, postWebhook, startTestServer, type TestServer } from "../helpers/server";
import { tenantWithForm } from "../helpers/accounts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const newForm = (overrides: Record<string, unknown> = {}) => createForm(s, overrides);
let n = 0;
const submit = (address: string) => postWebhook(s, address, { phoneNumber: `+1415555${String(1000 + ++n).slice(-4)}`, firstName: "Ann" });
// The lookup cache lives in the service's form lookup (src/services/submissions/form-lookup.ts).
const cacheSize = () => (s.running.deps.submissions as unknown as { lookup: { lookups: { size: number } } }).lookup.lookups.size;

describe("the webhook's cached form lookup", () => {
  test("a hit answers from memory; an unknown address is never cached", async () => {
    const id = await newForm();
    await expectStatus(await submit(id), 200);
    const size = cacheSize();
    expect(size).toBeGreaterThan(0);
    await expectStatus(await submit(id), 200);
    expect(cacheSize()).toBe(size);
    await expectStatus(await submit(crypto.randomUUID()), 404);
    expect(cacheSize()).toBe(size);
  });

  test("a commit by another connection between two lookups in the same instant is seen by the second", async () => {
    const f = await tenantWithForm(s, "Other process");
    await expectStatus(await f.submit(), 200); // the form is in the cache
    const other = new Database(s.dbPath);
    try {
      other.exec("PRAGMA busy_timeout = 5000");
      const submissions = s.running.deps.submissions;
      for (const quota of [0, 7, null, 3]) {
        expect(submissions.findForm(f.formId)).not.toBeNull(); // a lookup just before the change
        other.prepare("UPDATE accounts SET monthly_quota = ? WHERE id = ?").run(quota, f.accountId);
        expect(submissions.findForm(f.formId)!.monthlyQuota).toBe(quota);
      }
    } finally {
      other.close();
    }
  });
});
