/**
 * Queries of broadcasts and of the contacts/messages a broadcast works through. Plain functions
 * over the connection; the service owns transactions.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { recordMessageInsert } from "../derived-counts";
import type { broadcasts } from "../schema/broadcasts";
import type { ContactFilter } from "../../domain/contact-query";
import { filterSql } from "./contacts/filter";
import { OPTED_OUT_SQL } from "./contacts";
import { MESSAGE_STATUSES, type MessageStatus } from "../../domain/statuses";

export type BroadcastRecord = typeof broadcasts.$inferSelect;

const COLUMNS = `id, account_id AS accountId, name, content, segment, priority, scheduled_for AS scheduledFor,
  send_rate_per_minute AS sendRatePerMinute, max_attempts AS maxAttempts, quiet_hours AS quietHours, timezone,
  recipient_limit_per_day AS recipientLimitPerDay, status, recipients, suppressed,
  queued_count AS queuedCount, skipped, cursor, last_contact_id AS lastContactId, created_at AS createdAt, updated_at AS updatedAt`;

export function insertBroadcast(sqlite: Database, b: BroadcastRecord): void {
  sqlite
    .query(
      `INSERT INTO broadcasts (id, account_id, name, content, segment, priority, scheduled_for, send_rate_per_minute, max_attempts,
         status, recipients, suppressed, queued_count, skipped, cursor, last_contact_id, created_at, updated_at, quiet_hours, timezone, recipient_limit_per_day)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)`,
    )
    .run(b.id, b.accountId, b.name, b.content, b.segment, b.priority, b.scheduledFor, b.sendRatePerMinute, b.maxAttempts, b.status, b.recipients, b.suppressed, b.queuedCount, b.skipped, b.cursor, b.lastContactId, b.createdAt, b.updatedAt, b.quietHours, b.timezone, b.recipientLimitPerDay);
}

export function findBroadcast(sqlite: Database, accountId: string, id: string): BroadcastRecord | null {
  return (sqlite.query(`SELECT ${COLUMNS} FROM broadcasts WHERE id = ?1 AND account_id = ?2`).get(id, accountId) as BroadcastRecord | null) ?? null;
}

export function listBroadcasts(sqlite: Database, accountId: string, page: number, limit: number): { rows: BroadcastRecord[]; total: number } {
  const rows = sqlite
    .query(`SELECT ${COLUMNS} FROM broadcasts WHERE account_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3`)
    .all(accountId, limit, (page - 1) * limit) as BroadcastRecord[];
  const total = (sqlite.query("SELECT COUNT(*) AS n FROM broadcasts WHERE account_id = ?1").get(accountId) as { n: number }).n;
  return { rows, total };
}

/** Broadcasts a restart must carry on: still creating messages, or cancelled with messages left to cancel. */
export function unfinishedBroadcasts(sqlite: Database): BroadcastRecord[] {
  return sqlite
    .query(
      `SELECT ${COLUMNS} FROM broadcasts b WHERE status = 'queuing'
         OR (status = 'cancelled' AND EXISTS (SELECT 1 FROM messages m WHERE m.broadcast_id = b.id AND m.status = 'queued'))`,
    )
    .all() as BroadcastRecord[];
}

export function advanceBroadcast(sqlite: Database, id: string, p: { cursor: string; queued: number; skipped: number; done: boolean; updatedAt: string }): void {
  sqlite
    .query(
      `UPDATE broadcasts SET cursor = ?2, queued_count = queued_count + ?3, skipped = skipped + ?4,
         status = CASE WHEN ?5 AND status = 'queuing' THEN 'queued' ELSE status END, updated_at = ?6
       WHERE id = ?1`,
    )
    .run(id, p.cursor, p.queued, p.skipped, p.done ? 1 : 0, p.updatedAt);
}

export function setBroadcastStatus(sqlite: Database, id: string, status: BroadcastRecord["status"], updatedAt: string): void {
  sqlite.query("UPDATE broadcasts SET status = ?2, updated_at = ?3 WHERE id = ?1").run(id, status, updatedAt);
}

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
 * SQL that holds a segment: the contact filter of the list API, contacts up to `lastContactId`
 * (ids are time-ordered: contacts made after the broadcast are not in it), `excluded` saying
 * which matching contacts get no message (those who opted out).
 */
function segmentWhere(accountId: string, filter: ContactFilter, lastContactId: string): { where: string; params: SQLQueryBindings[] } {
  const f = filterSql(accountId, filter);
  return { where: `${f.where} AND c.id <= ?`, params: [...f.params, lastContactId] };
}

/**
 * Which matching contacts get no message (SQL over alias c, with its parameters): those already
 * sent or queued `recipientLimitPerDay` texts since `since` (the per-recipient limit).
 */
export interface Exclusion {
  recipientLimitPerDay: number | null;
  /** ISO: the start of the per-recipient limit's 24 hours. */
  since: string;
}

/** The per-recipient limit's test (SQL over alias c, with its parameters); null without a limit. */
function overLimitSql(x: Exclusion): { sql: string; params: SQLQueryBindings[] } | null {
  if (x.recipientLimitPerDay === null) return null;
  return {
    sql: `(SELECT COUNT(*) FROM messages m WHERE m.account_id = c.account_id AND m.recipient_phone = c.phone_number
          AND m.created_at >= ? AND m.status IN ('queued', 'sent')) >= ?`,
    params: [x.since, x.recipientLimitPerDay],
  };
}

function exclusionSql(x: Exclusion): { sql: string; params: SQLQueryBindings[] } {
  const limit = overLimitSql(x);
  return limit ? { sql: `(${OPTED_OUT_SQL} OR ${limit.sql})`, params: limit.params } : { sql: `(${OPTED_OUT_SQL})`, params: [] };
}

/** The account's newest contact id: where a broadcast's or an automation start's walk ends. */
export function newestContactId(sqlite: Database, accountId: string): string | null {
  const r = sqlite.query("SELECT MAX(id) AS id FROM contacts WHERE account_id = ?1").get(accountId) as { id: string | null };
  return r.id;
}

/**
 * The segment counted: `recipients` get a text; `suppressed` do not, being opted out
 * (`optedOut`) or, of the others, at the per-recipient limit (`overLimit`).
 */
export function countSegment(
  sqlite: Database,
  accountId: string,
  filter: ContactFilter,
  lastContactId: string,
  x: Exclusion,
): { recipients: number; suppressed: number; optedOut: number; overLimit: number } {
  const s = segmentWhere(accountId, filter, lastContactId);
  const limit = overLimitSql(x);
  const r = sqlite
    .query(
      `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN ${OPTED_OUT_SQL} THEN 1 ELSE 0 END), 0) AS optedOut,
         ${limit ? `COALESCE(SUM(CASE WHEN NOT (${OPTED_OUT_SQL}) AND ${limit.sql} THEN 1 ELSE 0 END), 0)` : "0"} AS overLimit
       FROM contacts c WHERE ${s.where}`,
    )
    .get(...(limit?.params ?? []), ...s.params) as { total: number; optedOut: number; overLimit: number };
  const suppressed = r.optedOut + r.overLimit;
  return { recipients: r.total - suppressed, suppressed, optedOut: r.optedOut, overLimit: r.overLimit };
}

export interface SegmentContact {
  id: string;
  phoneNumber: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  customFields: string;
  excluded: number;
}

/** The next `limit` contacts of the segment after `cursor`, in id order. */
export function segmentChunk(sqlite: Database, accountId: string, filter: ContactFilter, lastContactId: string, cursor: string, limit: number, x: Exclusion): SegmentContact[] {
  const s = segmentWhere(accountId, filter, lastContactId);
  const e = exclusionSql(x);
  // Walk the primary key from the cursor (`+` keeps SQLite off the account index, which would
  // read and sort every contact of the account for each chunk).
  const where = s.where.replace(/^c\.account_id = \?/, "+c.account_id = ?");
  return sqlite
    .query(
      `SELECT c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName, c.email, c.custom_fields AS customFields,
         CASE WHEN ${e.sql} THEN 1 ELSE 0 END AS excluded
       FROM contacts c WHERE ${where} AND c.id > ? ORDER BY c.id LIMIT ?`,
    )
    .all(...e.params, ...s.params, cursor, limit) as SegmentContact[];
}

/**
 * A queued message rendered from a template for a contact, outside any form: a broadcast's or an
 * automation step's (src/db/stores/automations.ts). form_id stays NULL: the form's duplicate
 * window (a second thank-you within minutes is not sent) looks at the form's own texts only.
 */
export interface TemplateMessage {
  id: string;
  accountId: string;
  contactId: string;
  content: string;
  recipientPhone: string;
  recipientName: string | null;
  priority: string;
  priorityRank: number;
  templateUsed: string;
  scheduledFor: string;
  metadata: string;
  seq: number;
  /** The broadcast's own limit; null (an automation's step): the server's. */
  maxAttempts: number | null;
  /** null for an automation's step. */
  broadcastId: string | null;
  createdAt: string;
}

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
