/**
 * Storage of SMSGate's third-party API (migration 0029): messages as an SMSGate client sent them
 * (one Textwire message per phone number), the account's SMSGate signing key and send rules, and
 * the lookups the phone path and the webhooks make by Textwire message id.
 */
import type { Database } from "bun:sqlite";
import type { RawRow } from "./row";
import type { smsgateClients, smsgateMessages, smsgateRecipients } from "../schema";
import { countFailedSince } from "./messages";
import { textsToSince } from "./messages/recipient-limits";

export type SmsgateMessageRow = RawRow<typeof smsgateMessages>;
export type SmsgateRecipientRow = RawRow<typeof smsgateRecipients>;
export type SmsgateClientRow = RawRow<typeof smsgateClients>;

/** A recipient with what its Textwire message says now (null columns: no message, or it was deleted). */
export interface RecipientView {
  position: number;
  phone_number: string;
  message_id: string | null;
  error: string | null;
  processed_at: string | null;
  status: string | null;
  lease_token: string | null;
  lease_device_id: string | null;
  sent_at: string | null;
  failure_reason: string | null;
  delivered_at: string | null;
  updated_at: string | null;
  /** The phone that last held the message (its lease history), for the state's deviceId. */
  last_holder: string | null;
  content: string | null;
  /** The reason of a phone's failure report Textwire will try again (null: none, or the last attempt's lease ran out unreported). */
  retry_reason: string | null;
}

export interface SmsgateListFilter {
  from?: string;
  to?: string;
  deviceId?: string;
}

export function smsgateStore(sqlite: Database) {
  const q = sqlite.query.bind(sqlite);
  const s = {
    client: q("SELECT * FROM smsgate_clients WHERE account_id = ?1"),
    insertClient: q("INSERT OR IGNORE INTO smsgate_clients (account_id, signing_key, quiet_hours, recipient_limit_per_day, updated_at) VALUES (?1, ?2, NULL, NULL, ?3)"),
    updateRules: q("UPDATE smsgate_clients SET quiet_hours = ?2, recipient_limit_per_day = ?3, updated_at = ?4 WHERE account_id = ?1"),
    updateSigningKey: q("UPDATE smsgate_clients SET signing_key = ?2, updated_at = ?3 WHERE account_id = ?1"),
    group: q("SELECT * FROM smsgate_messages WHERE account_id = ?1 AND id = ?2"),
    insertGroup: q(
      `INSERT INTO smsgate_messages (account_id, id, device_id, sim_number, with_delivery_report, valid_until, expiry_pending, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
    ),
    insertRecipient: q(
      "INSERT INTO smsgate_recipients (account_id, smsgate_id, position, phone_number, message_id, error, processed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)",
    ),
    recipients: q(
      `SELECT r.position, r.phone_number, r.message_id, r.error, r.processed_at, m.status, m.lease_token, m.lease_device_id, m.sent_at,
              m.failure_reason, json_extract(m.metadata, '$.deliveredAt') AS delivered_at, m.updated_at,
              coalesce(m.lease_device_id, json_extract(m.metadata, '$.leases[#-1].deviceId')) AS last_holder, m.content,
              CASE WHEN json_extract(m.metadata, '$.lastFailedLease') IS NOT NULL THEN json_extract(m.metadata, '$.failures[#-1].reason') END AS retry_reason
         FROM smsgate_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.account_id = ?1 AND r.smsgate_id = ?2 ORDER BY r.position`,
    ),
    options: q(
      `SELECT r.message_id AS messageId, g.sim_number AS simNumber, g.with_delivery_report AS withDeliveryReport, r.smsgate_id AS smsgateId, g.device_id AS deviceId
         FROM smsgate_recipients r INDEXED BY smsgate_recipients_message_idx
         JOIN smsgate_messages g ON g.account_id = r.account_id AND g.id = r.smsgate_id
        WHERE r.message_id = ?1`,
    ),
    markProcessed: q("UPDATE smsgate_recipients SET processed_at = ?2 WHERE message_id = ?1 AND processed_at IS NULL"),
    nextExpiry: q("SELECT min(valid_until) AS at FROM smsgate_messages INDEXED BY smsgate_messages_expiry_idx WHERE expiry_pending = 1"),
    dueExpiry: q(
      "SELECT account_id AS accountId, id FROM smsgate_messages INDEXED BY smsgate_messages_expiry_idx WHERE expiry_pending = 1 AND valid_until <= ?1 ORDER BY valid_until LIMIT ?2",
    ),
    expiryJudged: q("UPDATE smsgate_messages SET expiry_pending = 0 WHERE account_id = ?1 AND id = ?2"),
    notHandedOut: q(
      `SELECT m.id FROM smsgate_recipients r JOIN messages m ON m.id = r.message_id
        WHERE r.account_id = ?1 AND r.smsgate_id = ?2 AND m.status = 'queued' AND m.lease_token IS NULL`,
    ),
  };
  return {
    client: (accountId: string) => s.client.get(accountId) as SmsgateClientRow | null,
    /** The account's row, made on first use with a fresh signing key. */
    ensureClient(accountId: string, signingKey: string, atIso: string): SmsgateClientRow {
      s.insertClient.run(accountId, signingKey, atIso);
      return s.client.get(accountId) as SmsgateClientRow;
    },
    updateRules: (accountId: string, quietHours: string | null, recipientLimitPerDay: number | null, atIso: string) =>
      void s.updateRules.run(accountId, quietHours, recipientLimitPerDay, atIso),
    updateSigningKey: (accountId: string, key: string, atIso: string) => void s.updateSigningKey.run(accountId, key, atIso),
    group: (accountId: string, id: string) => s.group.get(accountId, id) as SmsgateMessageRow | null,
    insertGroup: (g: SmsgateMessageRow) =>
      void s.insertGroup.run(g.account_id, g.id, g.device_id, g.sim_number, g.with_delivery_report, g.valid_until, g.expiry_pending, g.created_at),
    insertRecipient: (r: Omit<SmsgateRecipientRow, "processed_at">) =>
      void s.insertRecipient.run(r.account_id, r.smsgate_id, r.position, r.phone_number, r.message_id, r.error),
    recipients: (accountId: string, id: string) => s.recipients.all(accountId, id) as RecipientView[],
    /** What a phone needs of an SMSGate message it is handed (null: not sent through SMSGate's API). */
    optionsOf: (messageId: string) =>
      s.options.get(messageId) as { messageId: string; simNumber: number | null; withDeliveryReport: number; smsgateId: string; deviceId: string | null } | null,
    markProcessed: (messageId: string, atIso: string) => void s.markProcessed.run(messageId, atIso),
    /** A page of the account's messages; `total` counts them all unless `counted` is false (then -1). */
    list(accountId: string, f: SmsgateListFilter, newestFirst: boolean, limit: number, offset: number, counted = true): { rows: SmsgateMessageRow[]; total: number } {
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
      const total = counted ? (sqlite.query(`SELECT count(*) AS n FROM smsgate_messages g WHERE ${cond}`).get(...params) as { n: number }).n : -1;
      const order = newestFirst ? "DESC" : "ASC";
      const rows = sqlite
        .query(`SELECT g.* FROM smsgate_messages g WHERE ${cond} ORDER BY g.created_at ${order}, g.id ${order} LIMIT ? OFFSET ?`)
        .all(...params, limit, offset) as SmsgateMessageRow[];
      return { rows, total };
    },
    nextExpiry: () => (s.nextExpiry.get() as { at: string | null }).at,
    dueExpiry: (nowIso: string, limit: number) => s.dueExpiry.all(nowIso, limit) as Array<{ accountId: string; id: string }>,
    expiryJudged: (accountId: string, id: string) => void s.expiryJudged.run(accountId, id),
    /** The recipients' messages still queued and held by no phone (what a cancel or an expiry may still stop). */
    notHandedOut: (accountId: string, id: string) => (s.notHandedOut.all(accountId, id) as Array<{ id: string }>).map((r) => r.id),
    /** Texts of the account created since then that failed (the local server's messages:failed check). */
    countFailedSince: (accountId: string, sinceIso: string) => countFailedSince(sqlite, accountId, sinceIso),
    countRecentTo: (accountId: string, phone: string, sinceIso: string) => textsToSince(sqlite, accountId, phone, sinceIso),
  };
}

export type SmsgateStore = ReturnType<typeof smsgateStore>;

const stores = new WeakMap<Database, SmsgateStore>();

/** The connection's one store (prepared once). */
export function smsgateOf(sqlite: Database): SmsgateStore {
  let store = stores.get(sqlite);
  if (!store) stores.set(sqlite, (store = smsgateStore(sqlite)));
  return store;
}
