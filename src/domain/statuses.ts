/**
 * The one list of message statuses and of priorities: the schema's enums, the API's models and
 * error messages, the queue's ranks and every filter read them from here
 * (docs/api-decisions.md, "One home per rule: messages, phones, events and change announcements").
 */

export const MESSAGE_STATUSES = ["queued", "sent", "failed", "cancelled"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** The priorities in the order the API lists them (lowest first). */
export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Queue order: rank 0 leaves first (`priority_rank` in the messages table). */
export const PRIORITIES_BY_RANK = ["urgent", "high", "normal", "low"] as const satisfies readonly Priority[];
export const PRIORITY_RANK: Readonly<Record<Priority, number>> = Object.freeze({ urgent: 0, high: 1, normal: 2, low: 3 });

export function isMessageStatus(v: unknown): v is MessageStatus {
  return typeof v === "string" && (MESSAGE_STATUSES as readonly string[]).includes(v);
}
