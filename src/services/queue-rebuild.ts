/**
 * Rebuilds the in-memory queue from SQLite at boot: every `queued` message, leased or not.
 * Registered as the Lifecycle "queue-rebuild" (the webhook issue may bring its own under the same
 * name; only one is registered).
 */
import type { Database } from "bun:sqlite";
import type { Lifecycle } from "../deps";
import type { MessageQueue, Priority } from "../queue/priority-queue";

export const QUEUE_REBUILD = "queue-rebuild";

export function rebuildQueue(sqlite: Database, queue: MessageQueue): number {
  const rows = sqlite
    .query("SELECT id, account_id, priority, scheduled_for, seq FROM messages WHERE status = 'queued'")
    .all() as Array<{ id: string; account_id: string; priority: Priority; scheduled_for: string; seq: number }>;
  queue.rebuild(rows.map((r) => ({ id: r.id, accountId: r.account_id, priority: r.priority, scheduledFor: Date.parse(r.scheduled_for), seq: r.seq })));
  return rows.length;
}

export function queueRebuildLifecycle(sqlite: Database, queue: MessageQueue): Lifecycle {
  return { name: QUEUE_REBUILD, start: () => void rebuildQueue(sqlite, queue) };
}
