/**
 * The webhook intake's rules while the applier lags: deps built without their
 * lifecycle, so no applier Worker runs and entries stay unapplied until the test applies them
 * (IntakeApplier.applyBatch on the main connection), deterministically.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { createDeps, type AppDeps } from "../../../src/deps";
import { defaultServeConfig } from "../../../src/config";
import { IntakeApplier } from "../../../src/services/intake/applier";
import { backupDatabase } from "../../../src/services/backups";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";
import { startTestServer, tempDir, expectStatus } from "../../helpers/server";
import { insertForm } from "../../helpers/fixtures";
import { decodeIntakeEntry, encodeIntakeEntry } from "../../../src/db/intake-entry-codec";
import { COMPRESS_WHEN_APART_MS, intakeStore } from "../../../src/db/stores/intake";

const quiet = { info() {}, warn() {}, error() {} };
const NOW = Date.parse("2030-03-04T15:00:00Z");
let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

function setup(settings: Record<string, unknown> = {}, clock: () => number = () => NOW) {
  const dir = tempDir("textwire-intake-");
  const dbPath = join(dir, "textwire.db");
  const sqlite = openSqlite(dbPath);
  migrate(sqlite);
  const deps = createDeps(sqlite, defaultServeConfig({ db: dbPath }), clock, quiet);
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

  test("the applier builds nothing from an entry past the highest seq on disk (committed, its flush not returned)", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550101", "Ann");
    await t.post("+14155550102", "Bea");
    const seqs = (t.sqlite.query("SELECT seq FROM submission_intake ORDER BY seq").all() as Array<{ seq: number }>).map((r) => r.seq);
    let onDisk = seqs[0];
    t.applier.durableSeq = () => onDisk;
    expect(t.applier.applyBatch().applied).toBe(1);
    expect(t.applier.applyBatch().applied).toBe(0);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(1);
    onDisk = seqs[1];
    expect(t.applier.applyBatch().applied).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(2);
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

describe("derived data of applied submissions (message_counts, monthly_usage, message_rollups)", () => {
  const usage = (t: ReturnType<typeof setup>) => t.count("SELECT coalesce(sum(n), 0) AS n FROM monthly_usage WHERE account_id = ?", t.accountId);
  const queuedCount = (t: ReturnType<typeof setup>) =>
    t.count("SELECT coalesce(sum(n), 0) AS n FROM message_counts WHERE account_id = ? AND status = 'queued'", t.accountId);

  test("written by the applier's batch, once per message, equal to a rebuild; unapplied entries are no difference", async () => {
    const t = setup({ duplicateWindowMinutes: 10 });
    await t.post("+14155550111");
    await t.post("+14155550111"); // duplicate: a submission, no message
    await t.post("+14155550112");
    expect(queuedCount(t)).toBe(0);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
    expect(t.applier.applyBatch().applied).toBe(3);
    expect(queuedCount(t)).toBe(2);
    expect(usage(t)).toBe(2);
    expect(t.count("SELECT queued AS n FROM message_rollups WHERE account_id = ? AND form_id = '*' AND level = 0", t.accountId)).toBe(2);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });

  test("a skipped entry's counts go with its savepoint; a failed batch writes none", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550113");
    await t.post("+14155550114");
    // The second entry fails after its message was inserted and recorded.
    t.sqlite.run(
      `CREATE TEMP TRIGGER refuse_submission BEFORE INSERT ON main.submissions
         WHEN (SELECT phone_number FROM main.contacts WHERE id = NEW.contact_id) = '+14155550114' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    expect(t.applier.applyBatch().skipped.length).toBe(1);
    t.sqlite.run("DROP TRIGGER temp.refuse_submission");
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(queuedCount(t)).toBe(1);
    expect(checkDerived(t.sqlite).differences).toEqual([]);

    await t.post("+14155550115");
    // The mark's UPDATE fails at the end of the batch: the whole batch rolls back, counts included.
    t.sqlite.run("CREATE TEMP TRIGGER refuse_mark BEFORE UPDATE ON main.intake_applied BEGIN SELECT RAISE(ABORT, 'refused'); END");
    expect(() => t.applier.applyBatch()).toThrow("refused");
    t.sqlite.run("DROP TRIGGER temp.refuse_mark");
    expect(queuedCount(t)).toBe(1);
    expect(t.applier.applyBatch().applied).toBe(1);
    expect(queuedCount(t)).toBe(2);
    expect(usage(t)).toBe(2);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });

  test("boot's drain writes them too", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550116");
    await t.post("+14155550117");
    createDeps(t.sqlite, defaultServeConfig({ db: t.dbPath }), () => NOW, quiet);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
    expect(queuedCount(t)).toBe(2);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });
});

describe("chunks (multi-row inserts) and row by row", () => {
  test("leave the same contacts, messages, submissions, conversations, search index and counts", async () => {
    let now = NOW;
    const t = setup({ duplicateWindowMinutes: 0 }, () => (now += 1_000));
    const people = ["Ann", "Bea", "Cy", "Di"];
    // The last 23 resend each phone's previous body exactly: only updated_at moves (a narrower UPDATE).
    for (let n = 0; n < 173; n++) {
      const i = n < 150 ? n : n - 23;
      const phone = `+1415555${String(2000 + (i % 23)).padStart(4, "0")}`;
      const firstName = people[i % people.length];
      const body: Record<string, unknown> = { phoneNumber: phone, firstName };
      if (i % 3 === 0) body.lastName = `Lee${i % 5}`;
      if (i % 4 === 0) body.email = `p${i % 7}@example.com`;
      const form = t.deps.submissions.findForm(t.formId)!;
      await t.deps.submissions.submit(form, { body, rawJson: JSON.stringify(body), ipAddress: "127.0.0.1", userAgent: null });
    }
    const copy = join(t.dir, "copy.db");
    backupDatabase(t.dbPath, copy, () => NOW);
    const other = openSqlite(copy);
    cleanup.push(() => other.close());
    const rowByRow = new IntakeApplier(other);
    rowByRow.eventsWanted = () => true; // with a subscriber, each entry is applied on its own
    while (rowByRow.applyBatch(100).applied > 0);
    while (t.applier.applyBatch(100).applied > 0);
    const dump = (db: typeof other) =>
      [
        "SELECT * FROM contacts ORDER BY id",
        "SELECT * FROM messages ORDER BY id",
        "SELECT * FROM submissions ORDER BY id",
        "SELECT * FROM conversations ORDER BY contact_id",
        "SELECT rowid, * FROM contacts_fts ORDER BY rowid",
        "SELECT * FROM message_counts ORDER BY 1, 2, 3",
        "SELECT * FROM monthly_usage ORDER BY 1, 2",
        "SELECT * FROM message_rollups ORDER BY 1, 2, 3, 4, 5",
        "SELECT * FROM intake_applied",
      ].map((q) => db.query(q).all());
    const chunked = dump(t.sqlite);
    expect(chunked[0].length).toBe(23);
    expect(chunked[1].length).toBe(173);
    expect(chunked).toEqual(dump(other));
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  }, 60_000);
});

describe("how an entry is stored", () => {
  test("compressed (a quarter of its JSON or less), and read back exactly", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550131", "Zoë ☕");
    const stored = (t.sqlite.query("SELECT entry FROM submission_intake WHERE seq = 1").get() as { entry: Uint8Array }).entry;
    expect(stored).toBeInstanceOf(Uint8Array);
    const json = decodeIntakeEntry(stored);
    expect(JSON.parse(json).firstName).toBe("Zoë ☕");
    expect(stored.length).toBeLessThan(json.length / 3);
    expect(decodeIntakeEntry(encodeIntakeEntry(json))).toBe(json);
  });

  test("appends close together (a busy server) are kept as JSON text, the next one apart compressed again; all apply alike", () => {
    const { sqlite } = setup();
    let clock = 1_000;
    const store = intakeStore<{ n: number; name: string }>(sqlite, () => clock);
    const form = () => (sqlite.query("SELECT entry FROM submission_intake ORDER BY seq").all() as Array<{ entry: unknown }>).map((r) => (typeof r.entry === "string" ? "text" : "deflate"));
    store.append(1, { n: 1, name: "first" });
    clock += 1;
    store.append(2, { n: 2, name: "close behind" });
    clock += COMPRESS_WHEN_APART_MS - 0.5;
    store.append(3, { n: 3, name: "still busy" });
    clock += COMPRESS_WHEN_APART_MS;
    store.append(4, { n: 4, name: "apart" });
    expect(form()).toEqual(["deflate", "text", "text", "deflate"]);
    expect(store.listAfter(0, 10).map((r) => r.entry)).toEqual([
      { n: 1, name: "first" },
      { n: 2, name: "close behind" },
      { n: 3, name: "still busy" },
      { n: 4, name: "apart" },
    ]);
  });

  test("an entry kept as JSON text (written before entries were compressed) is applied as before", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    const a = await t.post("+14155550132", "Old");
    t.sqlite.query("UPDATE submission_intake SET entry = ? WHERE seq = 1").run(decodeIntakeEntry((t.sqlite.query("SELECT entry FROM submission_intake WHERE seq = 1").get() as { entry: Uint8Array }).entry));
    expect(typeof (t.sqlite.query("SELECT entry FROM submission_intake WHERE seq = 1").get() as { entry: unknown }).entry).toBe("string");
    expect(checkDerived(t.sqlite).differences).toEqual([]);
    expect(t.applier.applyBatch().applied).toBe(1);
    expect(t.sqlite.query("SELECT id, recipient_name FROM messages").all()).toEqual([{ id: a.messageId, recipient_name: "Old" }]);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });
});

describe("textwire doctor and the intake", () => {
  const entryOf = (t: ReturnType<typeof setup>, seq: number) => (t.sqlite.query("SELECT entry FROM submission_intake WHERE seq = ?").get(seq) as { entry: string | Uint8Array }).entry;

  test("a row left at or below the applied mark is a difference; --rebuild removes it", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550121");
    const entry = entryOf(t, 1);
    t.applier.applyBatch();
    t.sqlite.query("INSERT INTO submission_intake (seq, entry) VALUES (1, ?)").run(entry);
    const r = checkDerived(t.sqlite);
    expect(r.counts.submission_intake).toBe(1);
    expect(r.differences[0].detail).toContain("marked applied but still in the intake");
    expect(r.differences[0].detail).not.toContain("missing");
    rebuildDerived(t.sqlite);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });

  test("a row marked applied whose rows are missing is applied by --rebuild, counts included", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    const a = await t.post("+14155550122");
    t.sqlite.run("UPDATE intake_applied SET seq = 1");
    const r = checkDerived(t.sqlite);
    expect(r.counts.submission_intake).toBe(1);
    expect(r.differences[0].detail).toContain("missing");
    const lines: string[] = [];
    rebuildDerived(t.sqlite, (l) => lines.push(l));
    expect(lines.join("\n")).toContain("intake entry 1: applied");
    expect(t.count("SELECT count(*) AS n FROM messages WHERE id = ?", a.messageId)).toBe(1);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });

  test("an unapplied row whose submission already exists is a difference; --rebuild removes it", async () => {
    const t = setup({ duplicateWindowMinutes: 0 });
    await t.post("+14155550123");
    const entry = entryOf(t, 1);
    t.applier.applyBatch();
    t.sqlite.query("INSERT INTO submission_intake (seq, entry) VALUES (7, ?)").run(entry);
    const r = checkDerived(t.sqlite);
    expect(r.counts.submission_intake).toBe(1);
    expect(r.differences[0].detail).toContain("not applied yet but its submission");
    rebuildDerived(t.sqlite);
    expect(t.count("SELECT count(*) AS n FROM submission_intake")).toBe(0);
    expect(t.count("SELECT count(*) AS n FROM messages")).toBe(1);
    expect(checkDerived(t.sqlite).differences).toEqual([]);
  });
});

describe("boot and backups", () => {
  test("a database from before the intake migrates: existing contacts are merged into, and every derived structure equals a rebuild", async () => {
    const dir = tempDir("textwire-intake-old-");
    const dbPath = join(dir, "textwire.db");
    const sqlite = openSqlite(dbPath);
    cleanup.push(() => {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // Before migration 0015 (rollups, derived counts by batch, the intake): the upgrade rebuilds what is derived once.
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0015"));
    const at = new Date(NOW - 86_400_000).toISOString();
    const F = crypto.randomUUID();
    sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [at]);
    sqlite.run(
      `INSERT INTO forms (id, account_id, name, name_key, message_template, fields, settings, created_at, updated_at)
       VALUES (?, 'a1', 'F', 'f', 'Hi {{firstName}}', '[{"name":"firstName","type":"text"}]', '{"timezone":"UTC","duplicateWindowMinutes":0}', ?, ?)`,
      [F, at, at],
    );
    sqlite.run("INSERT INTO contacts (id, account_id, phone_number, first_name, form_id, created_at, updated_at) VALUES ('c1', 'a1', '+14155550131', 'Old', ?, ?, ?)", [F, at, at]);
    sqlite.run("INSERT INTO messages (id, account_id, form_id, contact_id, content, recipient_phone, scheduled_for, seq, created_at, updated_at) VALUES ('m1', 'a1', ?, 'c1', 'x', '+14155550131', ?, 1, ?, ?)", [F, at, at, at]);
    const { applied } = migrate(sqlite);
    expect(applied).toContain("0015_message_rollups");
    expect(applied).toContain("0016_submission_intake");
    const deps = createDeps(sqlite, defaultServeConfig({ db: dbPath }), () => NOW, quiet);
    const form = deps.submissions.findForm(F)!;
    for (const phoneNumber of ["+14155550131", "+14155550132"]) {
      const body = { phoneNumber, firstName: "New" };
      await deps.submissions.submit(form, { body, rawJson: JSON.stringify(body), ipAddress: "127.0.0.1", userAgent: null });
    }
    expect(new IntakeApplier(sqlite).drain()).toBe(2);
    expect(sqlite.query("SELECT id, first_name FROM contacts ORDER BY phone_number").all()).toEqual([
      { id: "c1", first_name: "New" },
      { id: expect.any(String), first_name: "New" },
    ]);
    expect(sqlite.query("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 3 });
    expect(checkDerived(sqlite).differences).toEqual([]);
  });

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
