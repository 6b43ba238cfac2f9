/**
 * Messages rendered from a template outside any form (a broadcast's, an automation step's), and a
 * broadcast's messages: its progress counts and the cancelling of what is still queued.
 */
import type { Database } from "bun:sqlite";
import { recordMessageInsert } from "../../derived-counts";
import type { messages } from "../../schema/messages";
import { MESSAGE_STATUSES, type MessageStatus } from "../../../domain/statuses";

/** Messages of a broadcast by status (the progress figures). */
export function broadcastMessageCounts(sqlite: Database, id: string): Record<MessageStatus, number> {
  const counts = Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>;
  const rows = sqlite
    .query("SELECT status, COUNT(*) AS n FROM messages WHERE broadcast_id = ?1 GROUP BY status")
    .all(id) as Array<{ status: MessageStatus; n: number }>;
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

/**
 * A queued message rendered from a template for a contact, outside any form: a broadcast's or an
 * automation step's (src/db/stores/automations.ts). form_id stays NULL: the form's duplicate
 * window (a second thank-you within minutes is not sent) looks at the form's own texts only.
 */
export type TemplateMessage = Pick<
  typeof messages.$inferSelect,
  "id" | "accountId" | "contactId" | "content" | "recipientPhone" | "recipientName" | "priority" | "priorityRank" | "templateUsed" | "scheduledFor" | "metadata" | "seq" | "createdAt"
> & {
  /** The broadcast's own limit; null (an automation's step): the server's. */
  maxAttempts: (typeof messages.$inferSelect)["maxAttempts"];
  /** null for an automation's step. */
  broadcastId: (typeof messages.$inferSelect)["broadcastId"];
};

export function insertTemplateMessage(sqlite: Database, m: TemplateMessage): void {
  sqlite
    .query(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name, status,
         priority, priority_rank, webhook_data, template_used, scheduled_for, metadata, seq, max_attempts, broadcast_id, created_at, updated_at)
       VALUES (?1, ?2, NULL, NULL, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, NULL, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15)`,
    )
    .run(m.id, m.accountId, m.contactId, m.content, m.recipientPhone, m.recipientName, m.priority, m.priorityRank, m.templateUsed, m.scheduledFor, m.metadata, m.seq, m.maxAttempts, m.broadcastId, m.createdAt);
  recordMessageInsert(sqlite, { accountId: m.accountId, formId: null, contactId: m.contactId, status: "queued", priorityRank: m.priorityRank, createdAt: m.createdAt, sentAt: null, failureReason: null });
}

/**
 * Cancels up to `limit` still-queued messages of a broadcast; returns their ids. updated_at moves
 * strictly forward (the nextUpdatedAt rule), computed in SQL.
 */
export function cancelBroadcastMessages(sqlite: Database, id: string, nowIso: string, limit: number): string[] {
  const rows = sqlite
    .query(
      `UPDATE messages SET status = 'cancelled', lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
         updated_at = CASE WHEN updated_at < ?2 THEN ?2 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', julianday(updated_at) + 0.001 / 86400.0) END
       WHERE rowid IN (SELECT rowid FROM messages WHERE broadcast_id = ?1 AND status = 'queued' LIMIT ?3)
       RETURNING id`,
    )
    .all(id, nowIso, limit) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/**
 * Cancels the run's steps whose message is still queued (leased ones too: the phone's report for
 * them is then refused by the usual transition rules); returns their ids. updated_at moves
 * strictly forward (the nextUpdatedAt rule), computed in SQL.
 */
export function cancelRunMessages(sqlite: Database, runId: string, reason: string, nowIso: string): string[] {
  const rows = sqlite
    .query(
      `UPDATE messages SET status = 'cancelled', failure_reason = ?3, lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
         updated_at = CASE WHEN updated_at < ?2 THEN ?2 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', julianday(updated_at) + 0.001 / 86400.0) END
       WHERE id IN (SELECT message_id FROM automation_run_steps WHERE run_id = ?1 AND message_id IS NOT NULL) AND status = 'queued'
       RETURNING id`,
    )
    .all(runId, nowIso, reason) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}
