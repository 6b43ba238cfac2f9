/**
 * The webhook intake's rules while the applier lags (issue 15 item 3): deps built without their
 * lifecycle, so no applier Worker runs and entries stay unapplied until the test applies them
 * (IntakeApplier.applyBatch on the main connection), deterministically.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { createDeps, type AppDeps } from "../../src/deps";
import { defaultServeConfig } from "../../src/config";
import { IntakeApplier } from "../../src/services/intake-apply";
import { backupDatabase } from "../../src/services/backups";
import { startTestServer, tempDir, expectStatus } from "../helpers/server";
import { insertForm } from "../helpers/fixtures";

const quiet = { info() {}, warn() {}, error() {} };
const NOW = Date.parse("2030-03-04T15:00:00Z");
let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

function setup(settings: Record<string, unknown> = {}) {
  const dir = tempDir("textwire-intake-");
  const dbPath = join(dir, "textwire.db");
  const sqlite = openSqlite(dbPath);
  migrate(sqlite);
  const deps = createDeps(sqlite, defaultServeConfig({ db: dbPath }), () => NOW, quiet);
  const accountId = deps.accounts.createAccount({ name: "Shop" }).account.id;
  const formId = insertForm(deps, accountId);
  sqlite.query("UPDATE forms SET settings = ? WHERE id = ?").run(JSON.stringify({ timezone: "UTC", ...settings }), formId);
  cleanup.push(() => {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const post = async (phoneNumber: string, firstName = "Ann") => {
    const form = deps.submissions.findForm(formId)!;
    const a = await deps.submissions.submit(form, { body: { phoneNumber, firstName }, rawJson: JSON.stringify({ phoneNumber, firstName }), ipAddress: "127.0.0.1", userAgent: null });
    return JSON.parse(a.body).data;
  };
  const applier = new IntakeApplier(sqlite);
  const count = (sql: string, ...p: any[]) => (sqlite.query(sql).get(...p) as { n: number }).n;
  return { deps, sqlite, formId, accountId, post, applier, count, dbPath, dir };
}

describe("rules over unapplied submissions", () => {
  test("nothing derived is written before the applier runs; then everything exactly once", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    const a = await t.post("+14155550101", "Ann");
    const b = await t.post("+14155550101", "Bea");
    expect(b.contactId).toBe(a.contactId);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(0);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(2);
    expect(t.deps.intake.barrier()).not.toBeNull();
    expect(t.deps.queue.has(a.messageId)).toBe(true);
    expect(t.applier.applyBatch().applied).toBe(2);
    expect(t.applier.applyBatch().applied).toBe(0);
    expect(t.count("SELECT count(*) AS n FROM contacts")).toBe(1);
    expect(t.sqlite.query("SELECT first_name FROM contacts WHERE id = ?").get(a.contactId)).toEqual({ first_name: "Bea" });
    expect(t.sqlite.query("SELECT id, recipient_name FROM messages ORDER BY seq").all()).toEqual([
      { id: a.messageId, recipient_name: "Ann" },
      { id: b.messageId, recipient_name: "Bea" },
    ]);
    expect(t.sqlite.query("SELECT new_contact FROM submissions ORDER BY created_at, rowid").all()).toEqual([{ new_contact: 1 }, { new_contact: 0 }]);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
    expect(t.count("SELECT seq AS n FROM intake_applied")).toBe(2);
  });

  test("the duplicate window sees an unapplied message and answers with it", async () => {
    const t = setup({ duplicateWindowMinutes: 10 });
    const a = await t.post("+14155550102");
    const b = await t.post("+14155550102");
    expect(b.duplicate).toBe(true);
    expect(b.messageId).toBe(a.messageId);
    t.applier.applyBatch();
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM submissions WHERE message_id = ?", a.messageId)).toBe(2);
  });

  test("the per-recipient limit counts applied and unapplied messages once each", async () => {
    const t = setup({ duplicateWindowMinutes: 0, recipientLimitPerDay: 2 });
    const first = await t.post("+14155550103");
    t.applier.applyBatch(); // in SQLite now, still in the overlay until the applier's report
    const second = await t.post("+14155550103");
    expect(second.messageId).toBeString();
    const third = await t.post("+14155550103");
    expect(third.suppressed).toBe("recipient-limit");
    expect(first.messageId).not.toBe(second.messageId);
  });

  test("the daily limit defers past unapplied messages of the day", async () => {
    const t = setup({ duplicateWindowMinutes: 0, rateLimitPerDay: 1 });
    await t.post("+14155550104");
    const next = await t.post("+14155550105");
    expect(Date.parse(next.estimatedDelivery)).toBeGreaterThanOrEqual(Date.parse("2030-03-05T00:00:00Z"));
  });

  test("an entry whose form is gone is skipped, the rest applied", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550106");
    t.sqlite.run("PRAGMA foreign_keys = ON");
    const other = insertForm(t.deps, t.accountId);
    const form = { ...t.deps.submissions.findForm(t.formId)!, id: other };
    await t.deps.submissions.submit(form, { body: { phoneNumber: "+14155550107" }, rawJson: "{}", ipAddress: "127.0.0.1", userAgent: null });
    t.sqlite.query("DELETE FROM forms WHERE id = ?").run(other);
    const r = t.applier.applyBatch();
    expect(r.applied).toBe(2);
    expect(r.skipped.length).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
  });
});

describe("boot and backups", () => {
  test("a backup taken with unapplied submissions restores them: boot applies the intake before it serves", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    const a = await t.post("+14155550108");
    const out = join(t.dir, "copy.db");
    backupDatabase(t.dbPath, out, () => NOW);
    const s = await startTestServer({ db: out });
    try {
      const key = s.running.deps.accounts.createKey(t.accountId, "admin_access").apiKey;
      const m = await expectStatus(await s.api(`/messages/${a.messageId}`, { key }), 200);
      expect(m.data.message?.id ?? m.data.id).toBe(a.messageId);
      expect(s.running.deps.queue.has(a.messageId)).toBe(true);
      expect(s.running.deps.sqlite.query("SELECT count(*) AS n FROM submission_intake").get()).toEqual({ n: 0 });
    } finally {
      await s.stop();
    }
  });
});
