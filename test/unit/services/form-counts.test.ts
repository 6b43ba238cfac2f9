/**
 * Form stats' submissions and new contacts from the rollups (migration 0022): after webhook
 * submissions (the applier's chunk path and its one-entry path), CSV imports with a form and a
 * createdAt, direct deletes and the cascades of form and account deletes, they equal a count
 * over the rows themselves — per local day in several zones, and between arbitrary instants —
 * and `doctor --check` finds nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { createDeps, type AppDeps } from "../../../src/deps";
import { defaultServeConfig } from "../../../src/config";
import { IntakeApplier, type IntakeEntry } from "../../../src/services/intake/applier";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";
import { rollupIntervals } from "../../../src/db/stores/messages/rollups";
import { derivedCounts, NEW_CONTACTS, SUBMISSIONS } from "../../../src/db/derived-counts";
import { bucketIndex, dayBoundaries, periodWindow } from "../../../src/domain/time-series";
import { tempDir } from "../../helpers/server";
import { insertForm } from "../../helpers/fixtures";
import { rng } from "../../helpers/rng";

const quiet = { info() {}, warn() {}, error() {} };
const NOW = Date.parse("2026-11-20T12:00:00.000Z");
const DAY = 86_400_000;
const ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham"];

let dir: string;
let sqlite: Database;
let deps: AppDeps;
let accountId: string;
let otherAccount: string;
let forms: string[];
let clock = NOW;
let phoneSeq = 0;

const count = (sql: string, ...p: unknown[]) => (sqlite.query(sql).get(...(p as [])) as { n: number }).n;
const phone = () => `+1201555${String(phoneSeq++).padStart(4, "0")}`;

async function submit(formId: string, phoneNumber: string, at: number) {
  clock = at;
  const form = deps.submissions.findForm(formId)!;
  const body = { phoneNumber, firstName: "Ann" };
  await deps.submissions.submit(form, { body, rawJson: JSON.stringify(body), ipAddress: "127.0.0.1", userAgent: null });
}

async function importCsv(acc: string, rows: string[][]) {
  async function* batches() {
    yield [["phoneNumber", "firstName", "formId", "createdAt", "optedOut"], ...rows].map((cells) => ({ cells }));
  }
  return deps.contacts.importRows(acc, batches());
}

/** Direct counts of a form's submissions and new contacts in [lo, hi). */
function direct(formId: string, lo: number, hi: number): [number, number] {
  const a = new Date(lo).toISOString();
  const b = new Date(hi).toISOString();
  return [
    count("SELECT COUNT(*) AS n FROM submissions WHERE form_id = ?1 AND created_at >= ?2 AND created_at < ?3", formId, a, b),
    count("SELECT COUNT(*) AS n FROM contacts WHERE form_id = ?1 AND created_at >= ?2 AND created_at < ?3", formId, a, b),
  ];
}

function expectStatsEqualDirect(label: string) {
  const r = rng(label.length);
  for (const formId of forms) {
    for (const zone of ZONES) {
      for (const period of ["7d", "30d", "1y"] as const) {
        const st = deps.analytics.formStats(accountId, formId, { period, timezone: zone }, NOW);
        const { days } = periodWindow(period, NOW, zone);
        const b = dayBoundaries(days, zone);
        const subs = days.map(() => 0);
        const news = days.map(() => 0);
        for (const s of sqlite.query("SELECT created_at FROM submissions WHERE form_id = ?").all(formId) as Array<{ created_at: string }>) {
          const i = bucketIndex(b, Date.parse(s.created_at));
          if (i >= 0) subs[i]++;
        }
        for (const c of sqlite.query("SELECT created_at FROM contacts WHERE form_id = ?").all(formId) as Array<{ created_at: string }>) {
          const i = bucketIndex(b, Date.parse(c.created_at));
          if (i >= 0) news[i]++;
        }
        expect({ label, zone, period, subs: st.dailyBreakdown.map((d) => d.submissions) }).toEqual({ label, zone, period, subs });
        expect({ label, zone, period, news: st.dailyBreakdown.map((d) => d.contacts) }).toEqual({ label, zone, period, news });
        expect(st.periodStats.submissions).toBe(subs.reduce((x, y) => x + y, 0));
        expect(st.periodStats.newContacts).toBe(news.reduce((x, y) => x + y, 0));
      }
    }
    const st = deps.analytics.formStats(accountId, formId, {}, NOW);
    expect(st.totalSubmissions).toBe(count("SELECT COUNT(*) AS n FROM submissions WHERE form_id = ?1", formId));
    expect(st.totalContacts).toBe(count("SELECT COUNT(*) AS n FROM contacts WHERE form_id = ?1", formId));
    // Arbitrary instants, off the quarter hour too (counted from the rows for the odd minutes).
    for (let round = 0; round < 8; round++) {
      const b = Array.from({ length: 5 }, () => NOW - Math.floor(r() * 400 * DAY)).sort((x, y) => x - y);
      if (round % 2 === 0) for (let i = 0; i < b.length; i++) b[i] -= b[i] % 900_000;
      const got = rollupIntervals(sqlite, accountId, formId, b);
      for (let i = 0; i + 1 < b.length; i++) expect([got[i].values[SUBMISSIONS], got[i].values[NEW_CONTACTS]]).toEqual(direct(formId, b[i], b[i + 1]));
    }
  }
  expect(checkDerived(sqlite).differences).toEqual([]);
}

beforeAll(async () => {
  dir = tempDir("textwire-form-rollups-");
  const dbPath = join(dir, "textwire.db");
  sqlite = openSqlite(dbPath);
  migrate(sqlite);
  deps = createDeps(sqlite, defaultServeConfig({ db: dbPath }), () => clock, quiet);
  accountId = deps.accounts.createAccount({ name: "Shop" }).account.id;
  otherAccount = deps.accounts.createAccount({ name: "Other" }).account.id;
  forms = [insertForm(deps, accountId, { name: "One" }), insertForm(deps, accountId, { name: "Two" }), insertForm(deps, accountId, { name: "Three" })];
  for (const f of forms) sqlite.query("UPDATE forms SET settings = ? WHERE id = ?").run(JSON.stringify({ timezone: "UTC", duplicateWindowMinutes: 0 }), f);
});
afterAll(() => {
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("form stats' submissions and new contacts from the rollups", () => {
  // A year of submissions through the applier: seconds on a busy machine (a bound, not a speed check).
  test("webhook submissions applied in chunks (repeat numbers included) over 13 months", async () => {
    const r = rng(22);
    const known: string[] = [];
    for (let i = 0; i < 300; i++) {
      let at = NOW - Math.floor(r() * 400 * DAY);
      if (i % 3 === 0) at = at - (at % 900_000) + (r() < 0.5 ? Math.floor(r() * 60_000) : 900_000 - 1 - Math.floor(r() * 60_000));
      const p = known.length > 0 && r() < 0.3 ? known[Math.floor(r() * known.length)] : phone();
      known.push(p);
      await submit(forms[Math.floor(r() * 2)], p, at);
      if (i % 40 === 39) new IntakeApplier(sqlite).applyBatch();
    }
    new IntakeApplier(sqlite).drain();
    expect(count("SELECT COUNT(*) AS n FROM submission_intake")).toBe(0);
    expect(count("SELECT COUNT(*) AS n FROM submissions")).toBe(300);
    expectStatsEqualDirect("webhook");
  }, 60_000);

  test("the applier's one-entry path records the same", async () => {
    await submit(forms[2], phone(), NOW - 3 * DAY + 7 * 60_000);
    await submit(forms[2], phone(), NOW - 40 * DAY);
    const applier = new IntakeApplier(sqlite);
    const rows = sqlite.query("SELECT seq, entry FROM submission_intake ORDER BY seq").all() as Array<{ seq: number; entry: string }>;
    expect(rows.length).toBe(2);
    sqlite.transaction(() =>
      derivedCounts(sqlite).batch(() => {
        for (const row of rows) {
          applier.applyEntry(JSON.parse(row.entry) as IntakeEntry);
          sqlite.query("DELETE FROM submission_intake WHERE seq = ?").run(row.seq);
        }
      }),
    )();
    expect(count("SELECT COUNT(*) AS n FROM submissions WHERE form_id = ?1", forms[2])).toBe(2);
    expectStatsEqualDirect("one entry");
  }, 60_000);

  test("a failing chunk's records are rolled back with it", () => {
    const before = sqlite.query("SELECT SUM(submissions) AS s, SUM(new_contacts) AS c FROM message_rollups").get();
    const d = derivedCounts(sqlite);
    expect(() =>
      sqlite.transaction(() =>
        d.batch(() => {
          d.recordFormRows({ accountId, formId: forms[0], createdAt: new Date(NOW).toISOString(), submissions: 5, newContacts: 5 });
          throw new Error("job failed");
        }),
      )(),
    ).toThrow("job failed");
    sqlite.transaction(() =>
      d.batch(() => {
        const mark = d.mark();
        d.recordFormRows({ accountId, formId: forms[0], createdAt: new Date(NOW).toISOString(), submissions: 1, newContacts: 1 });
        d.rollbackTo(mark);
      }),
    )();
    expect(sqlite.query("SELECT SUM(submissions) AS s, SUM(new_contacts) AS c FROM message_rollups").get()).toEqual(before);
    expect(checkDerived(sqlite).differences).toEqual([]);
  });

  test("CSV imports with a form and createdAt (batched rows and the opt-out path); contacts of no form count for none", async () => {
    const r = rng(5);
    const rows: string[][] = [];
    for (let i = 0; i < 250; i++) {
      const at = new Date(NOW - Math.floor(r() * 400 * DAY)).toISOString();
      const form = i % 10 === 0 ? "" : forms[i % 3];
      rows.push([phone(), "Bo", form, at, i % 17 === 0 ? "true" : ""]);
    }
    const res = await importCsv(accountId, rows);
    expect(res.errors).toEqual([]);
    expect(res.created).toBe(250);
    expect(count("SELECT COUNT(*) AS n FROM contacts WHERE opted_out = 1")).toBeGreaterThan(10);
    const none = count("SELECT COUNT(*) AS n FROM contacts WHERE form_id IS NULL");
    expect(none).toBeGreaterThanOrEqual(25);
    expect(count("SELECT COUNT(*) AS n FROM message_rollups WHERE (form_id = '' OR form_id = '*') AND (submissions <> 0 OR new_contacts <> 0)")).toBe(0);
    expectStatsEqualDirect("import");
  });

  test("direct deletes: a contact, submissions", () => {
    const c = sqlite.query("SELECT id FROM contacts WHERE form_id = ? LIMIT 1").get(forms[0]) as { id: string };
    deps.contacts.delete(accountId, c.id);
    sqlite.run("DELETE FROM submissions WHERE rowid % 7 = 0");
    expectStatsEqualDirect("deletes");
  });

  test("a contact or submission moved to another form or instant is re-keyed", () => {
    sqlite.query("UPDATE contacts SET form_id = ?1 WHERE form_id = ?2 AND rowid % 5 = 0").run(forms[1], forms[0]);
    sqlite.query("UPDATE contacts SET form_id = NULL WHERE form_id = ?1 AND rowid % 6 = 0").run(forms[1]);
    sqlite.query("UPDATE contacts SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', julianday(created_at) - 0.37) WHERE rowid % 4 = 0").run();
    sqlite.query("UPDATE submissions SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', julianday(created_at) + 1.21) WHERE rowid % 3 = 0").run();
    expectStatsEqualDirect("re-keyed");
  });

  test("doctor: a changed count is found, --rebuild restores it", () => {
    const row = sqlite.query("SELECT bucket FROM message_rollups WHERE form_id = ? AND level = 0 AND reason = '' AND submissions > 0 LIMIT 1").get(forms[0]) as { bucket: string };
    sqlite.query("UPDATE message_rollups SET submissions = submissions + 2, new_contacts = new_contacts - 1 WHERE form_id = ? AND level = 0 AND reason = '' AND bucket = ?").run(forms[0], row.bucket);
    const check = checkDerived(sqlite);
    expect(check.counts.message_rollups).toBe(2);
    expect(check.differences.map((d) => d.structure)).toEqual(["message_rollups", "message_rollups"]);
    expect(check.differences[0].detail).toContain("submissions");
    rebuildDerived(sqlite);
    expectStatsEqualDirect("rebuilt");
  });

  test("cascades: a form delete takes its submissions and contacts out; an account delete takes everything", async () => {
    await submit(forms[0], phone(), NOW - 2 * DAY);
    new IntakeApplier(sqlite).drain();
    deps.forms.delete(accountId, forms[1]);
    expect(count("SELECT COUNT(*) AS n FROM message_rollups WHERE form_id = ?1 AND (submissions <> 0 OR new_contacts <> 0)", forms[1])).toBe(0);
    forms = [forms[0], forms[2]];
    expectStatsEqualDirect("form deleted");
    // Another account's form: deleted with its account (contacts and submissions by cascade).
    const f = insertForm(deps, otherAccount, { name: "Gone" });
    sqlite.query("UPDATE forms SET settings = ? WHERE id = ?").run(JSON.stringify({ timezone: "UTC", duplicateWindowMinutes: 0 }), f);
    await submit(f, phone(), NOW - DAY);
    new IntakeApplier(sqlite).drain();
    await importCsv(otherAccount, [[phone(), "Cy", f, new Date(NOW - 9 * DAY).toISOString(), ""]]);
    expect(count("SELECT SUM(new_contacts) AS n FROM message_rollups WHERE form_id = ?1 AND level = 0", f)).toBe(2);
    deps.accounts.deleteAccount(otherAccount);
    expect(count("SELECT COUNT(*) AS n FROM message_rollups WHERE account_id = ?1", otherAccount)).toBe(0);
    expectStatsEqualDirect("account deleted");
  });
});

describe("migration 0022", () => {
  test("builds the submissions and new contacts of existing data; the triggers keep them after", () => {
    const d = tempDir("textwire-0022-");
    const db = openSqlite(join(d, "t.db"));
    try {
      migrate(db, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0022"));
      const at = (ms: number) => new Date(ms).toISOString();
      db.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [at(NOW)]);
      for (const f of ["f1", "f2"]) {
        db.run("INSERT INTO forms (id, account_id, name, name_key, message_template, fields, created_at, updated_at) VALUES (?, 'a1', ?, ?, 'hi', '[]', ?, ?)", [f, f, f, at(NOW), at(NOW)]);
      }
      const r = rng(3);
      db.transaction(() => {
        for (let i = 0; i < 400; i++) {
          const t = at(NOW - Math.floor(r() * 400 * DAY));
          const f = i % 2 ? "f1" : "f2";
          db.run("INSERT INTO contacts (id, account_id, phone_number, form_id, created_at, updated_at) VALUES (?, 'a1', ?, ?, ?, ?)", [`c${i}`, `+1201555${String(i).padStart(4, "0")}`, i % 9 === 0 ? null : f, t, t]);
          db.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?, 'a1', ?, ?, NULL, 1, ?)", [`s${i}`, f, `c${i}`, t]);
          if (i % 3 === 0) db.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?, 'a1', ?, ?, NULL, 0, ?)", [`s${i}b`, f, `c${i}`, at(Date.parse(t) + 3_600_000)]);
        }
      })();
      const { applied } = migrate(db);
      // 0022 and whatever came after it.
      expect(applied).toEqual(EMBEDDED_MIGRATIONS.filter((m) => m.tag >= "0022").map((m) => m.tag));
      expect(checkDerived(db).differences).toEqual([]);
      const sum = (col: string, f: string) => (db.query(`SELECT SUM(${col}) AS n FROM message_rollups WHERE form_id = ? AND level = 0`).get(f) as { n: number }).n;
      const n = (sql: string, f: string) => (db.query(sql).get(f) as { n: number }).n;
      for (const f of ["f1", "f2"]) {
        for (const level of [1, 2]) {
          expect((db.query(`SELECT SUM(submissions) AS n FROM message_rollups WHERE form_id = ? AND level = ${level}`).get(f) as { n: number }).n).toBe(sum("submissions", f));
        }
        expect(sum("submissions", f)).toBe(n("SELECT COUNT(*) AS n FROM submissions WHERE form_id = ?", f));
        expect(sum("new_contacts", f)).toBe(n("SELECT COUNT(*) AS n FROM contacts WHERE form_id = ?", f));
      }
      db.run("DELETE FROM submissions WHERE rowid % 4 = 0");
      db.run("DELETE FROM contacts WHERE rowid % 5 = 0");
      expect(checkDerived(db).differences).toEqual([]);
    } finally {
      db.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
