/** Storage of the SMSGate settings document (one JSON row per account that set any). */
import type { Database } from "bun:sqlite";
import type { smsgateSettings } from "../schema";

export type SmsgateSettingsRow = typeof smsgateSettings.$inferSelect;

export function findSmsgateSettings(sqlite: Database, accountId: string): SmsgateSettingsRow | null {
  return (sqlite
    .query("SELECT account_id AS accountId, settings, updated_at AS updatedAt FROM smsgate_settings WHERE account_id = ?1")
    .get(accountId) as SmsgateSettingsRow | null) ?? null;
}

export function upsertSmsgateSettings(sqlite: Database, row: SmsgateSettingsRow): void {
  sqlite
    .query(
      `INSERT INTO smsgate_settings (account_id, settings, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
    )
    .run(row.accountId, row.settings, row.updatedAt);
}
