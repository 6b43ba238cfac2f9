/**
 * Where a text is, in the words the dashboard shows: a queued text a phone has taken and not yet
 * reported on is "with the phone"; a sent text the phone reported as reaching the handset is
 * "delivered". The API's `status` keeps its four values; `stage` says the rest
 * (docs/api-decisions.md, "The owner hears back: each role sees what it can do"). Pure.
 */
import type { MessageStatus } from "./statuses";

export const MESSAGE_STAGES = ["queued", "with-phone", "sent", "delivered", "failed", "cancelled"] as const;
export type MessageStage = (typeof MESSAGE_STAGES)[number];

/** `leased`: a phone holds it now (its lease is set; the sweep clears a lease that ran out). */
export function messageStage(status: MessageStatus, leased: boolean, deliveredAt: unknown): MessageStage {
  if (status === "queued") return leased ? "with-phone" : "queued";
  if (status === "sent") return deliveredAt ? "delivered" : "sent";
  return status;
}
