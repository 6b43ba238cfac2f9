/** A text's stage (src/domain/message-stage.ts) as the dashboard says it. */
import type { MessageStage } from "../src/domain/message-stage";

export const STAGE_WORDS: Record<MessageStage, string> = {
  queued: "queued",
  "with-phone": "with the phone",
  sent: "sent",
  delivered: "delivered",
  failed: "failed",
  cancelled: "cancelled",
};
