/**
 * Conversation reads: the contacts with messages in either direction, newest
 * activity first (the `conversations` table, kept by triggers, migration 0010), and one
 * contact's messages in both directions.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { conversations } from "../../schema/contacts";
import type { inboundMessages, messages } from "../../schema";
import type { ContactFilter } from "../../../domain/contact-query";
import { filterSql } from "./filter";
import type { ContactRow } from "./index";
import { messageStage, type MessageStage } from "../../../domain/message-stage";
import type { MessageStatus } from "../../../domain/statuses";

/** A conversation as listed: its contact's columns and the conversation's. */
export type ConversationRow = Pick<ContactRow, "firstName" | "lastName" | "phoneNumber" | "status" | "optedOut"> &
  Pick<typeof conversations.$inferSelect, "unreadCount" | "lastMessageAt"> & { contactId: string };

/** The conversations of contacts matching `f` (filterSql over alias `c`), only unread ones or only read ones when `unread` says. */
function conversationWhere(accountId: string, f: ContactFilter, unread: boolean | undefined): { where: string; params: SQLQueryBindings[] } {
  const w = filterSql(accountId, f);
  let where = w.where;
  if (unread === true) where += " AND v.unread_count > 0";
  if (unread === false) where += " AND v.unread_count = 0";
  return { where, params: w.params };
}

/** Which conversations: the contact filter of the list API, and read state (undefined: either). */
export interface ConversationFilter {
  filter: ContactFilter;
  unread?: boolean;
}

/** A page of rows: how many, after how many. */
export interface RowPage {
  limit: number;
  offset: number;
}

export function listConversations(sqlite: Database, accountId: string, q: ConversationFilter, page: RowPage): ConversationRow[] {
  const { limit, offset } = page;
  const { where, params } = conversationWhere(accountId, q.filter, q.unread);
  const rows = sqlite
    .query(
      `SELECT c.id AS contactId, c.first_name AS firstName, c.last_name AS lastName, c.phone_number AS phoneNumber, c.status,
         c.opted_out AS optedOut, v.unread_count AS unreadCount, v.last_message_at AS lastMessageAt
       FROM conversations v JOIN contacts c ON c.id = v.contact_id
       WHERE v.account_id = ? AND ${where}
       ORDER BY v.last_message_at DESC, v.rowid DESC LIMIT ? OFFSET ?`,
    )
    .all(accountId, ...params, limit, offset) as Array<Omit<ConversationRow, "optedOut"> & { optedOut: number }>;
  return rows.map((r) => ({ ...r, optedOut: r.optedOut === 1 }));
}

export function countConversations(sqlite: Database, accountId: string, q: ConversationFilter): number {
  const { filter: f, unread } = q;
  // Without a condition on the contacts, the conversations are counted alone: every one has its
  // contact (the foreign key cascades) in its account, so the join only cost a contact lookup per
  // conversation — the whole account's, on every visit (docs/api-decisions.md, "Pages with years of data").
  if (filterSql(accountId, f).where === filterSql(accountId, {}).where) {
    const only = unread === true ? " AND unread_count > 0" : unread === false ? " AND unread_count = 0" : "";
    return (sqlite.query(`SELECT count(*) AS n FROM conversations WHERE account_id = ?${only}`).get(accountId) as { n: number }).n;
  }
  const { where, params } = conversationWhere(accountId, f, unread);
  return (
    sqlite.query(`SELECT count(*) AS n FROM conversations v JOIN contacts c ON c.id = v.contact_id WHERE v.account_id = ? AND ${where}`).get(accountId, ...params) as {
      n: number;
    }
  ).n;
}

export function unreadTotal(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT coalesce(sum(unread_count), 0) AS n FROM conversations WHERE account_id = ?1 AND unread_count > 0").get(accountId) as { n: number }).n;
}

export interface LastMessage {
  id: string;
  direction: "outbound" | "inbound";
  content: string;
  at: string;
}

/** The contact's newest message in either direction (two index probes). */
export function lastMessageOf(sqlite: Database, contactId: string): LastMessage | null {
  return sqlite
    .query(
      `SELECT * FROM (SELECT id, 'outbound' AS direction, content, created_at AS at FROM messages WHERE contact_id = ?1 ORDER BY created_at DESC LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT id, 'inbound', body, received_at FROM inbound_messages WHERE contact_id = ?1 ORDER BY received_at DESC LIMIT 1)
       ORDER BY at DESC LIMIT 1`,
    )
    .get(contactId) as LastMessage | null;
}

/** The columns, each null where the other direction has none. */
type OrNull<T> = { [K in keyof T]: T[K] | null };

/**
 * One text of a conversation, in either direction: a message's columns (null for an inbound
 * text) and an inbound text's (null for a message); `content` is the message's text or the
 * inbound body, `history` an inbound text its phone sent again from its history: stored, no
 * action taken (migration 0037).
 */
export type ThreadItem = Pick<typeof messages.$inferSelect, "id" | "content" | "createdAt"> &
  OrNull<Pick<typeof messages.$inferSelect, "sentAt" | "failureReason">> &
  OrNull<Pick<typeof inboundMessages.$inferSelect, "receivedAt" | "readAt" | "keyword">> & {
  history: boolean;
  direction: "outbound" | "inbound";
  /** outbound: queued|sent|failed|cancelled; inbound: received. */
  status: string;
  /** outbound: where the text is (src/domain/message-stage.ts: with-phone, delivered, …); inbound: received. */
  stage: MessageStage | "received";
  /** When it happened: createdAt (outbound), receivedAt (inbound). */
  at: string;
};

/**
 * Both directions of one contact, in time order (`asc`) or newest first. An inbound text is
 * placed at the earlier of the phone's receivedAt and the server's arrival time (a text a phone
 * held while offline keeps its true time, and none sorts after the server's clock). A keyword's
 * auto-reply is queued at the very instant the text is stored, so on a tie the inbound comes
 * first: a reply never precedes what it answers. docs/api-decisions.md, "The dashboard at phone
 * width, in plain words".
 */
export function listThread(sqlite: Database, accountId: string, contactId: string, q: RowPage & { order: "asc" | "desc" }): ThreadItem[] {
  const { limit, offset } = q;
  const dir = q.order === "asc" ? "ASC" : "DESC";
  return sqlite
    .query(
      `SELECT id, direction, content, status, at, sentAt, failureReason, receivedAt, readAt, keyword, createdAt, history, leased, deliveredAt FROM (
         SELECT id, 'outbound' AS direction, content, status, created_at AS at, sent_at AS sentAt, failure_reason AS failureReason,
           NULL AS receivedAt, NULL AS readAt, NULL AS keyword, created_at AS createdAt, 0 AS history, created_at AS sk, 1 AS side, rowid AS rid,
           lease_expires_at IS NOT NULL AS leased, json_extract(metadata, '$.deliveredAt') AS deliveredAt
         FROM messages WHERE contact_id = ?1 AND account_id = ?2
         UNION ALL
         SELECT id, 'inbound', body, 'received', received_at, NULL, NULL, received_at, read_at, keyword, created_at, history, min(received_at, created_at), 0, rowid, 0, NULL
         FROM inbound_messages WHERE contact_id = ?1 AND account_id = ?2)
       ORDER BY sk ${dir}, side ${dir}, rid ${dir} LIMIT ?3 OFFSET ?4`,
    )
    .all(contactId, accountId, limit, offset)
    .map((raw) => {
      const { leased, deliveredAt, ...r } = raw as Omit<ThreadItem, "history" | "stage"> & { history: number; leased: number; deliveredAt: string | null };
      const stage = r.direction === "inbound" ? ("received" as const) : messageStage(r.status as MessageStatus, leased === 1, deliveredAt);
      return { ...r, stage, history: r.history === 1 };
    });
}

export function countThread(sqlite: Database, accountId: string, contactId: string): number {
  const q = (t: string) => (sqlite.query(`SELECT count(*) AS n FROM ${t} WHERE contact_id = ?1 AND account_id = ?2`).get(contactId, accountId) as { n: number }).n;
  return q("messages") + q("inbound_messages");
}
