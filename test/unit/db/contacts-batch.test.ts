import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { migrate } from "../../../src/db/migrate";
import { CONTACT_BATCH_ROWS, ContactInsertBatch, chunkSize } from "../../../src/db/stores/contacts/batch";

let db: Database;
beforeEach(() => {
  db = new Database(":memory:");
  migrate(db);
  db.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', '2026-11-20T10:00:00.000Z')");
});
afterEach(() => db.close());

describe("statement sizes (import speed)", () => {
  test("rows are cut into full statements, then halving sizes, and nothing is left over or repeated", () => {
    for (let n = 1; n <= 3 * CONTACT_BATCH_ROWS + 17; n++) {
      const sizes: number[] = [];
      for (let left = n; left > 0; left -= sizes[sizes.length - 1]) sizes.push(chunkSize(left, CONTACT_BATCH_ROWS));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      for (const s of sizes) expect(s === CONTACT_BATCH_ROWS || (s <= 64 && (s & (s - 1)) === 0)).toBe(true);
    }
    expect([1, 2, 3, 99, 100, 101].map((n) => chunkSize(n, 100))).toEqual([1, 2, 2, 64, 100, 100]);
  });

  test("every waiting contact and tag is written whatever the count, each row's values in its own row", () => {
    let seq = 0;
    for (const n of [1, 7, 64, 99, 127, 163]) {
      const batch = new ContactInsertBatch(db);
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = Bun.randomUUIDv7();
        const phone = `+1201555${String(1000 + seq++)}`;
        ids.push(id);
        const at = "2026-11-20T10:00:00.000Z";
        batch.add({ id, phoneNumber: phone, values: [id, "a1", phone, `F${i}`, null, null, "new", null, "{}", JSON.stringify([`t${i % 3}`, "all"]), null, null, null, phone.slice(1), at, at, null, null] });
      }
      expect(batch.flush()).toEqual(ids);
      const rows = db.query("SELECT id, phone_number AS p, first_name AS f FROM contacts WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify(ids)) as Array<{ id: string; p: string; f: string }>;
      expect(rows.length).toBe(n);
      for (const r of rows) expect(r.f).toBe(`F${ids.indexOf(r.id)}`);
      // contact_tags follows the tags column by trigger (migration 0020).
      const tags = db.query("SELECT count(*) AS k FROM contact_tags WHERE contact_rowid IN (SELECT rowid FROM contacts WHERE id IN (SELECT value FROM json_each(?)))").get(JSON.stringify(ids)) as { k: number };
      expect(tags.k).toBe(2 * n);
      expect(batch.flush()).toEqual([]);
    }
  });
});
