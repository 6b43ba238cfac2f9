import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../deps";
import type { MessageQueue, Priority, QueueEntry } from "../queue/priority-queue";

/**
 * The database is the truth, the queue a fast index of it: at boot the queue is rebuilt from
 * every `queued` message. Afterwards each writer keeps it in step (the webhook inserts after its
 * commit; status changes, deletes and cancels remove or re-insert).
 */
export function loadQueuedEntries(sqlite: Database): QueueEntry[] {
  const rows = sqlite
    .query("SELECT id, account_id, priority, scheduled_for, seq FROM messages WHERE status = 'queued'")
    .values() as Array<[string, string, Priority, string, number]>;
  const entries: QueueEntry[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    entries[i] = { id: r[0], accountId: r[1], priority: r[2], scheduledFor: Date.parse(r[3]), seq: r[4] };
  }
  return entries;
}

export function queueSync(sqlite: Database, queue: MessageQueue): Lifecycle {
  return {
    name: "queue-rebuild",
    start() {
      queue.rebuild(loadQueuedEntries(sqlite));
    },
  };
}
