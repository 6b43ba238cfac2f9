import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectStatus, startTestServer, tempDir, type TestServer } from "../helpers/server";
import { newAccount } from "../helpers/accounts";

/**
 * GET /v1/overview: the Overview in one answer, with the facts its status warnings are made of
 * (docs/api-decisions.md, "The dashboard never locks itself out; honest status").
 */
describe("GET /v1/overview", () => {
  let ts: TestServer;
  beforeAll(async () => {
    // This machine is the trusted proxy: a test can say which client it forwards for.
    ts = await startTestServer({ trustProxy: true });
  });
  afterAll(() => ts.stop());

  const overview = async (headers: Record<string, string> = {}, q = "") => (await expectStatus(await ts.api(`/overview${q}`, { headers }), 200)).data;

  test("counts the queue, today and the week, and the phones", async () => {
    await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155552671", content: "Hello", priority: "high" } }), 201);
    await expectStatus(await ts.api("/messages", { method: "POST", json: { phoneNumber: "+14155552672", content: "Later", scheduledFor: new Date(Date.now() + 86_400_000).toISOString() } }), 201);
    const d = await overview({}, "?timezone=Europe/Paris");
    expect(d.queue.byPriority).toEqual({ urgent: 0, high: 1, normal: 1, low: 0 });
    expect(d.queue.queued).toBe(2);
    expect(d.queue.scheduled).toBe(1);
    expect(d.queue.scheduledCapped).toBe(false);
    expect(d.queue.oldestDueAt).not.toBeNull();
    expect(d.week).toHaveLength(7);
    expect(d.phones).toEqual({ online: 0, total: 0, failedAttemptsToday: 0 });
  });

  test("status: no phone and no backups; plain HTTP only from another machine; the command prefix of a project folder", async () => {
    const here = await overview();
    expect(here.status).toEqual({ plainHttpFromOutside: false, noPhone: true, backupsOff: true });
    // Run by bun from the project's source: commands are run with npx.
    expect(here.cliCommand).toBe("npx textwire");
    const outside = await overview({ "X-Forwarded-For": "198.51.100.7" });
    expect(outside.status.plainHttpFromOutside).toBe(true);
    const overHttps = await overview({ "X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https" });
    expect(overHttps.status.plainHttpFromOutside).toBe(false);
    // GET /v1/account says the same, and its own command uses it.
    const account = (await expectStatus(await ts.api("/account"), 200)).data;
    expect(account.cliCommand).toBe("npx textwire");
    expect(account.changeWith).toStartWith("npx textwire accounts update ");
  });

  test("a bad time zone is a 400 that names it; no key is a 401", async () => {
    const bad = await expectStatus(await ts.api("/overview?timezone=Mars/Olympus"), 400);
    expect(bad.code).toBe("VALIDATION_ERROR");
    expect(JSON.stringify(bad)).toContain("timezone");
    await expectStatus(await ts.api("/overview", { key: null }), 401);
  });

  test("another account sees only its own queue", async () => {
    const other = newAccount(ts, { name: "Other shop" });
    const d = (await expectStatus(await ts.api("/overview", { key: other.apiKey }), 200)).data;
    expect(d.queue.queued).toBe(0);
  });
});

describe("GET /v1/overview with backups scheduled", () => {
  test("backupsOff is false when scheduled backups are configured", async () => {
    const ts = await startTestServer({ backupDir: join(tempDir(), "backups") });
    try {
      const d = (await expectStatus(await ts.api("/overview"), 200)).data;
      expect(d.status.backupsOff).toBe(false);
    } finally {
      await ts.stop();
    }
  });
});
