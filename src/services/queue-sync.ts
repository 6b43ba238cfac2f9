import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../deps";
import type { MessageQueue, QueueEntry } from "../queue/priority-queue";

/**
 * The database is the truth, the queue a fast index of it: at boot the queue is rebuilt from
 * every `queued` message. Afterwards each writer keeps it in step (the webhook inserts as its
 * group commit runs; status changes, deletes and cancels remove or re-insert).
 *
 * Boot speed at a million queued messages: rows come straight out of SQLite already shaped as
 * queue entries (`.all()` objects are cheaper than `.values()` arrays here), and scheduledFor is
 * converted to epoch ms inside SQLite (julianday has millisecond precision; rounding makes it
 * exact) instead of a Date.parse per row.
 */
const QUEUED_ENTRIES_SQL = `SELECT id, account_id AS accountId, priority,
    CAST(round((julianday(scheduled_for) - 2440587.5) * 86400000.0) AS INTEGER) AS scheduledFor, seq
  FROM messages WHERE status = 'queued'`;

export function loadQueuedEntries(sqlite: Database): QueueEntry[] {
  return sqlite.query(QUEUED_ENTRIES_SQL).all() as QueueEntry[];
}

export function queueSync(sqlite: Database, queue: MessageQueue): Lifecycle {
  return {
    name: "queue-rebuild",
    start() {
      queue.rebuild(loadQueuedEntries(sqlite));
    },
  };
}
