/**
 * Message writes of opt-outs: cancelling what is queued to a number, the keyword
 * replies, and the lease-time check. Plain functions; the caller owns the transaction and then
 * tells the queue and the leases (LeaseService.withdraw / queue.insert + notify). The opt-out
 * ones are called by src/services/opt-outs.ts alone (test/unit/opt-outs-home.test.ts).
 */
import type { Database } from "bun:sqlite";
import { recordMessageInsert } from "./derived-counts";
import type { MessageRow } from "./message-rows";

/** failureReason of messages cancelled because their recipient opted out. */
export const OPTED_OUT_REASON = "opted-out";
/** metadata.source of the replies to STOP/START/HELP: the only texts an opted-out number gets. */
export const KEYWORD_REPLY_SOURCE = "keyword-reply";

/**
 * Replies an opt-out never cancels: the opt-out confirmation (a second STOP must not take back
 * the first one's, or the person is never told) and the help reply (sent opted out or not).
 * An opt-in confirmation still waiting is cancelled: after a STOP it is no longer true.
 * docs/api-decisions.md, "The phone path, round two".
 */
const KEPT_REPLY_SQL = `CASE WHEN json_valid(metadata)
  THEN json_extract(metadata, '$.source') IS '${KEYWORD_REPLY_SOURCE}' AND json_extract(metadata, '$.keyword') IN ('opt-out', 'help')
  ELSE 0 END`;

/**
 * Cancels every queued message of the account to `phone` (leased ones too: the phone's report
 * for them is then refused by the usual transition rules), except the keyword replies the person
 * must still get (KEPT_REPLY_SQL). Returns their ids.
 */
export function cancelQueuedTo(sqlite: Database, accountId: string, phone: string, nowIso: string): string[] {
  const rows = sqlite
    .query(
      `UPDATE messages SET status = 'cancelled', failure_reason = ?3, lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
         updated_at = CASE WHEN updated_at < ?4 THEN ?4 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', julianday(updated_at) + 0.001 / 86400.0) END
       WHERE account_id = ?1 AND recipient_phone = ?2 AND status = 'queued' AND NOT (${KEPT_REPLY_SQL})
       RETURNING id`,
    )
    .all(accountId, phone, OPTED_OUT_REASON, nowIso) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/**
 * Whether the number's opt-out that took effect at `since` was confirmed already: an opt-out
 * confirmation to it created since then, queued or gone out (a cancelled one told nobody). One
 * range of messages_account_recipient_created_idx.
 */
export function optOutConfirmedSince(sqlite: Database, accountId: string, phone: string, since: string | null): boolean {
  return (
    sqlite
      .query(
        `SELECT 1 AS x FROM messages WHERE account_id = ?1 AND recipient_phone = ?2 AND created_at >= ?3 AND status <> 'cancelled'
           AND CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.source') IS '${KEYWORD_REPLY_SOURCE}' AND json_extract(metadata, '$.keyword') IS 'opt-out' ELSE 0 END
         LIMIT 1`,
      )
      .get(accountId, phone, since ?? "") !== null
  );
}

/**
 * Of a batch of the queue walk, the messages whose recipient opted out after they were queued
 * and that are not keyword replies: cancelled rather than handed out. One statement (the ids as
 * a JSON array).
 */
export function suppressedAtLease(sqlite: Database, messageIds: string[]): Set<string> {
  const out = new Set<string>();
  if (messageIds.length === 0) return out;
  const rows = sqlite
    .query(
      `SELECT m.id, m.metadata FROM messages m JOIN contacts c ON c.account_id = m.account_id AND c.phone_number = m.recipient_phone
       WHERE m.id IN (SELECT value FROM json_each(?1)) AND c.opted_out = 1`,
    )
    .all(JSON.stringify(messageIds)) as Array<{ id: string; metadata: string }>;
  for (const r of rows) {
    let keywordReply = false;
    try {
      keywordReply = JSON.parse(r.metadata)?.source === KEYWORD_REPLY_SOURCE;
    } catch {}
    if (!keywordReply) out.add(r.id);
  }
  return out;
}

export function cancelSuppressed(sqlite: Database, messageId: string, nowIso: string): void {
  sqlite
    .query(
      `UPDATE messages SET status = 'cancelled', failure_reason = ?2, lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
         updated_at = CASE WHEN updated_at < ?3 THEN ?3 ELSE strftime('%Y-%m-%dT%H:%M:%fZ', julianday(updated_at) + 0.001 / 86400.0) END
       WHERE id = ?1 AND status = 'queued'`,
    )
    .run(messageId, OPTED_OUT_REASON, nowIso);
}

/**
 * Writes a queued message made by newQueuedRow (a manual text, a keyword reply, a team notice, an
 * SMSGate client's text) and counts it. Called by src/services/sending alone (its rows.ts).
 */
export function insertMessageRow(sqlite: Database, r: MessageRow): void {
  sqlite
    .query(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name, status,
         priority, priority_rank, webhook_data, template_used, scheduled_for, metadata, seq, created_at, updated_at, max_attempts, created_by)
       VALUES (?1, ?2, NULL, NULL, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, NULL, NULL, ?9, ?10, ?11, ?12, ?12, ?13, ?14)`,
    )
    .run(r.id, r.account_id, r.contact_id, r.content, r.recipient_phone, r.recipient_name, r.priority, r.priority_rank, r.scheduled_for, r.metadata, r.seq, r.created_at, r.max_attempts ?? null, r.created_by ?? null);
  recordMessageInsert(sqlite, { accountId: r.account_id, formId: null, contactId: r.contact_id, status: "queued", priorityRank: r.priority_rank, createdAt: r.created_at, sentAt: null, failureReason: null });
}
