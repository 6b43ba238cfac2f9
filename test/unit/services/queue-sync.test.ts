import { describe, expect, test } from "bun:test";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { loadQueuedEntries, QUEUED_ROWS_SQL, queueSync, readQueuedEntries } from "../../../src/services/queue-sync";
import { MessageQueue, type QueueEntry } from "../../../src/queue/priority-queue";

function db() {
  const sqlite = openSqlite(":memory:");
  migrate(sqlite);
  sqlite.query("INSERT INTO accounts (id, name, plan, created_at) VALUES ('a', 'A', 'standard', '2026-01-01T00:00:00.000Z')").run();
  return sqlite;
}
const insert = (sqlite: ReturnType<typeof db>, id: string, status: string, priority: string, scheduledFor: string, seq: number) =>
  sqlite
    .query(
      `INSERT INTO messages (id, account_id, content, recipient_phone, status, priority, priority_rank, scheduled_for, metadata, seq, created_at, updated_at)
       VALUES (?, 'a', 'x', '+14155552671', ?, ?, ?, ?, '{}', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    )
    .run(id, status, priority, { urgent: 0, high: 1, normal: 2, low: 3 }[priority]!, scheduledFor, seq);

describe("queue rebuild from SQLite", () => {
  test("only queued messages, with scheduledFor exact to the millisecond", () => {
    const sqlite = db();
    const stamps = ["2026-01-01T00:00:00.000Z", "2026-06-30T23:59:59.999Z", "2026-03-08T07:00:00.001Z", "2099-12-31T12:34:56.789Z", "1999-01-01T00:00:00.500Z"];
    stamps.forEach((s, i) => insert(sqlite, `q${i}`, "queued", "normal", s, i + 1));
    insert(sqlite, "sent", "sent", "urgent", stamps[0], 10);
    insert(sqlite, "failed", "failed", "urgent", stamps[0], 11);
    insert(sqlite, "cancelled", "cancelled", "urgent", stamps[0], 12);
    const entries = loadQueuedEntries(sqlite).sort((a, b) => a.seq - b.seq);
    expect(entries).toEqual(stamps.map((s, i) => ({ id: `q${i}`, accountId: "a", priority: "normal", scheduledFor: Date.parse(s), seq: i + 1 })));
  });

  test("the lifecycle replaces whatever the queue held with the database's queued messages", () => {
    const sqlite = db();
    insert(sqlite, "late", "queued", "high", "2026-01-02T00:00:00.000Z", 1);
    insert(sqlite, "early", "queued", "high", "2026-01-01T00:00:00.000Z", 2);
    insert(sqlite, "urgent", "queued", "urgent", "2026-01-03T00:00:00.000Z", 3);
    const q = new MessageQueue();
    q.insert({ id: "stale", accountId: "a", priority: "urgent", scheduledFor: 0, seq: 99 });
    queueSync(sqlite, q).start!();
    expect(q.has("stale")).toBe(false);
    expect(["urgent", "early", "late"].map((id) => q.rank(id))).toEqual([1, 2, 3]);
  });

  test("rows come in queue order per account, ties on schedule and seq broken by id, every account", () => {
    const sqlite = db();
    sqlite.query("INSERT INTO accounts (id, name, plan, created_at) VALUES ('b', 'B', 'standard', '2026-01-01T00:00:00.000Z')").run();
    const prios = ["urgent", "high", "normal", "low"];
    // 3 schedules × 4 priorities × 2 seqs × 3 ids: many exact ties.
    let n = 0;
    for (const s of ["2026-01-02T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z"])
      for (const p of prios) for (const seq of [2, 1]) for (const c of ["z", "a", "m"]) insert(sqlite, `${c}${n++}`, n % 7 === 0 ? "sent" : "queued", p, s, seq);
    sqlite.query("UPDATE messages SET account_id = 'b' WHERE rowid % 3 = 0").run();
    const got: QueueEntry[] = [];
    readQueuedEntries(sqlite, (id, accountId, priority, scheduledFor, seq) => got.push({ id, accountId, priority, scheduledFor, seq }));
    const rank = { urgent: 0, high: 1, normal: 2, low: 3 } as Record<string, number>;
    const want = [...got].sort(
      (x, y) => (x.accountId < y.accountId ? -1 : x.accountId > y.accountId ? 1 : 0) || rank[x.priority] - rank[y.priority] || x.scheduledFor - y.scheduledFor || x.seq - y.seq || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
    expect(got.map((e) => e.id)).toEqual(want.map((e) => e.id));
    expect(got.length).toBe(72 - 10);
    const q = new MessageQueue();
    queueSync(sqlite, q).start!();
    for (const acct of ["a", "b"]) got.filter((e) => e.accountId === acct).forEach((e, i) => expect(q.rank(e.id)).toBe(i + 1));
  });

  test("the boot read uses the queued-messages index alone: no table rows, no sort", () => {
    const sqlite = db();
    const plan = (sqlite.query(`EXPLAIN QUERY PLAN ${QUEUED_ROWS_SQL}`).all("a") as { detail: string }[]).map((r) => r.detail).join(" | ");
    expect(plan).toContain("INDEX messages_queued_order_idx");
    expect(plan).not.toContain("TEMP B-TREE");
    // Every value comes from the index (its stored epoch-ms expression included): the table row
    // is never read — a deferred seek that no column asks for.
    const ops = (sqlite.query(`EXPLAIN ${QUEUED_ROWS_SQL}`).all("a") as { opcode: string; p1: number }[]);
    const tableCursor = ops.find((o) => o.opcode === "OpenRead")!.p1;
    expect(ops.some((o) => o.opcode === "Column" && o.p1 === tableCursor)).toBe(false);
    expect(ops.some((o) => o.opcode === "Function" || o.opcode === "PureFunc")).toBe(false);
  });

  test("a stored priority rank the queue does not know refuses the whole rebuild", () => {
    const sqlite = db();
    insert(sqlite, "ok", "queued", "normal", "2026-01-01T00:00:00.000Z", 1);
    insert(sqlite, "odd", "queued", "normal", "2026-01-01T00:00:00.000Z", 2);
    sqlite.query("UPDATE messages SET priority_rank = 9 WHERE id = 'odd'").run();
    const q = new MessageQueue();
    q.insert({ id: "before", accountId: "a", priority: "low", scheduledFor: 0, seq: 1 });
    expect(() => queueSync(sqlite, q).start!()).toThrow(TypeError);
    expect(q.has("before")).toBe(true);
  });
});
