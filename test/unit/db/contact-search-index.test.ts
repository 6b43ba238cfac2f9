/**
 * Migration 0002 (contacts_fts, the FTS5 trigram index of contact search) on a database that
 * already holds contacts: the index is filled, searches through it give exactly what the plain
 * substring tests give, and the triggers keep it in step afterwards.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { filterSql } from "../../../src/db/stores/contacts/filter";
import { contactSearchText } from "../../../src/domain/contact-search";
import { ftsMatch } from "../../../src/domain/contact-fts";
import { searchPattern } from "../../../src/domain/contact-query";
import { tempDir } from "../../helpers/server";
import { searchIndexDifferences } from "../../../src/db/stores/contacts/search-pending";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const FIRST = ["Maria", "John", "Aisha", "Chen", "Olga", "Sara", "Zoë", "Łukasz", "O'Neil", 'Jo"e'];
const LAST = ["Lopez", "Smith", "KHAN", "Wang", "Ivanova", "Straße", "Müller", "de la Cruz"];
const PLANS = ["gold", "Gold", "GOLD", "gold plus", "silver", 'say "hi"'];

/** A database at the schema before 0002, filled with `n` contacts written as every writer does. */
function previousSchemaWithContacts(n: number): Database {
  const d = tempDir();
  dirs.push(d);
  const sqlite = openSqlite(join(d, "t.db"));
  // 0023 (the pending contacts) replaces 0002's triggers: it comes after 0002 or not at all.
  const before = EMBEDDED_MIGRATIONS.filter((m) => m.tag !== "0002_contact_search_index" && m.tag !== "0023_contact_search_pending");
  expect(before.length).toBe(EMBEDDED_MIGRATIONS.length - 2);
  migrate(sqlite, before);
  expect(sqlite.query("SELECT name FROM sqlite_master WHERE name = 'contacts_fts'").get()).toBeNull();
  const now = new Date().toISOString();
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?), ('a2', 'B', ?)", [now, now]);
  const ins = sqlite.prepare(
    "INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, custom_fields, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const first = FIRST[i % FIRST.length];
      const last = LAST[(i * 7) % LAST.length];
      const email = i % 3 === 0 ? null : `${first}.${last}${i}@example.com`.toLowerCase();
      const phone = `+1201555${String(i).padStart(4, "0")}`;
      const cf = JSON.stringify({ plan: PLANS[i % PLANS.length], n: String(i % 13) });
      const created = new Date(Date.parse("2026-01-01T00:00:00.000Z") + i * 1000).toISOString();
      ins.run(`c${i}`, i % 7 === 0 ? "a2" : "a1", phone, first, last, email, cf, contactSearchText({ firstName: first, lastName: last, email, phoneNumber: phone }), created, created);
    }
  })();
  return sqlite;
}

/** Ids a filter selects through filterSql (index pre-filter + exact test), in list order. */
function viaFilter(sqlite: Database, accountId: string, f: Parameters<typeof filterSql>[1]): string[] {
  const { where, params } = filterSql(accountId, f);
  return (sqlite.query(`SELECT c.id FROM contacts c WHERE ${where} ORDER BY c.created_at DESC, c.rowid DESC`).values(...(params as any[])) as string[][]).map((r) => r[0]);
}

/** The same, by brute force in JS: the semantics before the index existed. */
function bruteForce(sqlite: Database, accountId: string, f: { search?: string; customFields?: Record<string, string> }): string[] {
  const rows = sqlite.query("SELECT id, phone_number, search_text, custom_fields FROM contacts WHERE account_id = ? ORDER BY created_at DESC, rowid DESC").all(accountId) as any[];
  return rows
    .filter((r) => {
      if (f.search !== undefined) {
        if (/^\d+$/.test(f.search) ? !r.phone_number.includes(f.search) : !r.search_text.includes(f.search)) return false;
      }
      const cf = JSON.parse(r.custom_fields);
      return Object.entries(f.customFields ?? {}).every(([k, v]) => cf[k] === v);
    })
    .map((r) => r.id);
}

const SEARCHES = ["maria", "MARIA LOPEZ", "lopez1", "ſara", "sara", "zoë", "zoe", "straße", "strasse", "müller", "mueller", "o'neil", 'jo"e', "de la cruz", "la c", "@example.com", "example", "(201) 555-01", "555 0042", "5550", "20155500", "ma", "x", "é", "ng", "nothing-like-this", "khan\u0001"];
const FIELDS: Array<Record<string, string>> = [{ plan: "gold" }, { plan: "GOLD" }, { plan: "Gold" }, { plan: "gold plus" }, { plan: 'say "hi"' }, { plan: "gol" }, { n: "1" }, { n: "12" }, { plan: "gold", n: "4" }, { plan: "" }, { nope: "gold" }];

describe("migration 0002_contact_search_index", () => {
  test("on a database full of contacts: fills the index; every search answers exactly as the plain scan", () => {
    const sqlite = previousSchemaWithContacts(600);
    const r = migrate(sqlite);
    expect(r.applied).toEqual(["0002_contact_search_index", "0023_contact_search_pending"]);
    // Fully indexed: nothing pending after 0023.
    expect(() => sqlite.run("INSERT INTO contacts_fts (contacts_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
    expect(sqlite.query("SELECT count(*) AS n FROM contacts_fts_pending").get()).toEqual({ n: 0 });
    const match = ftsMatch("search_text", "maria")!;
    expect((sqlite.query("SELECT count(*) AS n FROM contacts_fts WHERE contacts_fts MATCH ?").get(match) as any).n).toBe(60);

    for (const q of SEARCHES) {
      const search = searchPattern(q);
      for (const acc of ["a1", "a2"]) expect({ q, ids: viaFilter(sqlite, acc, { search }) }).toEqual({ q, ids: bruteForce(sqlite, acc, { search }) });
    }
    expect(viaFilter(sqlite, "a1", { search: "maria" }).length).toBeGreaterThan(0);
    for (const customFields of FIELDS) {
      for (const acc of ["a1", "a2"]) expect({ customFields, ids: viaFilter(sqlite, acc, { customFields }) }).toEqual({ customFields, ids: bruteForce(sqlite, acc, { customFields }) });
    }
    expect(viaFilter(sqlite, "a1", { customFields: { plan: "gold" } }).length).toBeGreaterThan(0);
    sqlite.close();
  });

  test("after the migration, inserts, updates and deletes keep the index in step", () => {
    const sqlite = previousSchemaWithContacts(50);
    migrate(sqlite);
    const now = new Date().toISOString();
    sqlite.run(
      "INSERT INTO contacts (id, account_id, phone_number, first_name, custom_fields, search_text, created_at, updated_at) VALUES ('n1', 'a1', '+12025550000', 'Quentin', '{\"plan\":\"platinum\"}', ?, ?, ?)",
      [contactSearchText({ firstName: "Quentin", phoneNumber: "+12025550000" }), now, now],
    );
    expect(viaFilter(sqlite, "a1", { search: "quentin" })).toEqual(["n1"]);
    expect(viaFilter(sqlite, "a1", { customFields: { plan: "platinum" } })).toEqual(["n1"]);
    // An update of other columns leaves the index alone; of search_text / custom_fields moves it.
    sqlite.run("UPDATE contacts SET status = 'converted', search_text = search_text WHERE id = 'n1'");
    expect(viaFilter(sqlite, "a1", { search: "quentin" })).toEqual(["n1"]);
    sqlite.run("UPDATE contacts SET first_name = 'Ursula', search_text = ?, custom_fields = '{\"plan\":\"iron\"}' WHERE id = 'n1'", [
      contactSearchText({ firstName: "Ursula", phoneNumber: "+12025550000" }),
    ]);
    expect(viaFilter(sqlite, "a1", { search: "quentin" })).toEqual([]);
    expect(viaFilter(sqlite, "a1", { search: "ursula" })).toEqual(["n1"]);
    expect(viaFilter(sqlite, "a1", { customFields: { plan: "platinum" } })).toEqual([]);
    expect(viaFilter(sqlite, "a1", { customFields: { plan: "iron" } })).toEqual(["n1"]);
    sqlite.run("DELETE FROM contacts WHERE id IN ('n1', 'c1', 'c2')");
    expect(viaFilter(sqlite, "a1", { search: "ursula" })).toEqual([]);
    expect(searchIndexDifferences(sqlite)).toEqual([]);
    for (const q of SEARCHES) expect(viaFilter(sqlite, "a1", { search: searchPattern(q) })).toEqual(bruteForce(sqlite, "a1", { search: searchPattern(q) }));
    sqlite.close();
  });

  test("a backup copy (VACUUM INTO) keeps rowids, so its index still matches its contacts", () => {
    const sqlite = previousSchemaWithContacts(100);
    migrate(sqlite);
    sqlite.run("DELETE FROM contacts WHERE id IN ('c3', 'c10', 'c11', 'c50')");
    const d = tempDir();
    dirs.push(d);
    const copyPath = join(d, "copy.db");
    sqlite.run(`VACUUM INTO '${copyPath}'`);
    const copy = openSqlite(copyPath);
    expect(() => copy.run("INSERT INTO contacts_fts (contacts_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
    for (const q of ["maria", "lopez", "5550"]) expect(viaFilter(copy, "a1", { search: q })).toEqual(bruteForce(copy, "a1", { search: q }));
    copy.close();
    sqlite.close();
  });
});
