/**
 * The per-recipient limit's counts: texts to a number queued or sent in a window, read along
 * messages_account_recipient_created_idx. Every sending path asks here.
 */
import type { Database } from "bun:sqlite";

/** metadata.source of a keyword reply's message (not a STOP/START/HELP reply: it never goes to an opted-out number). */
export const KEYWORD_RULE_SOURCE = "keyword-rule";

/**
 * Texts to the number queued or sent and due in the 24 hours up to `at` (the per-recipient limit
 * as it will stand when a step goes out). One range of messages_account_recipient_created_idx.
 */
export function textsInDayBefore(sqlite: Database, accountId: string, phone: string, fromIso: string, atIso: string): number {
  return (
    sqlite
      .query(
        `SELECT COUNT(*) AS n FROM messages WHERE account_id = ?1 AND recipient_phone = ?2 AND status IN ('queued', 'sent')
           AND scheduled_for > ?3 AND scheduled_for <= ?4`,
      )
      .get(accountId, phone, fromIso, atIso) as { n: number }
  ).n;
}

/** Texts to the number queued or sent since `sinceIso` (the per-recipient limit of the SMSGate client API). */
export function textsToSince(sqlite: Database, accountId: string, phone: string, sinceIso: string): number {
  return (
    sqlite
      .query("SELECT count(*) AS n FROM messages WHERE account_id = ?1 AND recipient_phone = ?2 AND created_at >= ?3 AND status IN ('queued', 'sent')")
      .get(accountId, phone, sinceIso) as { n: number }
  ).n;
}

/**
 * Whether the rule answered this number since `since` (a reply queued or gone out; a cancelled
 * one told nobody). Read from the messages themselves, inside the inbound text's transaction, so
 * two texts arriving together and a restart in between see the same answer. One range of
 * messages_account_recipient_created_idx.
 */
export function ruleAnsweredSince(sqlite: Database, accountId: string, phone: string, ruleId: string, since: string): boolean {
  return (
    sqlite
      .query(
        `SELECT 1 AS x FROM messages WHERE account_id = ?1 AND recipient_phone = ?2 AND created_at >= ?3 AND status <> 'cancelled'
           AND CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.source') IS '${KEYWORD_RULE_SOURCE}' AND json_extract(metadata, '$.keywordReplyId') IS ?4 ELSE 0 END
         LIMIT 1`,
      )
      .get(accountId, phone, since, ruleId) !== null
  );
}
