import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectStatus, formBody, startTestServer, tempDir, withServer, type TestServer } from "../../helpers/server";
import { newApiKey } from "../../helpers/reads";

let s: TestServer;
let adminKey: string;
let formId: string;
beforeAll(async () => {
  s = await startTestServer();
  adminKey = await newApiKey(s, "admin_access");
  formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
});
afterAll(() => s.stop());

const webhookUrl = async () => (await expectStatus(await s.api(`/forms/${formId}`), 200)).data.form.webhookUrl as string;
const embedHtml = async () => (await expectStatus(await s.api(`/forms/${formId}/embed`), 200)).data.html as string;
const phoneUrls = async () => (await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201)).data.mobileApiUrls as string[];

describe("the public address: flag > setting > the request's own", () => {
  test("with nothing set, the request's own address is used and said so", async () => {
    expect(await webhookUrl()).toBe(`${s.url}/v1/forms/${formId}/webhook`);
    const v = (await expectStatus(await s.api("/admin/server-address"), 200)).data;
    expect(v).toEqual({ savedUrl: null, savedAt: null, flagUrl: null, effective: { url: s.url, source: "request" } });
    // The form's page is told, so it can warn before the form is published.
    expect((await expectStatus(await s.api(`/forms/${formId}/embed`), 200)).data.addressSource).toBe("request");
  });

  test("once saved, every webhook address, embed snippet and the phone wizard use it, never the browser's address", async () => {
    const b = await expectStatus(await s.api("/admin/server-address", { method: "PUT", json: { url: "sms.example.com/" } }), 200);
    expect(b.data).toMatchObject({ savedUrl: "https://sms.example.com", flagUrl: null, effective: { url: "https://sms.example.com", source: "setting" } });
    expect(await webhookUrl()).toBe(`https://sms.example.com/v1/forms/${formId}/webhook`);
    expect(await embedHtml()).toContain(`https://sms.example.com/v1/forms/${formId}/webhook`);
    expect(await embedHtml()).not.toContain("127.0.0.1");
    expect((await expectStatus(await s.api(`/forms/${formId}/embed`), 200)).data.addressSource).toBe("setting");
    expect(await phoneUrls()).toEqual(["https://sms.example.com/api/mobile/v1"]);
    const list = (await expectStatus(await s.api("/forms"), 200)).data;
    expect(JSON.stringify(list)).not.toContain("127.0.0.1");
    // Stored in the database, so it survives a restart: a second server on the same file answers it.
    const again = await startTestServer({ db: s.dbPath }, { dir: s.dir });
    try {
      expect((await expectStatus(await again.api("/admin/server-address", { key: s.adminKey }), 200)).data.savedUrl).toBe("https://sms.example.com");
    } finally {
      await again.stop();
    }
  });

  test("bad addresses are refused in plain words and change nothing", async () => {
    for (const url of ["ftp://x.example", "https://x.example/v1/forms", "https://user:pw@x.example", "https://x.example/?a=1", "http://", "x".repeat(400)]) {
      const e = await expectStatus(await s.api("/admin/server-address", { method: "PUT", json: { url } }), 400);
      expect(e.code).toBe("VALIDATION_ERROR");
    }
    expect((await expectStatus(await s.api("/admin/server-address"), 200)).data.savedUrl).toBe("https://sms.example.com");
  });

  test("cleared with null: back to the request's own address", async () => {
    const b = await expectStatus(await s.api("/admin/server-address", { method: "PUT", json: { url: null } }), 200);
    expect(b.data.effective).toEqual({ url: s.url, source: "request" });
    expect(await webhookUrl()).toBe(`${s.url}/v1/forms/${formId}/webhook`);
  });

  test("--public-url wins: it is what forms get, and saving is refused saying the flag is in force", async () => {
    await withServer(
      async (t) => {
        const v = (await expectStatus(await t.api("/admin/server-address"), 200)).data;
        expect(v).toMatchObject({ flagUrl: "https://flag.example", effective: { url: "https://flag.example", source: "flag" } });
        const e = await expectStatus(await t.api("/admin/server-address", { method: "PUT", json: { url: "https://other.example" } }), 409);
        expect(e.code).toBe("INVALID_STATE");
        expect(e.message).toContain("--public-url");
        const f = (await expectStatus(await t.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
        expect(f.webhookUrl).toStartWith("https://flag.example/v1/forms/");
      },
      { publicUrl: "https://flag.example" },
    );
  });
});

describe("scheduled backups set from the dashboard", () => {
  test("a writable folder is saved (created when missing), its first backup is made at once, and the scheduler picks it up without a restart", async () => {
    const dir = join(tempDir("textwire-sched-"), "nested", "backups");
    expect((await expectStatus(await s.api("/admin/backups"), 200)).data).toMatchObject({ scheduled: false, source: null });
    const b = await expectStatus(await s.api("/admin/backups", { method: "PUT", json: { directory: dir, everyMinutes: 5, keep: 2 } }), 200);
    expect(b.data).toMatchObject({ scheduled: true, directory: dir, everyMinutes: 5, keep: 2, source: "setting" });
    expect(existsSync(dir)).toBe(true);
    // The first backup is made at once, not one interval later; the write test leaves nothing else.
    expect(b.data.backups.length).toBe(1);
    expect(readdirSync(dir).filter((f) => !f.endsWith(".db"))).toEqual([]);
    // /health shows the schedule in force.
    const h = await (await fetch(`${s.url}/health`)).json() as any;
    expect(h.backup).toMatchObject({ everySeconds: 300 });
    // The running scheduler uses the new folder: one run now.
    // arrange: the scheduler's next run, made now (its timer runs every 5 minutes)
    const sched = s.running.deps.lifecycle.find((p) => p.name === "scheduled-backups") as unknown as { runNow(): Promise<void> };
    await sched.runNow();
    expect(readdirSync(dir).filter((f) => f.endsWith(".db")).length).toBe(2);
    expect((await expectStatus(await s.api("/admin/backups"), 200)).data.backups.length).toBe(2);
  });

  test("a folder the server cannot write to, a relative path or bad numbers: a plain error, nothing saved", async () => {
    const before = (await expectStatus(await s.api("/admin/backups"), 200)).data;
    const root = tempDir("textwire-sched-bad-");
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ directory: join(file, "sub") }, "cannot write"],
      [{ directory: "backups" }, "full path"],
      [{ directory: root, everyMinutes: 1 }, "every"],
      [{ directory: root, everyMinutes: "daily" }, "every"],
      [{ directory: root, keep: 0 }, "copies"],
      [{ directory: root, keep: 1.5 }, "copies"],
    ];
    if (process.getuid?.() !== 0) {
      const ro = join(root, "read-only");
      mkdirSync(ro);
      chmodSync(ro, 0o500);
      cases.push([{ directory: ro }, "permission denied"]);
    }
    for (const [body, words] of cases) {
      const e = await expectStatus(await s.api("/admin/backups", { method: "PUT", json: body }), 400);
      expect(e.code).toBe("VALIDATION_ERROR");
      expect(JSON.stringify(e)).toContain(words);
    }
    expect((await expectStatus(await s.api("/admin/backups"), 200)).data).toEqual(before);
    await expectStatus(await s.api("/admin/backups", { method: "PUT", key: adminKey, json: { directory: root } }), 403);
    rmSync(root, { recursive: true, force: true });
  });

  test("turned off with directory null", async () => {
    const b = await expectStatus(await s.api("/admin/backups", { method: "PUT", json: { directory: null } }), 200);
    expect(b.data).toMatchObject({ scheduled: false, directory: null, source: null, backups: [] });
    expect(((await (await fetch(`${s.url}/health`)).json()) as any).backup).toBeUndefined();
  });

  test("--backup-dir wins: the page is told, and saving is refused", async () => {
    const dir = tempDir("textwire-flag-backups-");
    await withServer(
      async (t) => {
        expect((await expectStatus(await t.api("/admin/backups"), 200)).data).toMatchObject({ scheduled: true, directory: dir, source: "flag", everyMinutes: 60 });
        const e = await expectStatus(await t.api("/admin/backups", { method: "PUT", json: { directory: tempDir() } }), 409);
        expect(e.code).toBe("INVALID_STATE");
        expect(e.message).toContain("--backup-dir");
      },
      { backupDir: dir, backupEveryMs: 3_600_000 },
    );
  });
});
