/**
 * Store for devices, registration tokens, per-day device counts and applied webhook event ids.
 * Plain functions over the SQLite handle; rows are typed from the drizzle schema.
 */
import type { Database } from "bun:sqlite";
import type { devices, deviceRegistrationTokens, inboxExports } from "../schema/devices";
import { jsonArray, jsonObject } from "./row";
import type { LimitsOverride } from "../../domain/sending-budget";

/** A phone's own limits and its SIMs' (PATCH /v1/devices/<id> `{limits, sims}`); stored as null when it sets none. */
export interface DeviceLimitsDoc {
  limits: LimitsOverride;
  sims: Array<{ slot: number; limits: LimitsOverride }>;
}

/** A phone: its SIM cards as the app reported them (none when unreadable) and its own limits, parsed. */
export type DeviceRow = Omit<typeof devices.$inferSelect, "simCards" | "sendingLimits"> & { simCards: unknown[]; sendingLimits: DeviceLimitsDoc };

type StoredDevice = typeof devices.$inferSelect;

/** The stored limits, read leniently: what is not a limits object or a list of SIMs reads as none. */
function limitsOf(text: string | null): DeviceLimitsDoc {
  const v = jsonObject(text) as Partial<DeviceLimitsDoc>;
  return { limits: v.limits && typeof v.limits === "object" ? v.limits : {}, sims: Array.isArray(v.sims) ? v.sims : [] };
}

/** The limits as stored: null when they set nothing. */
const storedLimits = (d: DeviceLimitsDoc): string | null => (d.sims.length || Object.keys(d.limits).length ? JSON.stringify(d) : null);

const deviceOf = (r: StoredDevice): DeviceRow => ({ ...r, simCards: jsonArray<unknown>(r.simCards), sendingLimits: limitsOf(r.sendingLimits) });
export type RegistrationTokenRow = typeof deviceRegistrationTokens.$inferSelect;

const DEVICE_COLS = `id, account_id AS accountId, kind, external_id AS externalId, name, token_hash AS tokenHash,
  signing_key AS signingKey, push_token AS pushToken, sim_cards AS simCards, app_version AS appVersion,
  last_seen_at AS lastSeenAt, last_ip AS lastIp, battery, send_rate_per_minute AS sendRatePerMinute, sending_limits AS sendingLimits,
  created_at AS createdAt, updated_at AS updatedAt`;

export function insertDevice(db: Database, d: DeviceRow): void {
  db.query(
    `INSERT INTO devices (id, account_id, kind, external_id, name, token_hash, signing_key, push_token, sim_cards, app_version,
       last_seen_at, last_ip, battery, send_rate_per_minute, created_at, updated_at, sending_limits)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)`,
  ).run(d.id, d.accountId, d.kind, d.externalId, d.name, d.tokenHash, d.signingKey, d.pushToken, JSON.stringify(d.simCards), d.appVersion,
    d.lastSeenAt, d.lastIp, d.battery, d.sendRatePerMinute, d.createdAt, d.updatedAt, storedLimits(d.sendingLimits));
}

export function findDeviceByTokenHash(db: Database, hash: string): DeviceRow | null {
  const r = db.query(`SELECT ${DEVICE_COLS} FROM devices WHERE token_hash = ?1`).get(hash) as StoredDevice | null;
  return r ? deviceOf(r) : null;
}

export function findDevice(db: Database, id: string): DeviceRow | null {
  const r = db.query(`SELECT ${DEVICE_COLS} FROM devices WHERE id = ?1`).get(id) as StoredDevice | null;
  return r ? deviceOf(r) : null;
}

export function findDeviceByExternalId(db: Database, accountId: string, externalId: string): DeviceRow | null {
  const r = db.query(`SELECT ${DEVICE_COLS} FROM devices WHERE account_id = ?1 AND external_id = ?2`).get(accountId, externalId) as StoredDevice | null;
  return r ? deviceOf(r) : null;
}

export function listDevices(db: Database, accountId?: string): DeviceRow[] {
  const rows =
    accountId === undefined
      ? (db.query(`SELECT ${DEVICE_COLS} FROM devices ORDER BY created_at`).all() as StoredDevice[])
      : (db.query(`SELECT ${DEVICE_COLS} FROM devices WHERE account_id = ?1 ORDER BY created_at, id`).all(accountId) as StoredDevice[]);
  return rows.map(deviceOf);
}

/** Updates the named columns (camelCase keys of DeviceRow). */
export function updateDevice(db: Database, id: string, patch: Partial<DeviceRow>): void {
  const cols: Record<string, string> = {
    name: "name", pushToken: "push_token", simCards: "sim_cards", appVersion: "app_version", lastSeenAt: "last_seen_at",
    lastIp: "last_ip", battery: "battery", sendRatePerMinute: "send_rate_per_minute", sendingLimits: "sending_limits", updatedAt: "updated_at",
  };
  const sets: string[] = [];
  const params: Array<string | number | null> = [];
  for (const [k, v] of Object.entries(patch)) {
    const c = cols[k];
    if (!c) continue;
    sets.push(`${c} = ?`);
    params.push(k === "simCards" ? JSON.stringify(v) : k === "sendingLimits" ? storedLimits(v as DeviceLimitsDoc) : (v as string | number | null));
  }
  if (sets.length === 0) return;
  db.query(`UPDATE devices SET ${sets.join(", ")} WHERE id = ?`).run(...params, id);
}

export function deleteDevice(db: Database, accountId: string, id: string): boolean {
  return db.query("DELETE FROM devices WHERE id = ?1 AND account_id = ?2").run(id, accountId).changes > 0;
}

export function insertRegistrationToken(db: Database, t: RegistrationTokenRow): void {
  db.query(
    `INSERT INTO device_registration_tokens (id, account_id, token_hash, reusable, expires_at, used_at, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6)`,
  ).run(t.id, t.accountId, t.tokenHash, t.reusable ? 1 : 0, t.expiresAt, t.createdAt);
}

export function findRegistrationToken(db: Database, hash: string): RegistrationTokenRow | null {
  const r = db
    .query(
      `SELECT id, account_id AS accountId, token_hash AS tokenHash, reusable, expires_at AS expiresAt, used_at AS usedAt, created_at AS createdAt
       FROM device_registration_tokens WHERE token_hash = ?1`,
    )
    .get(hash) as (Omit<RegistrationTokenRow, "reusable"> & { reusable: number }) | null;
  return r ? { ...r, reusable: r.reusable === 1 } : null;
}

/** Marks a one-time token used; false when it already was (a concurrent registration won). */
export function markRegistrationTokenUsed(db: Database, id: string, at: string): boolean {
  return db.query("UPDATE device_registration_tokens SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL").run(id, at).changes > 0;
}

export function countDeviceDay(db: Database, deviceId: string, day: string, result: "sent" | "failed"): void {
  db.query(
    `INSERT INTO device_daily_counts (device_id, day, sent, failed) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (device_id, day) DO UPDATE SET sent = sent + excluded.sent, failed = failed + excluded.failed`,
  ).run(deviceId, day, result === "sent" ? 1 : 0, result === "failed" ? 1 : 0);
}

export function deviceDayCounts(db: Database, accountId: string, day: string): Map<string, { sent: number; failed: number }> {
  const rows = db
    .query(
      `SELECT c.device_id AS id, c.sent, c.failed FROM device_daily_counts c JOIN devices d ON d.id = c.device_id
       WHERE d.account_id = ?1 AND c.day = ?2`,
    )
    .all(accountId, day) as Array<{ id: string; sent: number; failed: number }>;
  return new Map(rows.map((r) => [r.id, { sent: r.sent, failed: r.failed }]));
}

/** Records a webhook event id; false when this device's event was already applied. */
export function recordCallbackEvent(db: Database, deviceId: string, eventId: string, at: string): boolean {
  return db.query("INSERT OR IGNORE INTO device_webhook_events (device_id, event_id, received_at) VALUES (?1, ?2, ?3)").run(deviceId, eventId, at).changes > 0;
}

export function pruneCallbackEvents(db: Database, before: string): number {
  return db.query("DELETE FROM device_webhook_events WHERE received_at < ?1").run(before).changes;
}

export function accountTimeZone(db: Database, accountId: string): string | null {
  const r = db.query("SELECT time_zone AS tz FROM accounts WHERE id = ?1").get(accountId) as { tz: string | null } | null;
  return r?.tz ?? null;
}

export function setAccountTimeZone(db: Database, accountId: string, tz: string | null): boolean {
  return db.query("UPDATE accounts SET time_zone = ?2 WHERE id = ?1").run(accountId, tz).changes > 0;
}

// Read from the messages table: its statement lives in stores/messages/ (docs/api-decisions.md,
// "The house, round two: stores by table").
export { leaseHolders } from "./messages";

/**
 * Oldest scheduled_for among due queued messages (all accounts), or null: the first entry of each
 * account's queued range of (account_id, status, scheduled_for), one probe per account.
 */
export const OLDEST_DUE_SQL = `SELECT MIN((SELECT scheduled_for FROM messages WHERE account_id = a.id AND status = 'queued' ORDER BY scheduled_for LIMIT 1)) AS t
  FROM accounts a`;
export function oldestDue(db: Database, nowIso: string): string | null {
  const { t } = db.query(OLDEST_DUE_SQL).get() as { t: string | null };
  return t !== null && t <= nowIso ? t : null;
}

/**
 * Records an inbox export asked of a phone (MessagesExportRequested), and forgets the phone's
 * requests older than `keepAfterIso`: the table stays a few rows per phone.
 */
export function insertInboxExport(db: Database, e: { accountId: string; deviceId: string; since: string; until: string; requestedAt: string }, keepAfterIso: string): void {
  db.query("DELETE FROM inbox_exports WHERE device_id = ?1 AND requested_at < ?2").run(e.deviceId, keepAfterIso);
  db.query("INSERT INTO inbox_exports (account_id, device_id, since, until, requested_at) VALUES (?1, ?2, ?3, ?4, ?5)").run(e.accountId, e.deviceId, e.since, e.until, e.requestedAt);
}

/** Forgets an inbox export that never reached its phone (asked at `requestedAt`). */
export function deleteInboxExport(db: Database, deviceId: string, requestedAt: string): void {
  db.query("DELETE FROM inbox_exports WHERE device_id = ?1 AND requested_at = ?2").run(deviceId, requestedAt);
}

/** The inbox exports asked of the account's phone since `afterIso` (ISO times). */
export type InboxExportRow = Pick<typeof inboxExports.$inferSelect, "since" | "until" | "requestedAt">;

export function listInboxExports(db: Database, accountId: string, deviceId: string, afterIso: string): InboxExportRow[] {
  return db
    .query("SELECT since, until, requested_at AS requestedAt FROM inbox_exports WHERE device_id = ?2 AND account_id = ?1 AND requested_at >= ?3")
    .all(accountId, deviceId, afterIso) as InboxExportRow[];
}
