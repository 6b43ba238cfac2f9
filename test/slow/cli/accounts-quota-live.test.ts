/**
 * `textwire accounts update --monthly-quota`, run as its own process while the server runs: the
 * very next submission sees the change (the webhook's cache asks SQLite's `PRAGMA data_version`,
 * src/db/webhook-form-cache.ts). Moved from the quota API tests: it spawns the CLI; the same
 * through a second connection in this process stays there (test/api/sending/quota.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, expectStatus, type TestServer } from "../../helpers/server";
import { tenantWithForm } from "../../helpers/accounts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const ROOT = join(import.meta.dir, "..", "..", "..");
const quotaForm = () => tenantWithForm(s, "Other process");

  test("`textwire accounts update --monthly-quota`, run as its own process while the server runs", async () => {
    const f = await quotaForm();
    await expectStatus(await f.submit(), 200);
    const cli = async (quota: string) => {
      const proc = Bun.spawn([join(ROOT, "node_modules/.bin/bun"), join(ROOT, "src/main.ts"), "accounts", "update", f.accountId, "--monthly-quota", quota, "--db", s.dbPath], { stdout: "pipe", stderr: "pipe" });
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      if (code !== 0) throw new Error(`accounts update exited ${code}: ${err}`);
    };
    await cli("1");
    expect((await expectStatus(await f.submit(), 429)).code).toBe("QUOTA_EXCEEDED");
    await cli("5");
    await expectStatus(await f.submit(), 200);
    await cli("none");
    await expectStatus(await f.submit(), 200);
  }, 30_000);
