/**
 * Storage of SMSGate's third-party API (migration 0029): messages as an SMSGate client sent them
 * (one Textwire message per phone number), the account's SMSGate signing key and send rules, and
 * the lookups the phone path and the webhooks make by Textwire message id. Plain functions over
 * the connection (docs/architecture.md, "One store style"); rows keep the schema's column names,
 * with flags as booleans and the quiet hours parsed.
 */
import type { Database } from "bun:sqlite";
import type { RawRow } from "./row";
import type { messages, smsgateClients, smsgateMessages, smsgateRecipients } from "../schema";
import type { QuietHours } from "../../domain/quiet-hours";

type StoredMessage = RawRow<typeof smsgateMessages>;
type StoredClient = RawRow<typeof smsgateClients>;

/** A message as an SMSGate client sent it (one per request): its flags as booleans. */
export type SmsgateMessageRow = Omit<StoredMessage, "with_delivery_report" | "expiry_pending"> & { with_delivery_report: boolean; expiry_pending: boolean };
export type SmsgateRecipientRow = RawRow<typeof smsgateRecipients>;
/** The account's SMSGate settings: its signing key and send rules, the quiet hours parsed. */
export type SmsgateClientRow = Omit<StoredClient, "quiet_hours"> & { quiet_hours: QuietHours | null };

type MessageColumns = RawRow<typeof messages>;

/** A recipient with what its Textwire message says now (null columns: no message, or it was deleted). */
export type RecipientView = Pick<SmsgateRecipientRow, "position" | "phone_number" | "message_id" | "error" | "processed_at"> & {
  [K in "status" | "lease_token" | "lease_device_id" | "sent_at" | "failure_reason" | "updated_at" | "content"]: MessageColumns[K] | null;
} & {
  /** When the phone reported it delivered (the message's metadata). */
  delivered_at: string | null;
  /** The phone that last held the message (its lease history), for the state's deviceId. */
  last_holder: string | null;
  /** The reason of a phone's failure report Textwire will try again (null: none, or the last attempt's lease ran out unreported). */
  retry_reason: string | null;
};

/** A page of the account's messages: created in [from, to), by phone, in an order; `counted: false` skips the total (-1). */
export interface SmsgateListFilter {
  from?: string;
  to?: string;
  deviceId?: string;
  newestFirst: boolean;
  limit: number;
  offset: number;
  counted?: boolean;
}

/** What a phone needs of an SMSGate message it is handed. */
export interface SmsgateOptions {
  messageId: string;
  simNumber: number | null;
  withDeliveryReport: boolean;
  smsgateId: string;
  deviceId: string | null;
}

const clientOf = (r: StoredClient): SmsgateClientRow => ({ ...r, quiet_hours: r.quiet_hours ? (JSON.parse(r.quiet_hours) as QuietHours) : null });
const messageOf = (r: StoredMessage): SmsgateMessageRow => ({ ...r, with_delivery_report: r.with_delivery_report === 1, expiry_pending: r.expiry_pending === 1 });

export function findSmsgateClient(sqlite: Database, accountId: string): SmsgateClientRow | null {
  const r = sqlite.query("SELECT * FROM smsgate_clients WHERE account_id = ?1").get(accountId) as StoredClient | null;
  return r ? clientOf(r) : null;
}

/** The account's row, made on first use with a fresh signing key. */
export function ensureSmsgateClient(sqlite: Database, accountId: string, signingKey: string, atIso: string): SmsgateClientRow {
  sqlite
    .query("INSERT OR IGNORE INTO smsgate_clients (account_id, signing_key, quiet_hours, recipient_limit_per_day, updated_at) VALUES (?1, ?2, NULL, NULL, ?3)")
    .run(accountId, signingKey, atIso);
  return findSmsgateClient(sqlite, accountId)!;
}

export function updateSmsgateRules(sqlite: Database, accountId: string, r: { quietHours: QuietHours | null; recipientLimitPerDay: number | null; updatedAt: string }): void {
  sqlite
    .query("UPDATE smsgate_clients SET quiet_hours = ?2, recipient_limit_per_day = ?3, updated_at = ?4 WHERE account_id = ?1")
    .run(accountId, r.quietHours ? JSON.stringify(r.quietHours) : null, r.recipientLimitPerDay, r.updatedAt);
}

export function updateSmsgateSigningKey(sqlite: Database, accountId: string, key: string, atIso: string): void {
  sqlite.query("UPDATE smsgate_clients SET signing_key = ?2, updated_at = ?3 WHERE account_id = ?1").run(accountId, key, atIso);
}

export function findSmsgateMessage(sqlite: Database, accountId: string, id: string): SmsgateMessageRow | null {
  const r = sqlite.query("SELECT * FROM smsgate_messages WHERE account_id = ?1 AND id = ?2").get(accountId, id) as StoredMessage | null;
  return r ? messageOf(r) : null;
}

export function insertSmsgateMessage(sqlite: Database, g: SmsgateMessageRow): void {
  sqlite
    .query(
      `INSERT INTO smsgate_messages (account_id, id, device_id, sim_number, with_delivery_report, valid_until, expiry_pending, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
    )
    .run(g.account_id, g.id, g.device_id, g.sim_number, g.with_delivery_report ? 1 : 0, g.valid_until, g.expiry_pending ? 1 : 0, g.created_at);
}

export function insertSmsgateRecipient(sqlite: Database, r: Omit<SmsgateRecipientRow, "processed_at">): void {
  sqlite
    .query("INSERT INTO smsgate_recipients (account_id, smsgate_id, position, phone_number, message_id, error, processed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)")
    .run(r.account_id, r.smsgate_id, r.position, r.phone_number, r.message_id, r.error);
}

/** The message's recipients in order, each with its Textwire message's state. */
export function listSmsgateRecipients(sqlite: Database, accountId: string, id: string): RecipientView[] {
  return sqlite
    .query(
      `SELECT r.position, r.phone_number, r.message_id, r.error, r.processed_at, m.status, m.lease_token, m.lease_device_id, m.sent_at,
              m.failure_reason, json_extract(m.metadata, '$.deliveredAt') AS delivered_at, m.updated_at,
              coalesce(m.lease_device_id, json_extract(m.metadata, '$.leases[#-1].deviceId')) AS last_holder, m.content,
              CASE WHEN json_extract(m.metadata, '$.lastFailedLease') IS NOT NULL THEN json_extract(m.metadata, '$.failures[#-1].reason') END AS retry_reason
         FROM smsgate_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.account_id = ?1 AND r.smsgate_id = ?2 ORDER BY r.position`,
    )
    .all(accountId, id) as RecipientView[];
}

/** What a phone needs of an SMSGate message it is handed (null: not sent through SMSGate's API). */
export function smsgateOptionsOf(sqlite: Database, messageId: string): SmsgateOptions | null {
  const r = sqlite
    .query(
      `SELECT r.message_id AS messageId, g.sim_number AS simNumber, g.with_delivery_report AS withDeliveryReport, r.smsgate_id AS smsgateId, g.device_id AS deviceId
         FROM smsgate_recipients r INDEXED BY smsgate_recipients_message_idx
         JOIN smsgate_messages g ON g.account_id = r.account_id AND g.id = r.smsgate_id
        WHERE r.message_id = ?1`,
    )
    .get(messageId) as (Omit<SmsgateOptions, "withDeliveryReport"> & { withDeliveryReport: number }) | null;
  return r ? { ...r, withDeliveryReport: r.withDeliveryReport === 1 } : null;
}

export function markSmsgateProcessed(sqlite: Database, messageId: string, atIso: string): void {
  sqlite.query("UPDATE smsgate_recipients SET processed_at = ?2 WHERE message_id = ?1 AND processed_at IS NULL").run(messageId, atIso);
}

/** A page of the account's messages; `total` counts them all unless `counted` is false (then -1). */
export function listSmsgateMessages(sqlite: Database, accountId: string, f: SmsgateListFilter): { rows: SmsgateMessageRow[]; total: number } {
  const where = ["g.account_id = ?"];
  const params: Array<string | number> = [accountId];
  if (f.from !== undefined) (where.push("g.created_at >= ?"), params.push(f.from));
  if (f.to !== undefined) (where.push("g.created_at < ?"), params.push(f.to));
  // The phone the client named, or else the one that took (last held) one of its texts.
  if (f.deviceId !== undefined) {
    where.push(
      `(g.device_id = ? OR (g.device_id IS NULL AND EXISTS (SELECT 1 FROM smsgate_recipients r JOIN messages m ON m.id = r.message_id
         WHERE r.account_id = g.account_id AND r.smsgate_id = g.id
           AND coalesce(m.lease_device_id, json_extract(m.metadata, '$.leases[#-1].deviceId')) = ?)))`,
    );
    params.push(f.deviceId, f.deviceId);
  }
  const cond = where.join(" AND ");
  const total = f.counted === false ? -1 : (sqlite.query(`SELECT count(*) AS n FROM smsgate_messages g WHERE ${cond}`).get(...params) as { n: number }).n;
  const order = f.newestFirst ? "DESC" : "ASC";
  const rows = sqlite
    .query(`SELECT g.* FROM smsgate_messages g WHERE ${cond} ORDER BY g.created_at ${order}, g.id ${order} LIMIT ? OFFSET ?`)
    .all(...params, f.limit, f.offset) as StoredMessage[];
  return { rows: rows.map(messageOf), total };
}

/** The earliest deadline of a message whose expiry is still to be judged (null: none). */
export function nextSmsgateExpiry(sqlite: Database): string | null {
  return (sqlite.query("SELECT min(valid_until) AS at FROM smsgate_messages INDEXED BY smsgate_messages_expiry_idx WHERE expiry_pending = 1").get() as { at: string | null }).at;
}

/** Messages past their deadline whose expiry is still to be judged, earliest first. */
export function dueSmsgateExpiry(sqlite: Database, nowIso: string, limit: number): Array<{ accountId: string; id: string }> {
  return sqlite
    .query("SELECT account_id AS accountId, id FROM smsgate_messages INDEXED BY smsgate_messages_expiry_idx WHERE expiry_pending = 1 AND valid_until <= ?1 ORDER BY valid_until LIMIT ?2")
    .all(nowIso, limit) as Array<{ accountId: string; id: string }>;
}

export function markSmsgateExpiryJudged(sqlite: Database, accountId: string, id: string): void {
  sqlite.query("UPDATE smsgate_messages SET expiry_pending = 0 WHERE account_id = ?1 AND id = ?2").run(accountId, id);
}

/** The recipients' messages still queued and held by no phone (what a cancel or an expiry may still stop). */
export function smsgateNotHandedOut(sqlite: Database, accountId: string, id: string): string[] {
  return (
    sqlite
      .query(
        `SELECT m.id FROM smsgate_recipients r JOIN messages m ON m.id = r.message_id
          WHERE r.account_id = ?1 AND r.smsgate_id = ?2 AND m.status = 'queued' AND m.lease_token IS NULL`,
      )
      .all(accountId, id) as Array<{ id: string }>
  ).map((r) => r.id);
}
