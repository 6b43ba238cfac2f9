/**
 * Migration 0020: contact_tags keyed on the contact's rowid and kept by triggers on contacts.
 * Every writer writes only contacts.tags; the rows follow inserts, tag changes, deletes and the
 * cascades (form, account); the migration builds them from the tags columns; `textwire doctor`
 * finds a row out of step and rebuilds it. Migration 0025: each row carries its contact's status,
 * following every status change (alone or with a tag change).
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";
import { tempDir } from "../../helpers/server";
import { insertContact } from "../../helpers/contact-fixtures";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function open(migrations = EMBEDDED_MIGRATIONS): Database {
  const d = tempDir();
  dirs.push(d);
  const sqlite = openSqlite(join(d, "t.db"));
  migrate(sqlite, migrations);
  const now = new Date().toISOString();
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?), ('a2', 'B', ?)", [now, now]);
  return sqlite;
}

/** The rows as (tag, contact id), sorted. */
const rows = (db: Database, accountId = "a1") =>
  (
    db
      .query("SELECT t.tag, c.id FROM contact_tags t JOIN contacts c ON c.rowid = t.contact_rowid WHERE t.account_id = ? ORDER BY c.id, t.tag")
      .all(accountId) as Array<{ tag: string; id: string }>
  ).map((r) => `${r.id}:${r.tag}`);
const count = (db: Database) => (db.query("SELECT count(*) AS n FROM contact_tags").get() as { n: number }).n;

describe("contact_tags follows contacts.tags (triggers)", () => {
  test("insert, change, unchanged rewrite, clear and delete", () => {
    const db = open();
    const a = insertContact(db, "a1", { tags: ["vip", "lead"] });
    const b = insertContact(db, "a1", {});
    const c = insertContact(db, "a2", { tags: ["vip"] });
    expect(rows(db)).toEqual([`${a}:lead`, `${a}:vip`]);
    expect(rows(db, "a2")).toEqual([`${c}:vip`]);
    db.run("UPDATE contacts SET tags = ? WHERE id = ?", [JSON.stringify(["lead", "new"]), a]);
    db.run("UPDATE contacts SET tags = ? WHERE id = ?", [JSON.stringify(["x"]), b]);
    expect(rows(db)).toEqual([`${a}:lead`, `${a}:new`, `${b}:x`].sort());
    // A write that names the column without changing it, and one that does not name it (the
    // webhook applier's UPDATE … FROM VALUES), leave the rows as they are.
    db.run("UPDATE contacts SET tags = tags, first_name = 'Z' WHERE id = ?", [a]);
    db.run("UPDATE contacts SET search_text = 'z' WHERE id = ?", [b]);
    expect(rows(db)).toEqual([`${a}:lead`, `${a}:new`, `${b}:x`].sort());
    db.run("UPDATE contacts SET tags = '[]' WHERE id = ?", [a]);
    expect(rows(db)).toEqual([`${b}:x`]);
    db.run("DELETE FROM contacts WHERE id = ?", [b]);
    expect(rows(db)).toEqual([]);
    expect(count(db)).toBe(1);
    expect(checkDerived(db).counts.contact_tags).toBe(0);
    db.close();
  });

  test("a form's and an account's deletion (cascades) remove their contacts' rows; a reused rowid starts clean", () => {
    const db = open();
    const now = new Date().toISOString();
    db.run(
      `INSERT INTO forms (id, account_id, name, name_key, message_template, is_active, fields, settings, created_at, updated_at)
       VALUES ('f1', 'a1', 'F', 'f', 'Hi', 1, '[]', '{}', ?, ?)`,
      [now, now],
    );
    insertContact(db, "a1", { tags: ["kept"] });
    for (let i = 0; i < 3; i++) insertContact(db, "a1", { tags: ["form", `n${i}`], formId: "f1" });
    for (let i = 0; i < 3; i++) insertContact(db, "a2", { tags: ["other"] });
    expect(count(db)).toBe(1 + 6 + 3);
    db.run("DELETE FROM forms WHERE id = 'f1'");
    expect(count(db)).toBe(1 + 3);
    db.run("DELETE FROM accounts WHERE id = 'a2'");
    expect(count(db)).toBe(1);
    // The highest rowids went: SQLite hands them out again, with no tag left behind.
    const n = insertContact(db, "a1", {});
    expect(rows(db).filter((r) => r.startsWith(n))).toEqual([]);
    expect(checkDerived(db).counts.contact_tags).toBe(0);
    db.close();
  });
});

describe("migration 0020 on a database with tagged contacts", () => {
  test("the rows are built from the tags columns, keyed on the rowid; the old table and index are gone", () => {
    // The schema as it was before 0020 (the later migrations build on its table).
    const before = EMBEDDED_MIGRATIONS.filter((m) => m.idx < 20);
    expect(before.length).toBe(EMBEDDED_MIGRATIONS.findIndex((m) => m.tag === "0020_contact_tags_by_rowid"));
    const db = open(before);
    const now = new Date().toISOString();
    const ins = db.prepare("INSERT INTO contacts (id, account_id, phone_number, tags, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, '', ?, ?)");
    const insTag = db.prepare("INSERT INTO contact_tags (contact_id, account_id, tag) VALUES (?, ?, ?)");
    for (let i = 0; i < 50; i++) {
      const tags = i % 5 === 0 ? [] : [`t${i % 3}`, ...(i % 2 ? ["odd"] : [])];
      const account = i % 4 === 0 ? "a2" : "a1";
      ins.run(`c${String(i).padStart(2, "0")}`, account, `+1201555${String(i).padStart(4, "0")}`, JSON.stringify(tags), now, now);
      for (const t of tags) insTag.run(`c${String(i).padStart(2, "0")}`, account, t);
    }
    const old = (db.query("SELECT account_id || ' ' || contact_id || ':' || tag AS k FROM contact_tags ORDER BY 1").all() as Array<{ k: string }>).map((r) => r.k);
    migrate(db);
    const now_ = (db.query("SELECT t.account_id || ' ' || c.id || ':' || t.tag AS k FROM contact_tags t JOIN contacts c ON c.rowid = t.contact_rowid ORDER BY 1").all() as Array<{ k: string }>).map((r) => r.k);
    expect(now_).toEqual(old);
    expect(old.length).toBeGreaterThan(40);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'contact_tags_account_tag_contact_idx'").get()).toBeNull();
    // Insert, tags, delete (0020) and status (0025).
    expect((db.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'contacts_tags_%'").get() as { n: number }).n).toBe(4);
    // The search index's triggers are untouched.
    expect((db.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'contacts_fts_%'").get() as { n: number }).n).toBe(3);
    expect(checkDerived(db).differences).toEqual([]);
    db.close();
  });
});

describe("textwire doctor and contact_tags", () => {
  test("a missing and an extra row are found; a rebuild restores exactly the expected rows", () => {
    const db = open();
    const a = insertContact(db, "a1", { tags: ["vip", "lead"] });
    insertContact(db, "a1", { tags: ["vip"] });
    const expected = rows(db);
    db.run("DELETE FROM contact_tags WHERE tag = 'lead'");
    db.run("INSERT INTO contact_tags (account_id, tag, contact_rowid, status) SELECT 'a1', 'ghost', rowid, status FROM contacts WHERE id = ?", [a]);
    const r = checkDerived(db);
    expect(r.counts.contact_tags).toBe(2);
    expect(r.differences.filter((d) => d.structure === "contact_tags").map((d) => d.detail.split(" ")[0]).sort()).toEqual(["extra", "missing"]);
    const lines: string[] = [];
    rebuildDerived(db, (l) => lines.push(l));
    expect(lines.some((l) => l.includes("contact_tags"))).toBe(true);
    expect(rows(db)).toEqual(expected);
    expect(checkDerived(db).differences).toEqual([]);
    db.close();
  });
});

/** The rows as (contact id, tag, status), sorted. */
const withStatus = (db: Database) =>
  (
    db.query("SELECT c.id, t.tag, t.status FROM contact_tags t JOIN contacts c ON c.rowid = t.contact_rowid ORDER BY c.id, t.tag").all() as Array<{ id: string; tag: string; status: string }>
  ).map((r) => `${r.id}:${r.tag}:${r.status}`);

describe("contact_tags carries the contact's status (migration 0025)", () => {
  test("a status change, alone or with a tag change in the same UPDATE, and a rewrite that keeps it", () => {
    const db = open();
    const a = insertContact(db, "a1", { tags: ["vip", "lead"], status: "new" });
    const b = insertContact(db, "a1", { tags: ["vip"], status: "contacted" });
    const c = insertContact(db, "a1", { status: "new" });
    expect(withStatus(db)).toEqual([`${a}:lead:new`, `${a}:vip:new`, `${b}:vip:contacted`].sort());
    db.run("UPDATE contacts SET status = 'responded' WHERE id = ?", [a]);
    expect(withStatus(db)).toEqual([`${a}:lead:responded`, `${a}:vip:responded`, `${b}:vip:contacted`].sort());
    // Both columns at once, in either order in SET: tags kept, dropped and added all end with the new status.
    db.run("UPDATE contacts SET status = 'converted', tags = ? WHERE id = ?", [JSON.stringify(["vip", "new"]), a]);
    db.run("UPDATE contacts SET tags = ?, status = 'new' WHERE id = ?", [JSON.stringify(["vip", "x"]), b]);
    expect(withStatus(db)).toEqual([`${a}:new:converted`, `${a}:vip:converted`, `${b}:vip:new`, `${b}:x:new`].sort());
    // The send and reply paths' CASE writes (status named, maybe unchanged).
    db.run("UPDATE contacts SET status = CASE WHEN status = 'new' THEN 'contacted' ELSE status END WHERE account_id = 'a1'");
    expect(withStatus(db)).toEqual([`${a}:new:converted`, `${a}:vip:converted`, `${b}:vip:contacted`, `${b}:x:contacted`].sort());
    // A contact without tags has no rows to follow; given tags later, they carry its status then.
    db.run("UPDATE contacts SET status = 'responded' WHERE id = ?", [c]);
    db.run("UPDATE contacts SET tags = ? WHERE id = ?", [JSON.stringify(["late"]), c]);
    expect(withStatus(db)).toContain(`${c}:late:responded`);
    expect(checkDerived(db).counts.contact_tags).toBe(0);
    db.close();
  });

  test("the migration gives the existing rows their contacts' status; the doctor finds a wrong one and rebuilds it", () => {
    const before = EMBEDDED_MIGRATIONS.filter((m) => m.tag !== "0025_contact_tags_status");
    expect(before.length).toBe(EMBEDDED_MIGRATIONS.length - 1);
    const db = open(before);
    const statuses = ["new", "contacted", "responded", "converted"];
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(insertContact(db, i % 3 ? "a1" : "a2", { tags: i % 5 ? [`t${i % 3}`, "all"] : [], status: statuses[i % 4] as any }));
    const old = (db.query("SELECT account_id, tag, contact_rowid FROM contact_tags ORDER BY 1, 2, 3").all() as any[]).map((r) => `${r.account_id} ${r.tag} ${r.contact_rowid}`);
    migrate(db);
    const now = db.query("SELECT t.account_id, t.tag, t.contact_rowid, t.status, c.status AS contact_status FROM contact_tags t JOIN contacts c ON c.rowid = t.contact_rowid ORDER BY 1, 2, 3").all() as any[];
    expect(now.map((r) => `${r.account_id} ${r.tag} ${r.contact_rowid}`)).toEqual(old);
    expect(old.length).toBeGreaterThan(50);
    expect(now.filter((r) => r.status !== r.contact_status)).toEqual([]);
    expect(new Set(now.map((r) => r.status)).size).toBe(4);
    expect(checkDerived(db).differences).toEqual([]);

    db.run("UPDATE contact_tags SET status = 'converted' WHERE contact_rowid = (SELECT rowid FROM contacts WHERE id = ?) AND tag = 'all'", [ids[1]]);
    const r = checkDerived(db);
    // The row found (wrong status) and the row expected (right one).
    expect(r.counts.contact_tags).toBe(2);
    expect(r.differences.filter((d) => d.structure === "contact_tags").map((d) => d.detail).sort()).toEqual([
      expect.stringMatching(/^extra tag "all" \(status converted\)/),
      expect.stringMatching(/^missing tag "all" \(status contacted\)/),
    ]);
    rebuildDerived(db);
    expect(checkDerived(db).differences).toEqual([]);
    db.close();
  });
});
