import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { migrate } from "../../../src/db/migrate";
import { GroupCommitWriter } from "../../../src/db/group-commit";
import { derivedCounts, recordMessageInsert, type MessageFacts } from "../../../src/db/derived-counts";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";

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

describe("conversations of new messages (migration 0019: recorded, not a trigger per row)", () => {
  const contact = (id: string, phone: string) =>
    db.run("INSERT INTO contacts (id, account_id, phone_number, created_at, updated_at) VALUES (?, 'a1', ?, '2026-11-20T09:00:00.000Z', '2026-11-20T09:00:00.000Z')", [id, phone]);
  const message = (contactId: string | null, createdAt: string) => {
    const id = `cm${++seq}`;
    db.run(
      "INSERT INTO messages (id, account_id, form_id, contact_id, content, recipient_phone, status, scheduled_for, seq, created_at, updated_at) VALUES (?, 'a1', 'f1', ?, 'x', '+12015550100', 'queued', ?, ?, ?, ?)",
      [id, contactId, createdAt, seq, createdAt, createdAt],
    );
    recordMessageInsert(db, { accountId: "a1", formId: "f1", contactId, status: "queued", priorityRank: 2, createdAt, sentAt: null, failureReason: null });
  };
  const rows = () => db.query("SELECT contact_id, account_id, last_message_at, unread_count FROM conversations ORDER BY contact_id").all();

  test("one upsert per contact per batch with its newest message; a failing job's messages go with its savepoint; never lowered", async () => {
    contact("ca", "+12015550101");
    contact("cb", "+12015550102");
    contact("cc", "+12015550103");
    expect(db.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_conversation'").get()).toBeNull();
    const d = derivedCounts(db);
    const before = d.stats.upserts;
    const times = ["2026-11-20T10:00:03.000Z", "2026-11-20T10:00:01.000Z", "2026-11-20T10:00:02.000Z"];
    const jobs = [
      ...times.map((t) => w.submit({ run: () => message("ca", t) })),
      w.submit({ run: () => message("cb", "2026-11-20T10:00:00.000Z") }),
      w.submit({ run: () => message(null, "2026-11-20T10:00:05.000Z") }),
      // Rolled back: cc gets no conversation, cb's stays at its own message.
      w.submit({
        run: () => {
          message("cc", "2026-11-20T10:00:09.000Z");
          message("cb", "2026-11-20T10:00:09.000Z");
          throw new Error("boom");
        },
      }),
    ];
    const settled = await Promise.allSettled(jobs);
    expect(settled.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled", "rejected"]);
    expect(w.stats.batches).toBe(1);
    expect(rows()).toEqual([
      { contact_id: "ca", account_id: "a1", last_message_at: "2026-11-20T10:00:03.000Z", unread_count: 0 },
      { contact_id: "cb", account_id: "a1", last_message_at: "2026-11-20T10:00:00.000Z", unread_count: 0 },
    ]);
    // 1 count + 1 usage + 6 rollup rows + 2 conversations (not 4: one per contact).
    expect(d.stats.upserts - before).toBe(10);
    // An older message later does not move the conversation back; unread counts are kept.
    db.run("UPDATE conversations SET unread_count = 2 WHERE contact_id = 'ca'");
    message("ca", "2026-11-20T09:59:00.000Z");
    expect(rows()[0]).toEqual({ contact_id: "ca", account_id: "a1", last_message_at: "2026-11-20T10:00:03.000Z", unread_count: 2 });
    expect(checkDerived(db).differences).toEqual([]);
  });

  test("a contact deleted later in the same batch leaves no conversation and does not fail the batch", async () => {
    contact("gone", "+12015550109");
    const r = await w.submit({
      run: () => {
        message("gone", "2026-11-20T10:00:00.000Z");
        db.run("DELETE FROM contacts WHERE id = 'gone'"); // its message goes with it (cascade)
        return "ok";
      },
    });
    expect(r).toBe("ok");
    expect(rows()).toEqual([]);
    expect(db.query("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 0 });
  });

  test("doctor finds a missing or stale conversation and --rebuild raises it", () => {
    contact("ca", "+12015550101");
    message("ca", "2026-11-20T10:00:00.000Z");
    db.run("DELETE FROM conversations");
    expect(checkDerived(db).differences).toEqual([{ structure: "conversations", detail: "contact ca: no conversation, expected one with activity at 2026-11-20T10:00:00.000Z" }]);
    rebuildDerived(db);
    expect(checkDerived(db).differences).toEqual([]);
    db.run("UPDATE conversations SET last_message_at = '2026-01-01T00:00:00.000Z'");
    expect(checkDerived(db).counts.conversations).toBe(1);
    rebuildDerived(db);
    expect(rows()).toEqual([{ contact_id: "ca", account_id: "a1", last_message_at: "2026-11-20T10:00:00.000Z", unread_count: 0 }]);
  });
});
