/**
 * Keyword replies (docs/api-decisions.md, "Keyword replies"): the rules, and the one question
 * the inbound path asks of the messages — was this contact answered by this rule lately. Plain
 * functions over the connection; the service owns transactions.
 */
import type { Database } from "bun:sqlite";
import type { keywordReplies } from "../schema/keyword-replies";
import type { RawRow } from "./row";

/** A keyword reply rule: its keywords and the tags it adds parsed. */
export type KeywordReplyRecord = Omit<typeof keywordReplies.$inferSelect, "keywords" | "addTags"> & { keywords: string[]; addTags: string[] };


type Raw = RawRow<typeof keywordReplies>;

function toRecord(r: Raw): KeywordReplyRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    keywords: JSON.parse(r.keywords) as string[],
    reply: r.reply,
    addTags: JSON.parse(r.add_tags) as string[],
    setStatus: r.set_status,
    isActive: Boolean(r.is_active),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function listKeywordReplies(sqlite: Database, accountId: string): KeywordReplyRecord[] {
  return (sqlite.query("SELECT * FROM keyword_replies WHERE account_id = ?1 ORDER BY created_at, id").all(accountId) as Raw[]).map(toRecord);
}

export function findKeywordReply(sqlite: Database, accountId: string, id: string): KeywordReplyRecord | null {
  const r = sqlite.query("SELECT * FROM keyword_replies WHERE id = ?1 AND account_id = ?2").get(id, accountId) as Raw | null;
  return r ? toRecord(r) : null;
}

export function countKeywordReplies(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT COUNT(*) AS n FROM keyword_replies WHERE account_id = ?1").get(accountId) as { n: number }).n;
}

export function insertKeywordReply(sqlite: Database, r: KeywordReplyRecord): void {
  sqlite
    .query(
      `INSERT INTO keyword_replies (id, account_id, keywords, reply, add_tags, set_status, is_active, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
    )
    .run(r.id, r.accountId, JSON.stringify(r.keywords), r.reply, JSON.stringify(r.addTags), r.setStatus, r.isActive ? 1 : 0, r.createdAt, r.updatedAt);
}

export function updateKeywordReply(sqlite: Database, r: KeywordReplyRecord): void {
  sqlite
    .query(
      `UPDATE keyword_replies SET keywords = ?3, reply = ?4, add_tags = ?5, set_status = ?6, is_active = ?7, updated_at = ?8
       WHERE id = ?1 AND account_id = ?2`,
    )
    .run(r.id, r.accountId, JSON.stringify(r.keywords), r.reply, JSON.stringify(r.addTags), r.setStatus, r.isActive ? 1 : 0, r.updatedAt);
}

export function deleteKeywordReply(sqlite: Database, accountId: string, id: string): boolean {
  return sqlite.query("DELETE FROM keyword_replies WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes > 0;
}

// Read from the messages table: its statement lives in stores/messages/ (docs/api-decisions.md,
// "The house, round two: stores by table").
export { KEYWORD_RULE_SOURCE, ruleAnsweredSince } from "./messages/recipient-limits";
