/**
 * What accepting a webhook submission reads of messages — the duplicate window, the
 * per-recipient and daily limits — prepared once on the main connection for the hot path
 * (stores/submissions.ts gathers them).
 */
import type { Database, Statement } from "bun:sqlite";
import type { messages } from "../../schema/messages";

/** The latest message to a number from a form (the duplicate window's answer). */
export type LatestMessage = Pick<typeof messages.$inferSelect, "id" | "scheduledFor" | "sentAt" | "status">;

export function acceptingMessageStatements(sqlite: Database): {
  lastMessageTo: Statement<LatestMessage, [string, string, string, string]>;
  countRecentTo: Statement<{ n: number }, [string, string, string]>;
  countScheduled: Statement<{ n: number }, [string, string, string]>;
} {
  return {
    lastMessageTo: sqlite.prepare(
      `SELECT id, scheduled_for AS scheduledFor, sent_at AS sentAt, status FROM messages
        WHERE account_id = ? AND recipient_phone = ? AND form_id = ? AND created_at >= ? AND status IN ('queued', 'sent')
        ORDER BY created_at DESC LIMIT 1`,
    ),
    countRecentTo: sqlite.prepare(
      "SELECT count(*) AS n FROM messages WHERE account_id = ? AND recipient_phone = ? AND created_at >= ? AND status IN ('queued', 'sent')",
    ),
    countScheduled: sqlite.prepare("SELECT count(*) AS n FROM messages WHERE form_id = ? AND scheduled_for >= ? AND scheduled_for < ?"),
  };
}
