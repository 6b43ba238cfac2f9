import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { migrate } from "../../src/db/migrate";
import { GroupCommitWriter } from "../../src/db/group-commit";
import { derivedCounts, recordMessageInsert, type MessageFacts } from "../../src/db/derived-counts";
import { checkDerived } from "../../src/services/doctor";

let db: Database;
let w: GroupCommitWriter;
let seq = 0;
beforeEach(() => {
  db = new Database(":memory:");
  migrate(db);
  const now = "2026-11-20T10:00:00.000Z";
  db.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [now]);
  db.run("INSERT INTO forms (id, account_id, name, name_key, message_template, fields, created_at, updated_at) VALUES ('f1', 'a1', 'F', 'f', 'hi', '[]', ?, ?)", [now, now]);
  w = new GroupCommitWriter(db);
});
afterEach(() => db.close());

/** Inserts a message row the way the writers do: the row, then its recorded counts. */
function insert(createdAt: string, status: MessageFacts["status"] = "queued") {
  const id = `m${++seq}`;
  db.run(
    "INSERT INTO messages (id, account_id, form_id, content, recipient_phone, status, scheduled_for, seq, created_at, updated_at) VALUES (?, 'a1', 'f1', 'x', '+12015550100', ?, ?, ?, ?, ?)",
    [id, status, createdAt, seq, createdAt, createdAt],
  );
  recordMessageInsert(db, { accountId: "a1", formId: "f1", contactId: null, status, priorityRank: 2, createdAt, sentAt: null, failureReason: null });
}
const count = () => (db.query("SELECT coalesce(SUM(n), 0) AS n FROM message_counts").get() as { n: number }).n;

describe("derived counts of message inserts", () => {
  test("a batch writes its counts once, before COMMIT; a failing job's records go with its savepoint", async () => {
    const d = derivedCounts(db);
    const before = d.stats.upserts;
    const jobs = Array.from({ length: 40 }, (_, i) =>
      w.submit({
        run: () => {
          insert(`2026-11-20T10:0${i % 2}:00.000Z`);
          if (i === 7) throw new Error("boom"); // after its insert and its record
          expect(count()).toBe(0); // nothing written per row
          return i;
        },
      }),
    );
    const settled = await Promise.allSettled(jobs);
    expect(settled.filter((r) => r.status === "rejected").length).toBe(1);
    expect(w.stats.batches).toBe(1);
    expect(count()).toBe(39);
    // 1 count + 1 usage + 6 rollup rows (one quarter hour): 8 upserts for 39 messages.
    expect(d.stats.upserts - before).toBe(8);
    expect(checkDerived(db).differences).toEqual([]);
  });

  test("a failed COMMIT forgets the batch's records; outside a batch a record is written at once", async () => {
    const boom = w.submit({
      run: () => {
        insert("2026-11-20T10:00:00.000Z");
        // Leaves a deferred foreign key broken: COMMIT fails, the whole batch rolls back.
        db.run("PRAGMA defer_foreign_keys = ON");
        db.run("INSERT INTO contacts (id, account_id, phone_number, created_at, updated_at) VALUES ('c', 'nope', '+1', 'x', 'x')");
      },
    });
    await expect(boom).rejects.toThrow();
    expect(count()).toBe(0);
    insert("2026-11-20T11:00:00.000Z");
    expect(count()).toBe(1);
    await w.submit({ run: () => insert("2026-11-20T11:00:01.000Z") });
    expect(count()).toBe(2);
    expect(checkDerived(db).differences).toEqual([]);
  });
});
