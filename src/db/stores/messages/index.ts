/**
 * The messages store: the statements the messages, leasing, phones and outbound-event services
 * run on the `messages` table. Its parts for one concern each sit beside it in this folder —
 * history.ts (the metadata timeline), retries.ts, suppression.ts (opt-out writes), list.ts
 * (whole-account pages), rollups.ts (src/db/derived-counts.ts keeps the counters) — and rows.ts
 * maps a row to the API's Message.
 *
 * One store per connection (`messageStore(sqlite)`); every statement is prepared when the store is
 * made, so the hot paths (leasing, a phone's reports) never prepare per call. A call made inside a
 * caller's transaction is part of it.
 */
import type { Database, Statement } from "bun:sqlite";
import type { MessageStatus, Priority } from "../../../domain/statuses";
import { PRIORITIES_BY_RANK, MESSAGE_STATUSES } from "../../../domain/statuses";
import type { QueueEntry, QueueLoadAdd } from "../../../queue/priority-queue";
import { QUEUED_SCHEDULED_MS_SQL } from "../../schema/messages";
import type { MessageRow } from "./rows";
import { contactInAccount, countSentOnContact, findRecipient, type Recipient } from "../contacts";
import { appendLeaseSql, extendLeaseSql, MARK_LEASE_EXPIRED_SQL, setMetadataSql } from "./history";

export type { MessageRow };

/** A message whose lease has run out, as the sweep reads it. */
export type ExpiredLease = Pick<MessageRow, "id" | "account_id" | "lease_expiries" | "retry_count" | "priority" | "seq" | "updated_at">;
/** A lease SQLite holds (boot reload). */
export type HeldLease = Pick<MessageRow, "id" | "account_id" | "lease_expires_at" | "lease_device_id">;
/** What a manual message needs of its recipient's contact. */
/** A manual message's recipient (the contacts store reads it). */
export type { Recipient as RecipientContact } from "../contacts";
/** A page row of the messages list. */
export type ListRow = Pick<
  MessageRow,
  "id" | "content" | "recipient_phone" | "recipient_name" | "form_name" | "status" | "priority" | "sent_at" | "created_at" | "scheduled_for" | "form_id" | "contact_id" | "lease_expires_at"
> & { delivered_at: string | null };
export const LIST_COLUMNS =
  "id, content, recipient_phone, recipient_name, form_name, status, priority, sent_at, created_at, scheduled_for, form_id, contact_id, lease_expires_at, json_extract(metadata, '$.deliveredAt') AS delivered_at";

const ACCOUNTS_SQL = "SELECT id FROM accounts ORDER BY id";
/**
 * Queued messages of one account in queue order, from the partial index `messages_queued_order_idx`
 * (migration 0017): see src/services/queue-sync.ts for why it is read this way.
 */
export const QUEUED_ROWS_SQL = `SELECT id, priority_rank, ${QUEUED_SCHEDULED_MS_SQL}, seq FROM messages INDEXED BY messages_queued_order_idx
  WHERE status = 'queued' AND account_id = ?1
  ORDER BY priority_rank, ${QUEUED_SCHEDULED_MS_SQL}, seq, id`;
type QueuedRow = [id: string, rank: number, scheduledFor: number | null, seq: number];

/** Calls `add` for every queued message, account by account, in queue order (boot). */
export function readQueuedEntries(sqlite: Database, add: QueueLoadAdd): void {
  const rowsOf = sqlite.query(QUEUED_ROWS_SQL);
  for (const [accountId] of sqlite.query(ACCOUNTS_SQL).values() as [string][]) {
    const rows = rowsOf.values(accountId) as QueuedRow[];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      // An unknown rank becomes an unknown priority and an unreadable time NaN, which the queue
      // refuses (all or nothing).
      add(r[0], accountId, PRIORITIES_BY_RANK[r[1]] ?? (String(r[1]) as Priority), r[2] ?? Number.NaN, r[3]);
    }
  }
}

/** Every queued message as a queue entry (tests and benchmarks; boot uses readQueuedEntries). */
export function loadQueuedEntries(sqlite: Database): QueueEntry[] {
  const out: QueueEntry[] = [];
  readQueuedEntries(sqlite, (id, accountId, priority, scheduledFor, seq) => out.push({ id, accountId, priority, scheduledFor, seq }));
  return out;
}

export function messageStore(sqlite: Database) {
  const q = sqlite.query.bind(sqlite);
  const s = {
    byId: q("SELECT * FROM messages WHERE id = ?1 AND account_id = ?2") as Statement<MessageRow, [string, string]>,
    anyById: q("SELECT * FROM messages WHERE id = ?1") as Statement<MessageRow, [string]>,
    totalChanges: q("SELECT total_changes() AS n") as Statement<{ n: number }, []>,
    counters: q(
      "SELECT status, SUM(n) AS n FROM message_counts WHERE account_id = ?1 AND (?2 < 0 OR priority_rank = ?2) GROUP BY status",
    ) as Statement<{ status: string; n: number }, [string, number]>,
    formOwned: q("SELECT 1 AS x FROM forms WHERE id = ?1 AND account_id = ?2"),
    // Leasing (src/services/leases.ts).
    lease: q(
      `UPDATE messages SET lease_token = ?1, lease_expires_at = ?2, lease_device_id = ?3, last_lease_token = ?1,
         metadata = ${appendLeaseSql("?5", "?3", "?2")}
       WHERE id = ?4 AND status = 'queued' RETURNING *`,
    ) as Statement<MessageRow, [string, string, string | null, string, string]>,
    heldLeases: q(
      "SELECT id, account_id, lease_expires_at, lease_device_id FROM messages WHERE status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL",
    ) as Statement<HeldLease, []>,
    heldBy: q(
      "SELECT id FROM messages WHERE status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL AND lease_device_id = ?1",
    ) as Statement<{ id: string }, [string]>,
    expireLeaseAt: q("UPDATE messages SET lease_expires_at = ?2 WHERE id = ?1 AND status = 'queued' AND lease_token IS NOT NULL"),
    extendLease: q(
      `UPDATE messages SET lease_expires_at = ?3, metadata = ${extendLeaseSql("?3")} WHERE id = ?1 AND status = 'queued' AND lease_token IS NOT NULL AND lease_device_id = ?2 AND lease_expires_at < ?4`,
    ),
    expired: q(
      "SELECT id, account_id, lease_expiries, retry_count, priority, seq, updated_at FROM messages WHERE status = 'queued' AND lease_expires_at <= ?1",
    ) as Statement<ExpiredLease, [string]>,
    markLeaseExpired: q(`UPDATE messages SET metadata = ${MARK_LEASE_EXPIRED_SQL} WHERE id = ?1`),
    failNoReport: q(
      `UPDATE messages SET status = 'failed', failure_reason = ?2, lease_expiries = lease_expiries + 1, metadata = ${MARK_LEASE_EXPIRED_SQL},
         lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL, updated_at = ?3 WHERE id = ?1`,
    ),
    returnExpired: q(
      `UPDATE messages SET lease_expiries = lease_expiries + 1, metadata = ${MARK_LEASE_EXPIRED_SQL}, lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL WHERE id = ?1`,
    ),
    // Status changes (src/services/message-status.ts).
    setCancelledBy: q(`UPDATE messages SET cancelled_by = ?1 WHERE id = ?2`),
    setStatus: q(
      `UPDATE messages SET status = ?1, sent_at = ?2, failure_reason = ?3, retry_count = ?4, updated_at = ?5,
         lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL,
         lease_expiries = CASE WHEN ?1 = 'queued' THEN 0 ELSE lease_expiries END
       WHERE id = ?6`,
    ),
    deviceSentAt: q(`UPDATE messages SET metadata = ${setMetadataSql("'$.deviceTimes.sentAt'", "?2")} WHERE id = ?1`),
    deliveredAt: q(`UPDATE messages SET metadata = ${setMetadataSql("'$.deliveredAt'", "?3")}, updated_at = ?4 WHERE id = ?1 AND account_id = ?2`),
    deviceDeliveredAt: q(`UPDATE messages SET metadata = ${setMetadataSql("'$.deviceTimes.deliveredAt'", "?2")} WHERE id = ?1`),
    delete: q("DELETE FROM messages WHERE id = ?1 AND account_id = ?2"),
  };
  return {
    /** The account's message, or null (another account's is not found). */
    find: (accountId: string, id: string): MessageRow | null => s.byId.get(id, accountId) ?? null,
    /** Any account's message (outbound event payloads, written inside the change's transaction). */
    findAny: (id: string): MessageRow | null => s.anyById.get(id) ?? null,
    /** total_changes() of the connection: moves on any write (the list's count cache). */
    totalChanges: (): number => s.totalChanges.get()!.n,
    /** Per-status counts kept by triggers (migration 0001); rank -1 = every priority. */
    counters: (accountId: string, rank: number) => s.counters.all(accountId, rank),
    ownsForm: (accountId: string, id: string): boolean => s.formOwned.get(id, accountId) !== null,
    ownsContact: (accountId: string, id: string): boolean => contactInAccount(sqlite, accountId, id),
    /** One page of the list: conditions and order built by the messages-list service from fixed fragments. */
    page: (p: { where: string[]; params: Array<string | number>; orderBy: string; limit: number; offset: number }): ListRow[] =>
      sqlite.query(`SELECT ${LIST_COLUMNS} FROM messages WHERE ${p.where.join(" AND ")} ORDER BY ${p.orderBy} LIMIT ? OFFSET ?`).all(...p.params, p.limit, p.offset) as ListRow[],
    /** Status counts along one named index (a contact's messages, one priority's share). */
    countByStatusOn: (index: "messages_contact_created_idx" | "messages_account_priority_idx", where: string[], params: Array<string | number>) =>
      sqlite.query(`SELECT status, COUNT(*) AS n FROM messages INDEXED BY ${index} WHERE ${where.join(" AND ")} GROUP BY status`).all(...params) as Array<{ status: MessageStatus; n: number }>,
    /** One range count per status with `status = '…'` spelled out. */
    countEachStatus: (where: string[], params: Array<string | number>): Record<MessageStatus, number> => {
      const cond = where.join(" AND ");
      return sqlite
        .query("SELECT " + MESSAGE_STATUSES.map((st) => `(SELECT COUNT(*) FROM messages WHERE status = '${st}' AND ${cond}) AS ${st}`).join(", "))
        .get(...MESSAGE_STATUSES.flatMap(() => params)) as Record<MessageStatus, number>;
    },

    // ---- leases
    /** Leases the message to `deviceId` (null: a recipe's holder) until `expiresIso`; null when it is no longer queued and free. */
    lease: (id: string, l: { token: string; expiresIso: string; deviceId: string | null; nowIso: string }): MessageRow | null => s.lease.get(l.token, l.expiresIso, l.deviceId, id, l.nowIso),
    heldLeases: (): HeldLease[] => s.heldLeases.all(),
    heldBy: (holder: string): string[] => s.heldBy.all(holder).map((r) => r.id),
    expireLeaseAt: (id: string, atIso: string) => void s.expireLeaseAt.run(id, atIso),
    /** Moves the holder's lease on to `expiresIso` unless it still has until `halfIso`; true when written. */
    extendLease: (id: string, holder: string, expiresIso: string, halfIso: string): boolean => s.extendLease.run(id, holder, expiresIso, halfIso).changes > 0,
    expired: (nowIso: string): ExpiredLease[] => s.expired.all(nowIso),
    markLeaseExpired: (id: string) => void s.markLeaseExpired.run(id),
    failNoReport: (id: string, reason: string, updatedAt: string) => void s.failNoReport.run(id, reason, updatedAt),
    returnExpired: (id: string) => void s.returnExpired.run(id),

    // ---- status changes
    /** Who cancelled (JSON of an Actor), written with the cancellation. */
    setCancelledBy: (id: string, actor: string) => void s.setCancelledBy.run(actor, id),
    setStatus: (id: string, n: { status: MessageStatus; sentAt: string | null; failureReason: string | null; retryCount: number; updatedAt: string }) =>
      void s.setStatus.run(n.status, n.sentAt, n.failureReason, n.retryCount, n.updatedAt, id),
    /** A message became sent: its contact's count, last contact time and status move with it. */
    countSentOnContact: (accountId: string, contactId: string, sentAt: string, updatedAt: string) => countSentOnContact(sqlite, accountId, contactId, sentAt, updatedAt),
    /** The phone's own sentAt, kept for the timeline when it was not believed (docs/devices.md). */
    setDeviceSentAt: (id: string, deviceSentAt: string) => void s.deviceSentAt.run(id, deviceSentAt),
    setDeliveredAt: (accountId: string, id: string, atIso: string, updatedAt: string) => void s.deliveredAt.run(id, accountId, atIso, updatedAt),
    setDeviceDeliveredAt: (id: string, deviceTime: string) => void s.deviceDeliveredAt.run(id, deviceTime),
    delete: (accountId: string, id: string) => void s.delete.run(id, accountId),
    /** A manual message's recipient: the account's contact by id, or by phone number. */
    recipientById: (accountId: string, contactId: string): Recipient | null => findRecipient(sqlite, accountId, { id: contactId }),
    recipientByPhone: (accountId: string, phone: string): Recipient | null => findRecipient(sqlite, accountId, { phone }),
  };
}

export type MessageStore = ReturnType<typeof messageStore>;

const stores = new WeakMap<Database, MessageStore>();

/** The connection's one store (prepared once), for callers handed only the connection. */
export function messagesOf(sqlite: Database): MessageStore {
  let store = stores.get(sqlite);
  if (!store) stores.set(sqlite, (store = messageStore(sqlite)));
  return store;
}

/** The account's messages (what deleting it removes). */
export function countAccountMessages(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM messages WHERE account_id = ?").get(accountId) as { n: number }).n;
}

/** The largest message sequence number stored (0 for none): the queue's creation order starts past it. */
export function largestMessageSeq(sqlite: Database): number {
  return (sqlite.query("SELECT coalesce(max(seq), 0) AS m FROM messages").get() as { m: number }).m;
}

/** Lease holders (lease_device_id values) with their count of leased, still-queued messages. */
export function leaseHolders(sqlite: Database): Array<{ holder: string; accountId: string; n: number }> {
  return sqlite
    .query(
      `SELECT lease_device_id AS holder, account_id AS accountId, COUNT(*) AS n FROM messages
       WHERE status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL AND lease_device_id IS NOT NULL GROUP BY lease_device_id, account_id`,
    )
    .all() as Array<{ holder: string; accountId: string; n: number }>;
}

/** Failed messages of the account created since `sinceIso` (the SMSGate health figure). */
export function countFailedSince(sqlite: Database, accountId: string, sinceIso: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM messages WHERE account_id = ?1 AND status = 'failed' AND created_at >= ?2").get(accountId, sinceIso) as { n: number }).n;
}
