import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../deps";
import type { MessageQueue, Priority, QueueEntry, QueueLoadAdd } from "../queue/priority-queue";

/**
 * The database is the truth, the queue a fast index of it: at boot the queue is rebuilt from
 * every `queued` message. Afterwards each writer keeps it in step (the webhook inserts as its
 * group commit runs; status changes, deletes and cancels remove or re-insert).
 *
 * Boot speed at a million queued messages (issue 15: < 1.5 s for read + rebuild):
 * - the rows come from the partial covering index `messages_queued_order_idx` (migration 0017),
 *   account by account, already in queue order, so no other message is read and nothing is
 *   sorted again (INDEXED BY: with a LIMIT the planner may otherwise take a narrower index and
 *   sort every page itself);
 * - a page of rows at a time as plain arrays (`.values()`), keyset-paged on the index order, so
 *   the garbage stays small and young;
 * - each row goes straight into the queue (`MessageQueue.load`), with no QueueEntry in between;
 * - scheduledFor is parsed with Date.parse (measured as fast as julianday in SQLite or a
 *   hand-written digit reader, and it is the parser every other reader of the column uses).
 */
const PAGE_ROWS = 50_000;

const PRIORITY_OF_RANK: readonly Priority[] = ["urgent", "high", "normal", "low"];

const ACCOUNTS_SQL = "SELECT id FROM accounts ORDER BY id";
export const FIRST_PAGE_SQL = `SELECT id, priority_rank, scheduled_for, seq FROM messages INDEXED BY messages_queued_order_idx
  WHERE status = 'queued' AND account_id = ?1
  ORDER BY priority_rank, scheduled_for, seq, id LIMIT ?2`;
export const NEXT_PAGE_SQL = `SELECT id, priority_rank, scheduled_for, seq FROM messages INDEXED BY messages_queued_order_idx
  WHERE status = 'queued' AND account_id = ?1 AND (priority_rank, scheduled_for, seq, id) > (?2, ?3, ?4, ?5)
  ORDER BY priority_rank, scheduled_for, seq, id LIMIT ?6`;

type Row = [id: string, rank: number, scheduledFor: string, seq: number];

/** Calls `add` for every queued message, account by account, in queue order. */
export function readQueuedEntries(sqlite: Database, add: QueueLoadAdd, pageRows = PAGE_ROWS): void {
  const first = sqlite.query(FIRST_PAGE_SQL);
  const next = sqlite.query(NEXT_PAGE_SQL);
  for (const [accountId] of sqlite.query(ACCOUNTS_SQL).values() as [string][]) {
    let rows = first.values(accountId, pageRows) as Row[];
    for (;;) {
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i];
        // An unknown rank becomes an unknown priority, which the queue refuses (all or nothing).
        add(r[0], accountId, PRIORITY_OF_RANK[r[1]] ?? (String(r[1]) as Priority), Date.parse(r[2]), r[3]);
      }
      if (rows.length < pageRows) break;
      const last = rows[rows.length - 1];
      rows = next.values(accountId, last[1], last[2], last[3], last[0], pageRows) as Row[];
    }
  }
}

/** Every queued message as a queue entry (tests and benchmarks; boot uses readQueuedEntries). */
export function loadQueuedEntries(sqlite: Database): QueueEntry[] {
  const out: QueueEntry[] = [];
  readQueuedEntries(sqlite, (id, accountId, priority, scheduledFor, seq) => out.push({ id, accountId, priority, scheduledFor, seq }));
  return out;
}

export function queueSync(sqlite: Database, queue: MessageQueue): Lifecycle {
  return {
    name: "queue-rebuild",
    start() {
      queue.load((add) => readQueuedEntries(sqlite, add));
    },
  };
}
