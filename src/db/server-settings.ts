/** Storage of server-wide settings (migration 0026): one text value per key. */
import type { Database } from "bun:sqlite";
import type { serverSettings } from "./schema";

export type ServerSettingRow = typeof serverSettings.$inferSelect;

/** The replica address an operator saved from the dashboard. */
export const REPLICATION_URL_KEY = "replication.url";
/** When Litestream last started (its start-up write: src/services/replication.ts). */
export const REPLICATION_STARTED_KEY = "replication.started";

/** The address forms and phones must use (Settings → Server address); --public-url wins. */
export const PUBLIC_URL_KEY = "server.public_url";
/** Scheduled backups set from the dashboard (JSON: dir, everyMs, keep); --backup-dir wins. */
export const BACKUP_SCHEDULE_KEY = "backup.schedule";

export function findServerSetting(sqlite: Database, key: string): ServerSettingRow | null {
  return sqlite.query("SELECT key, value, updated_at AS updatedAt FROM server_settings WHERE key = ?1").get(key) as ServerSettingRow | null;
}

/**
 * A setting stored as JSON, parsed, with its updated_at; null when unset or not valid JSON (the
 * caller checks the shape it expects).
 */
export function findServerSettingJson(sqlite: Database, key: string): { value: unknown; updatedAt: string } | null {
  const row = findServerSetting(sqlite, key);
  if (!row) return null;
  try {
    return { value: JSON.parse(row.value) as unknown, updatedAt: row.updatedAt };
  } catch {
    return null;
  }
}

export function upsertServerSetting(sqlite: Database, row: ServerSettingRow): void {
  sqlite
    .query("INSERT INTO server_settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at")
    .run(row.key, row.value, row.updatedAt);
}

export function deleteServerSetting(sqlite: Database, key: string): void {
  sqlite.query("DELETE FROM server_settings WHERE key = ?1").run(key);
}

/** Accounts holding a live operator key: who hears of server-wide trouble (replication.stalled). */
export function listOperatorAccountIds(sqlite: Database): string[] {
  return (sqlite.query("SELECT DISTINCT account_id AS id FROM api_keys WHERE operator = 1 AND revoked_at IS NULL ORDER BY account_id").all() as Array<{ id: string }>).map((r) => r.id);
}
