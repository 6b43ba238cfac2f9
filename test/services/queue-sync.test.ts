import { describe, expect, test } from "bun:test";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { loadQueuedEntries, queueSync } from "../../src/services/queue-sync";
import { MessageQueue } from "../../src/queue/priority-queue";

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
});
