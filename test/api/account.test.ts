import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, expectStatus, formBody, withServer, type TestServer } from "../helpers/server";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("GET /v1/account", () => {
  test("plan, limits, this month's count and the calling key's access", async () => {
    const acct = newAccount(s, { name: "Bakery", plan: "pro", monthlyQuota: 500, apiBurstPerMinute: 40 });
    const before = (await expectStatus(await s.api("/account", { key: acct.apiKey }), 200)).data;
    expect(before.account).toMatchObject({ id: acct.account.id, name: "Bakery", plan: "pro", defaultCountry: "US" });
    expect(before.limits).toEqual({ apiRequestsPerHour: 5000, apiBurstPerMinute: 40, monthlyQuota: 500 });
    expect(before.usage.messages).toBe(0);
    expect(before.usage.month).toBe(new Date().toISOString().slice(0, 7));
    expect(Date.parse(before.usage.resetsAt)).toBeGreaterThan(Date.now());
    expect(before.access).toEqual({ permission: "admin_access", operator: false });
    expect(before.changeWith).toContain(`textwire accounts update ${acct.account.id}`);

    const form = (await expectStatus(await s.api("/forms", { method: "POST", key: acct.apiKey, json: formBody() }), 201)).data.form;
    const hook = await fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+12015550141" }) });
    await expectStatus(hook, 200);
    await expectStatus(await s.api("/messages", { method: "POST", key: acct.apiKey, json: { phoneNumber: "+12015550142", content: "Hello" } }), 201);
    const after = (await expectStatus(await s.api("/account", { key: acct.apiKey }), 200)).data;
    expect(after.usage.messages).toBe(2);
    // Another account's messages are not counted.
    expect((await expectStatus(await s.api("/account"), 200)).data.usage.messages).toBe(0);
  });

  test("a standard key may read it; the first key of a new server is an operator key; no key is 401", async () => {
    const std = (await expectStatus(await s.api("/api-keys", { method: "POST", json: { permission: "standard_access" } }), 201)).data.apiKey;
    const mine = (await expectStatus(await s.api("/account", { key: std }), 200)).data;
    expect(mine.access).toEqual({ permission: "standard_access", operator: false });
    expect(mine.limits).toEqual({ apiRequestsPerHour: 1000, apiBurstPerMinute: 100, monthlyQuota: null });
    expect((await expectStatus(await s.api("/account"), 200)).data.access).toEqual({ permission: "admin_access", operator: true });
    expect((await expectStatus(await s.api("/account", { key: null }), 401)).code).toBe("AUTHENTICATION_ERROR");
  });
});

describe("GET /v1/admin/backups", () => {
  test("only an operator key: an admin key that is not one gets 403", async () => {
    const admin = (await expectStatus(await s.api("/api-keys", { method: "POST", json: { permission: "admin_access" } }), 201)).data.apiKey;
    const refused = await expectStatus(await s.api("/admin/backups", { key: admin }), 403);
    expect(refused.details).toMatchObject({ required: "operator" });
  });

  test("without --backup-dir: nothing scheduled, an empty list", async () => {
    const data = (await expectStatus(await s.api("/admin/backups"), 200)).data;
    expect(data).toEqual({ scheduled: false, directory: null, everyMinutes: null, keep: 7, source: null, backups: [] });
  });

  test("lists the scheduled backup files newest first, with time and size; other files are left out", async () => {
    const dir = join(s.dir, "backups");
    mkdirSync(dir, { recursive: true });
    const files: Array<[string, number, number]> = [
      ["textwire-20261101T020000Z.db", 10, Date.UTC(2026, 10, 1, 2)],
      ["textwire-20261103T020000Z.db", 30, Date.UTC(2026, 10, 3, 2)],
      ["textwire-20261102T020000Z.db", 20, Date.UTC(2026, 10, 2, 2)],
    ];
    for (const [name, size, at] of files) {
      writeFileSync(join(dir, name), Buffer.alloc(size));
      utimesSync(join(dir, name), at / 1000, at / 1000);
    }
    writeFileSync(join(dir, "notes.txt"), "not a backup");
    writeFileSync(join(dir, "textwire-20261104T020000Z.db.partial-1-2"), "half written");
    await withServer(async (t) => {
      const data = (await expectStatus(await t.api("/admin/backups"), 200)).data;
      expect(data).toMatchObject({ scheduled: true, directory: dir, everyMinutes: 720, keep: 3 });
      expect(data.backups).toEqual([
        { name: "textwire-20261103T020000Z.db", createdAt: "2026-11-03T02:00:00.000Z", bytes: 30 },
        { name: "textwire-20261102T020000Z.db", createdAt: "2026-11-02T02:00:00.000Z", bytes: 20 },
        { name: "textwire-20261101T020000Z.db", createdAt: "2026-11-01T02:00:00.000Z", bytes: 10 },
      ]);
    }, { backupDir: dir, backupEveryMs: 12 * 3_600_000, backupKeep: 3 });
  });

  test("a --backup-dir not made yet lists nothing", async () => {
    await withServer(async (t) => {
      const data = (await expectStatus(await t.api("/admin/backups"), 200)).data;
      expect(data).toMatchObject({ scheduled: true, everyMinutes: 1440, backups: [] });
    }, { backupDir: join(s.dir, "not-yet") });
  });
});

describe("GET /v1/forms?counts=true", () => {
  test("each form carries its texts queued and sent, contacts and converted contacts; without it the list is as before", async () => {
    const acct = newAccount(s, { name: "Florist" });
    const mk = async () => (await expectStatus(await s.api("/forms", { method: "POST", key: acct.apiKey, json: formBody() }), 201)).data.form;
    const [a, b] = [await mk(), await mk()];
    const submit = async (formId: string, phone: string) =>
      (await expectStatus(await fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone }) }), 200)).data;
    const first = await submit(a.id, "+12015550151");
    await submit(a.id, "+12015550152");
    await submit(a.id, "+12015550153");
    await submit(a.id, "+12015550154");
    await expectStatus(await s.api(`/contacts/${first.contactId}`, { method: "PUT", key: acct.apiKey, json: { status: "converted" } }), 200);
    await expectStatus(await s.api(`/messages/${first.messageId}/status`, { method: "PUT", key: acct.apiKey, json: { status: "sent", sentAt: new Date().toISOString() } }), 200);

    const plain = (await expectStatus(await s.api("/forms", { key: acct.apiKey }), 200)).data.forms;
    expect(plain.every((f: any) => !("counts" in f))).toBe(true);
    const listed = (await expectStatus(await s.api("/forms?counts=true", { key: acct.apiKey }), 200)).data.forms;
    const byId = Object.fromEntries(listed.map((f: any) => [f.id, f.counts]));
    expect(byId[a.id]).toEqual({ messages: 4, messagesSent: 1, contacts: 4, converted: 1, conversionRate: 25 });
    expect(byId[b.id]).toEqual({ messages: 0, messagesSent: 0, contacts: 0, converted: 0, conversionRate: 0 });
    expect((await expectStatus(await s.api("/forms?counts=maybe", { key: acct.apiKey }), 400)).code).toBe("VALIDATION_ERROR");
  });
});
