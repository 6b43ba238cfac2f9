/**
 * Storage of inbound messages (texts the account's phones received). Plain functions over the
 * connection; `sqlite.query` caches each statement, so the hot ones are prepared once.
 */
import type { Database } from "bun:sqlite";
import type { inboundMessages } from "../schema";

export type InboundRow = typeof inboundMessages.$inferSelect;

const COLUMNS = `id, account_id AS accountId, contact_id AS contactId, from_phone AS fromPhone, body,
  received_at AS receivedAt, device_id AS deviceId, external_id AS externalId, keyword, read_at AS readAt, created_at AS createdAt, history`;

export function insertInbound(sqlite: Database, r: InboundRow): void {
  sqlite
    .query(
      `INSERT INTO inbound_messages (id, account_id, contact_id, from_phone, body, received_at, device_id, external_id, keyword, read_at, created_at, history, sim_number, recipient)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)`,
    )
    .run(r.id, r.accountId, r.contactId, r.fromPhone, r.body, r.receivedAt, r.deviceId, r.externalId, r.keyword, r.readAt, r.createdAt, r.history ? 1 : 0, r.simNumber ?? null, r.recipient ?? null);
}

/** The stored text a phone reported under this id before (the dedupe key), if any. */
export function findInboundByExternalId(sqlite: Database, accountId: string, deviceId: string | null, externalId: string): InboundRow | null {
  return sqlite
    .query(`SELECT ${COLUMNS} FROM inbound_messages WHERE account_id = ?1 AND ifnull(device_id, '') = ?2 AND external_id = ?3`)
    .get(accountId, deviceId ?? "", externalId) as InboundRow | null;
}

export function findInbound(sqlite: Database, accountId: string, id: string): InboundRow | null {
  return sqlite.query(`SELECT ${COLUMNS} FROM inbound_messages WHERE id = ?1 AND account_id = ?2`).get(id, accountId) as InboundRow | null;
}

export interface InboundFilter {
  contactId?: string;
  /** ISO, inclusive. */
  createdAfter?: string;
  /** ISO, exclusive (the messages list's reading). */
  createdBefore?: string;
}

function where(accountId: string, f: InboundFilter): { sql: string; params: string[] } {
  const conds = ["account_id = ?"];
  const params = [accountId];
  if (f.contactId !== undefined) conds.push("contact_id = ?"), params.push(f.contactId);
  if (f.createdAfter !== undefined) conds.push("created_at >= ?"), params.push(f.createdAfter);
  if (f.createdBefore !== undefined) conds.push("created_at < ?"), params.push(f.createdBefore);
  return { sql: conds.join(" AND "), params };
}

/** Newest first (ties on rowid, the storing order). */
export function listInbound(sqlite: Database, accountId: string, f: InboundFilter, limit: number, offset: number): InboundRow[] {
  const w = where(accountId, f);
  return sqlite
    .query(`SELECT ${COLUMNS} FROM inbound_messages WHERE ${w.sql} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`)
    .all(...w.params, limit, offset) as InboundRow[];
}

export function countInbound(sqlite: Database, accountId: string, f: InboundFilter): number {
  const w = where(accountId, f);
  return (sqlite.query(`SELECT count(*) AS n FROM inbound_messages WHERE ${w.sql}`).get(...w.params) as { n: number }).n;
}

/** Marks the contact's unread texts read; returns how many were. */
export function markInboundRead(sqlite: Database, accountId: string, contactId: string, readAt: string): number {
  const n = sqlite.query("UPDATE inbound_messages SET read_at = ?3 WHERE contact_id = ?1 AND account_id = ?2 AND read_at IS NULL").run(contactId, accountId, readAt).changes;
  sqlite.query("UPDATE conversations SET unread_count = 0 WHERE contact_id = ?1 AND account_id = ?2").run(contactId, accountId);
  return n;
}

/** The SIM slot and the phone's own number a received text arrived on (SMSGate's sms:received carries them). */
export function findInboundPhoneFacts(sqlite: Database, id: string): Pick<InboundRow, "simNumber" | "recipient"> | null {
  return sqlite.query("SELECT sim_number AS simNumber, recipient FROM inbound_messages WHERE id = ?1").get(id) as Pick<InboundRow, "simNumber" | "recipient"> | null;
}

/** A received text as SMSGate's inbox list shows it. */
export type SmsgateInboxRow = Pick<InboundRow, "id" | "fromPhone" | "body" | "receivedAt" | "simNumber" | "recipient">;

/** SMSGate's inbox list: received texts, newest first (received time), with the total for X-Total-Count. */
export function listInboundForSmsgate(
  sqlite: Database,
  accountId: string,
  f: { from?: string; to?: string; deviceId?: string },
  limit: number,
  offset: number,
): { rows: SmsgateInboxRow[]; total: number } {
  const where = ["account_id = ?"];
  const params: Array<string | number> = [accountId];
  if (f.from !== undefined) (where.push("received_at >= ?"), params.push(f.from));
  if (f.to !== undefined) (where.push("received_at < ?"), params.push(f.to));
  if (f.deviceId !== undefined) (where.push("device_id = ?"), params.push(f.deviceId));
  const cond = where.join(" AND ");
  const total = (sqlite.query(`SELECT count(*) AS n FROM inbound_messages WHERE ${cond}`).get(...params) as { n: number }).n;
  const rows = sqlite
    .query(
      `SELECT id, from_phone AS fromPhone, body, received_at AS receivedAt, sim_number AS simNumber, recipient
         FROM inbound_messages WHERE ${cond} ORDER BY received_at DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(...params, limit, offset) as SmsgateInboxRow[];
  return { rows, total };
}
