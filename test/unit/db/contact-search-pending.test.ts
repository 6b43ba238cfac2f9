/**
 * Migration 0023: new contacts wait in contacts_fts_pending and are indexed later, in chunks
 * (src/db/stores/contacts/search-pending.ts). Searches are exact in every state — pending, indexed, and
 * after updates and deletes of either — `textwire doctor --check` finds a pending row missing or
 * extra, and `--rebuild` repairs it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { filterSql } from "../../../src/db/stores/contacts/filter";
import { contactSearchText } from "../../../src/domain/contact-search";
import { searchPattern } from "../../../src/domain/contact-query";
import { chunkDue, INDEX_CHUNK_ROWS, PendingSearchIndex, SEARCH_INDEX_WAIT_MS, searchIndexDifferences } from "../../../src/db/stores/contacts/search-pending";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";
import { tempDir } from "../../helpers/server";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const FIRST = ["Maria", "John", "Aisha", "Chen", "Olga", "Sara", "Zoë", "Łukasz"];
const LAST = ["Lopez", "Smith", "KHAN", "Wang", "Straße", "de la Cruz"];
const PLANS = ["gold", "Gold", "gold plus", "silver", "iron"];
const SEARCHES = ["maria", "lopez", "aisha khan", "zoë", "straße", "la c", "example.com", "5550", "20155500", "ma", "x", "ng", "wang", "ursula"];
const FIELDS: Array<Record<string, string>> = [{ plan: "gold" }, { plan: "Gold" }, { plan: "gold plus" }, { plan: "iron" }, { n: "3" }, { plan: "gol" }];

function freshDb(): Database {
  const d = tempDir();
  dirs.push(d);
  const sqlite = openSqlite(join(d, "t.db"));
  migrate(sqlite);
  seq = 0;
  const now = new Date().toISOString();
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?), ('a2', 'B', ?)", [now, now]);
  return sqlite;
}

let seq = 0;
function insert(sqlite: Database, n: number): void {
  const ins = sqlite.prepare(
    "INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, custom_fields, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  sqlite.transaction(() => {
    for (let k = 0; k < n; k++) {
      const i = seq++;
      const first = FIRST[i % FIRST.length];
      const last = LAST[(i * 7) % LAST.length];
      const email = i % 3 === 0 ? null : `${first}.${last}${i}@example.com`.toLowerCase();
      const phone = `+1201555${String(i).padStart(4, "0")}`;
      const created = new Date(Date.parse("2026-01-01T00:00:00.000Z") + i * 1000).toISOString();
      const cf = JSON.stringify({ plan: PLANS[i % PLANS.length], n: String(i % 7) });
      ins.run(`c${i}`, i % 5 === 0 ? "a2" : "a1", phone, first, last, email, cf, contactSearchText({ firstName: first, lastName: last, email, phoneNumber: phone }), created, created);
    }
  })();
}

function rename(sqlite: Database, id: string, first: string, plan: string): void {
  const r = sqlite.query("SELECT phone_number AS phone FROM contacts WHERE id = ?").get(id) as { phone: string };
  sqlite.run("UPDATE contacts SET first_name = ?, search_text = ?, custom_fields = ? WHERE id = ?", [
    first,
    contactSearchText({ firstName: first, phoneNumber: r.phone }),
    JSON.stringify({ plan }),
    id,
  ]);
}

function ids(sqlite: Database, accountId: string, f: Parameters<typeof filterSql>[1], useIndex: boolean): string[] {
  const { where, params } = filterSql(accountId, f, "in", useIndex);
  return (sqlite.query(`SELECT c.id FROM contacts c WHERE ${where} ORDER BY c.created_at DESC, c.rowid DESC`).values(...(params as any[])) as string[][]).map((r) => r[0]);
}

/** Every search through the index (with the pending rows) answers as the plain scan does. */
function expectExact(sqlite: Database): void {
  for (const acc of ["a1", "a2"]) {
    for (const q of SEARCHES) {
      const search = searchPattern(q);
      expect({ q, acc, ids: ids(sqlite, acc, { search }, true) }).toEqual({ q, acc, ids: ids(sqlite, acc, { search }, false) });
    }
    for (const customFields of FIELDS) expect({ customFields, ids: ids(sqlite, acc, { customFields }, true) }).toEqual({ customFields, ids: ids(sqlite, acc, { customFields }, false) });
  }
  expect(searchIndexDifferences(sqlite)).toEqual([]);
}

const pendingCount = (sqlite: Database) => new PendingSearchIndex(sqlite).pendingCount();
const indexPages = (sqlite: Database) => sqlite.query("SELECT COUNT(*) AS n, SUM(length(block)) AS bytes FROM contacts_fts_data").get();

describe("when the applier indexes a chunk (chunkDue)", () => {
  test("a whole chunk at once; fewer only once the oldest waited SEARCH_INDEX_WAIT_MS (minutes: many contacts share a chunk at a quiet shop's rate); none for nothing", () => {
    expect(SEARCH_INDEX_WAIT_MS).toBeGreaterThanOrEqual(60_000);
    expect(chunkDue(INDEX_CHUNK_ROWS, 0)).toBe(true);
    expect(chunkDue(INDEX_CHUNK_ROWS - 1, 0)).toBe(false);
    expect(chunkDue(1, SEARCH_INDEX_WAIT_MS - 1)).toBe(false);
    expect(chunkDue(1, SEARCH_INDEX_WAIT_MS)).toBe(true);
    expect(chunkDue(0, SEARCH_INDEX_WAIT_MS * 10)).toBe(false);
  });
});

describe("contacts pending for the search index (migration 0023)", () => {
  test("a new contact writes nothing to the index, only its pending row; a chunk indexes the oldest ones", () => {
    const sqlite = freshDb();
    const before = indexPages(sqlite);
    insert(sqlite, 300);
    expect(indexPages(sqlite)).toEqual(before);
    expect(pendingCount(sqlite)).toBe(300);
    const first = sqlite.query("SELECT rowid FROM contacts ORDER BY rowid LIMIT 1").get() as { rowid: number };
    const search = new PendingSearchIndex(sqlite);
    // The applier's bounded count (is a whole chunk waiting?).
    expect([search.pendingUpTo(100), search.pendingUpTo(300), search.pendingUpTo(512)]).toEqual([100, 300, 300]);
    expect(search.indexChunk(100)).toBe(100);
    expect(pendingCount(sqlite)).toBe(200);
    expect((sqlite.query("SELECT min(contact_rowid) AS m FROM contacts_fts_pending").get() as { m: number }).m).toBe(first.rowid + 100);
    expectExact(sqlite);
    while (search.indexChunk(64) > 0);
    expect(pendingCount(sqlite)).toBe(0);
    expect(search.indexChunk()).toBe(0);
    expect(() => sqlite.run("INSERT INTO contacts_fts (contacts_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
    expectExact(sqlite);
    sqlite.close();
  });

  test("updates and deletes, of pending and of indexed contacts: searches stay exact at every step", () => {
    const sqlite = freshDb();
    insert(sqlite, 200);
    const search = new PendingSearchIndex(sqlite);
    search.indexChunk(120); // c0..c119 indexed, c120..c199 pending
    expectExact(sqlite);
    // A pending contact's new text: no index write (an external-content 'delete' of text never indexed would corrupt it).
    const idx = indexPages(sqlite);
    rename(sqlite, "c151", "Ursula", "iron");
    expect(indexPages(sqlite)).toEqual(idx);
    expect(ids(sqlite, "a1", { search: "ursula" }, true)).toEqual(["c151"]);
    expect(ids(sqlite, "a1", { search: searchPattern("maria") }, true)).not.toContain("c151");
    // An indexed contact's new text: the old no longer matches, the new does.
    const oldName = (sqlite.query("SELECT first_name AS f FROM contacts WHERE id = 'c11'").get() as { f: string }).f.toLowerCase();
    rename(sqlite, "c11", "Ursula", "gold plus");
    expect(ids(sqlite, "a1", { search: "ursula" }, true)).toEqual(["c151", "c11"]);
    expect(ids(sqlite, "a1", { search: oldName }, true)).not.toContain("c11");
    // Other columns leave the index alone.
    sqlite.run("UPDATE contacts SET status = 'converted' WHERE id IN ('c12', 'c153')");
    expectExact(sqlite);
    // Deletes: an indexed one leaves the index, a pending one the pending table.
    sqlite.run("DELETE FROM contacts WHERE id IN ('c11', 'c151', 'c13', 'c152')");
    expect(ids(sqlite, "a1", { search: "ursula" }, true)).toEqual([]);
    expect(pendingCount(sqlite)).toBe(78);
    expectExact(sqlite);
    // Indexed after its change: the index holds the new text.
    rename(sqlite, "c161", "Quentin", "platinum");
    while (search.indexChunk(16) > 0) expectExact(sqlite);
    expect(ids(sqlite, "a1", { search: "quentin" }, true)).toEqual(["c161"]);
    rename(sqlite, "c161", "Ursula", "iron");
    expect(ids(sqlite, "a1", { search: "quentin" }, true)).toEqual([]);
    expectExact(sqlite);
    // A rowid freed by a delete and taken again (no AUTOINCREMENT) starts pending again.
    const top = sqlite.query("SELECT id, rowid FROM contacts ORDER BY rowid DESC LIMIT 1").get() as { id: string; rowid: number };
    sqlite.run("DELETE FROM contacts WHERE id = ?", [top.id]);
    insert(sqlite, 1);
    expect(sqlite.query("SELECT contact_rowid AS r FROM contacts_fts_pending").all()).toEqual([{ r: top.rowid }]);
    expectExact(sqlite);
    // Random work in both states.
    let r = 7;
    const rnd = (n: number) => ((r = (r * 1103515245 + 12345) % 2 ** 31), r % n);
    for (let round = 0; round < 6; round++) {
      insert(sqlite, 20 + rnd(40));
      const all = (sqlite.query("SELECT id FROM contacts").values() as string[][]).map((x) => x[0]);
      for (let k = 0; k < 15; k++) rename(sqlite, all[rnd(all.length)], ["Ursula", "Maria", "Wangari", "Xena"][rnd(4)], PLANS[rnd(PLANS.length)]);
      for (let k = 0; k < 5; k++) sqlite.run("DELETE FROM contacts WHERE id = ?", [all[rnd(all.length)]]);
      search.indexChunk(rnd(50));
      expectExact(sqlite);
    }
    sqlite.close();
  });

  test("doctor: a pending row missing or extra, or a contact both pending and indexed, is a difference; --rebuild indexes everything", () => {
    const sqlite = freshDb();
    insert(sqlite, 50);
    const search = new PendingSearchIndex(sqlite);
    search.indexChunk(20);
    expect(checkDerived(sqlite).counts.contacts_fts).toBe(0);
    // The check leaves the pending rows as they were (its indexing is rolled back).
    expect(pendingCount(sqlite)).toBe(30);

    const rowid = (id: string) => (sqlite.query("SELECT rowid AS r FROM contacts WHERE id = ?").get(id) as { r: number }).r;
    sqlite.run("DELETE FROM contacts_fts_pending WHERE contact_rowid = ?", [rowid("c40")]); // neither indexed nor pending
    let r = checkDerived(sqlite);
    expect(r.counts.contacts_fts).toBe(1);
    expect(r.differences[0].detail).toMatch(/does not match/);
    rebuildDerived(sqlite);
    expect(pendingCount(sqlite)).toBe(0);
    expect(checkDerived(sqlite).differences).toEqual([]);
    expectExact(sqlite);

    sqlite.run("INSERT INTO contacts_fts_pending (contact_rowid) VALUES (999999)"); // no such contact
    r = checkDerived(sqlite);
    expect(r.counts.contacts_fts).toBe(1);
    expect(r.differences[0].detail).toBe("extra pending row: no contact at rowid 999999");
    rebuildDerived(sqlite);
    expect(checkDerived(sqlite).differences).toEqual([]);

    sqlite.run("INSERT INTO contacts_fts_pending (contact_rowid) VALUES (?)", [rowid("c3")]); // indexed and pending
    expect(checkDerived(sqlite).counts.contacts_fts).toBe(1);
    rebuildDerived(sqlite);
    expect(checkDerived(sqlite).differences).toEqual([]);
    expectExact(sqlite);
    sqlite.close();
  });
});
