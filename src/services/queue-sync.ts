import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../lib/lifecycle";
import type { MessageQueue, Priority, QueueEntry, QueueLoadAdd } from "../queue/priority-queue";
import { PRIORITIES_BY_RANK } from "../domain/statuses";
import { QUEUED_SCHEDULED_MS_SQL } from "../db/schema/messages";

/**
 * The database is the truth, the queue a fast index of it: at boot the queue is rebuilt from
 * every `queued` message. Afterwards each writer keeps it in step (the webhook inserts as its
 * group commit runs; status changes, deletes and cancels remove or re-insert).
 *
 * Boot speed at a million queued messages (target < 1.5 s for read + rebuild; docs/api-decisions.md,
 * "Read-side targets: boot, analytics in any zone, tag + status filters"):
 * - the rows come from the partial index `messages_queued_order_idx` (migration 0017), account
 *   by account, already in queue order, so no other message is read and nothing is sorted again
 *   (INDEXED BY: the planner may otherwise take a narrower index and sort);
 * - scheduledFor is the index's stored epoch-ms expression, not a timestamp parsed per row
 *   (measured: the read takes half the time);
 * - plain arrays (`.values()`), each row straight into the queue (`MessageQueue.load`), with no
 *   QueueEntry in between.
 * One query per account, not pages: a keyset on the expression only seeks on its first column,
 * and thousands of messages due at the same millisecond (a broadcast) would be re-read per page.
 */
const PRIORITY_OF_RANK: readonly Priority[] = PRIORITIES_BY_RANK;

const ACCOUNTS_SQL = "SELECT id FROM accounts ORDER BY id";
export const QUEUED_ROWS_SQL = `SELECT id, priority_rank, ${QUEUED_SCHEDULED_MS_SQL}, seq FROM messages INDEXED BY messages_queued_order_idx
  WHERE status = 'queued' AND account_id = ?1
  ORDER BY priority_rank, ${QUEUED_SCHEDULED_MS_SQL}, seq, id`;

type Row = [id: string, rank: number, scheduledFor: number | null, seq: number];

/** Calls `add` for every queued message, account by account, in queue order. */
export function readQueuedEntries(sqlite: Database, add: QueueLoadAdd): void {
  const rowsOf = sqlite.query(QUEUED_ROWS_SQL);
  for (const [accountId] of sqlite.query(ACCOUNTS_SQL).values() as [string][]) {
    const rows = rowsOf.values(accountId) as Row[];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      // An unknown rank becomes an unknown priority and an unreadable time NaN, which the queue
      // refuses (all or nothing).
      add(r[0], accountId, PRIORITY_OF_RANK[r[1]] ?? (String(r[1]) as Priority), r[2] ?? Number.NaN, r[3]);
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
