import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../lib/lifecycle";
import type { MessageQueue } from "../queue/priority-queue";
import { readQueuedEntries } from "../db/stores/messages";

export { loadQueuedEntries, QUEUED_ROWS_SQL, readQueuedEntries } from "../db/stores/messages";

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
export function queueSync(sqlite: Database, queue: MessageQueue): Lifecycle {
  return {
    name: "queue-rebuild",
    start() {
      queue.load((add) => readQueuedEntries(sqlite, add));
    },
  };
}
