/**
 * The message statuses and priorities, written out once: the schema's column enums, the queue's
 * ranks, the API models, the list summaries, the filters and the counters all take them from
 * here, so a new status or priority is added in one place (docs/api-decisions.md, "One home per
 * rule: stores for accounts, forms, sessions, keys, broadcasts; statuses in one module").
 */

/** A message's states, in the order the API lists and counts them. */
export const MESSAGE_STATUSES = ["queued", "sent", "failed", "cancelled"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Priorities from lowest to highest, as the API documents them. */
export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** The queue's order: rank 0 is served first (urgent), then high, normal, low. */
export const PRIORITY_RANK: Readonly<Record<Priority, number>> = Object.freeze({ urgent: 0, high: 1, normal: 2, low: 3 });

/** Priorities in queue order (index = rank). */
export const PRIORITIES_BY_RANK = Object.freeze(["urgent", "high", "normal", "low"] as const) satisfies readonly Priority[];

export function isMessageStatus(v: unknown): v is MessageStatus {
  return typeof v === "string" && (MESSAGE_STATUSES as readonly string[]).includes(v);
}
