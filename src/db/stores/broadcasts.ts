/**
 * Queries of the broadcasts table. Plain functions over the connection; the service owns
 * transactions. The contacts a broadcast walks are in stores/contacts/segments.ts, its messages
 * in stores/messages/templates.ts (docs/architecture.md, "Stores").
 */
import type { Database } from "bun:sqlite";
import type { broadcasts } from "../schema/broadcasts";
import type { QuietHours } from "../../domain/quiet-hours";

// A broadcast's contacts and messages live in their tables' folders; these names stay importable
// from here (docs/api-decisions.md, "The house, round two: stores by table").
export { countSegment, newestContactId, segmentChunk, type Exclusion, type SegmentContact } from "./contacts/segments";
export { broadcastMessageCounts, cancelBroadcastMessages, insertTemplateMessage, type TemplateMessage } from "./messages/templates";

/** A broadcast as stored, its JSON columns parsed: the segment as it was asked for, the quiet hours it keeps. */
export type BroadcastRecord = Omit<typeof broadcasts.$inferSelect, "segment" | "quietHours"> & {
  segment: Record<string, unknown>;
  quietHours: QuietHours | null;
};

type StoredBroadcast = typeof broadcasts.$inferSelect;

function toRecord(row: StoredBroadcast): BroadcastRecord {
  return { ...row, segment: JSON.parse(row.segment) as Record<string, unknown>, quietHours: row.quietHours ? (JSON.parse(row.quietHours) as QuietHours) : null };
}

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
    .run(b.id, b.accountId, b.name, b.content, JSON.stringify(b.segment), b.priority, b.scheduledFor, b.sendRatePerMinute, b.maxAttempts, b.status, b.recipients, b.suppressed, b.queuedCount, b.skipped, b.cursor, b.lastContactId, b.createdAt, b.updatedAt, b.quietHours ? JSON.stringify(b.quietHours) : null, b.timezone, b.recipientLimitPerDay);
}

export function findBroadcast(sqlite: Database, accountId: string, id: string): BroadcastRecord | null {
  const row = sqlite.query(`SELECT ${COLUMNS} FROM broadcasts WHERE id = ?1 AND account_id = ?2`).get(id, accountId) as StoredBroadcast | null;
  return row ? toRecord(row) : null;
}

export function listBroadcasts(sqlite: Database, accountId: string, page: number, limit: number): { rows: BroadcastRecord[]; total: number } {
  const rows = sqlite
    .query(`SELECT ${COLUMNS} FROM broadcasts WHERE account_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3`)
    .all(accountId, limit, (page - 1) * limit) as StoredBroadcast[];
  const total = (sqlite.query("SELECT COUNT(*) AS n FROM broadcasts WHERE account_id = ?1").get(accountId) as { n: number }).n;
  return { rows: rows.map(toRecord), total };
}

/** Broadcasts a restart must carry on: still creating messages, or cancelled with messages left to cancel. */
export function unfinishedBroadcasts(sqlite: Database): BroadcastRecord[] {
  const rows = sqlite
    .query(
      `SELECT ${COLUMNS} FROM broadcasts b WHERE status = 'queuing'
         OR (status = 'cancelled' AND EXISTS (SELECT 1 FROM messages m WHERE m.broadcast_id = b.id AND m.status = 'queued'))`,
    )
    .all() as StoredBroadcast[];
  return rows.map(toRecord);
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

