/**
 * The contact list's filters and sorts, as src/db/stores/contacts/filter.ts writes them, use the
 * contacts indexes (moved from the contacts API tests: their subject is the database's plans).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { filterSql } from "../../src/db/stores/contacts/filter";
import { tempDir } from "../helpers/server";

const dir = tempDir("textwire-contact-plans-");
const sqlite = openSqlite(join(dir, "textwire.db"));
migrate(sqlite);
const db = () => sqlite;
afterAll(() => {
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("contact list query plans", () => {
  test("list, tag and phone filters use the contacts indexes", () => {
    const plan = (f: Parameters<typeof filterSql>[1], order: string, mode: "in" | "exists" | "intersect" | "member" = "in") => {
      const { where, params } = filterSql("acc", f, mode);
      const sql = `SELECT c.rowid FROM contacts c WHERE ${where} ORDER BY ${order} LIMIT 50`;
      return (db().query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[])) as any[]).map((r) => r.detail).join(" | ");
    };
    const byCreated = "c.created_at DESC, c.rowid DESC";
    expect(plan({}, byCreated)).toContain("contacts_account_created_idx");
    expect(plan({}, byCreated)).not.toContain("TEMP B-TREE");
    expect(plan({}, "c.first_name ASC, c.rowid ASC")).toContain("contacts_account_first_idx");
    expect(plan({}, "c.last_name ASC, c.rowid ASC")).toContain("contacts_account_last_idx");
    expect(plan({}, "c.updated_at ASC, c.rowid ASC")).toContain("contacts_account_updated_idx");
    expect(plan({ status: "new" }, byCreated)).toContain("contacts_account_status_created_idx");
    // Tags key on the contact's rowid (migration 0020): a tag's list is read from contact_tags'
    // primary key and checked against the sort index's entries alone (no contact row, no id).
    const rare = plan({ tags: ["vip"] }, byCreated, "in");
    expect(rare).toContain("contact_tags USING PRIMARY KEY (account_id=? AND tag=?)");
    expect(rare).toContain("COVERING INDEX contacts_account_created_idx");
    const common = plan({ tags: ["vip", "lead"] }, byCreated, "exists");
    expect(common).toContain("contacts_account_created_idx");
    expect(common).toContain("USING PRIMARY KEY (account_id=? AND tag=? AND contact_rowid=?)");
    expect(plan({ search: "41" }, byCreated)).toContain("contacts_account_phone_idx");
    // 3+ digits: the trigram index first, then the exact test on the phone.
    expect(plan({ search: "4155" }, byCreated)).toContain("contacts_fts");
    // Several common tags, counted: their lists merge straight from contact_tags' key.
    const merged = plan({ tags: ["vip", "lead", "new"] }, byCreated, "intersect");
    expect(merged).toContain("MERGE (INTERSECT)");
    expect(merged).toContain("contact_tags USING PRIMARY KEY (account_id=? AND tag=?)");
    expect(merged).not.toContain("contact_rowid=?");
    expect(merged).not.toContain("contact_tags_status_idx");
    // With a status, each list is that status's range of contact_tags_status_idx (migration
    // 0025), still in rowid order.
    const mergedStatus = plan({ tags: ["vip", "lead", "new"], status: "new" }, byCreated, "intersect");
    expect(mergedStatus).toContain("MERGE (INTERSECT)");
    expect(mergedStatus).toContain("contact_tags USING COVERING INDEX contact_tags_status_idx (account_id=? AND status=? AND tag=?)");
    expect(mergedStatus).not.toContain("TEMP B-TREE");
    // Tags and a status alone are counted in contact_tags alone (ContactService.list), from the
    // same ranges.
    const alone = (db().query("EXPLAIN QUERY PLAN SELECT count(*) FROM (SELECT contact_rowid FROM contact_tags WHERE account_id = ? AND tag = ? AND status = ? INTERSECT SELECT contact_rowid FROM contact_tags WHERE account_id = ? AND tag = ? AND status = ?)").all("a", "vip", "new", "a", "lead", "new") as any[]).map((r) => r.detail).join(" | ");
    expect(alone).toContain("MERGE (INTERSECT)");
    expect(alone).toContain("contact_tags USING COVERING INDEX contact_tags_status_idx (account_id=? AND status=? AND tag=?)");
    expect(alone).not.toContain("TEMP B-TREE");
    // Common tags with a status and another condition, counted: the status index and
    // contact_tags alone — no contact row and no lookup through the text id index.
    const counted = (f: Parameters<typeof filterSql>[1]) => {
      const { where, params } = filterSql("acc", f, "member");
      return (db().query(`EXPLAIN QUERY PLAN SELECT count(*) FROM contacts c WHERE ${where}`).all(...(params as any[])) as any[]).map((r) => r.detail).join(" | ");
    };
    for (const f of [{ tags: ["vip"], status: "new" as const }, { tags: ["vip", "lead"], status: "new" as const, createdAfter: "2026-01-01" }]) {
      const p = counted(f);
      expect(p).toContain("COVERING INDEX contacts_account_status_created_idx");
      expect(p).toContain("contact_tags USING COVERING INDEX contact_tags_status_idx (account_id=? AND status=? AND tag=?)");
      expect(p).not.toContain("sqlite_autoindex_contacts_1");
    }
  });
});