/** Storage of the SMSGate settings document (one JSON row per account that set any). */
import type { Database } from "bun:sqlite";
import type { smsgateSettings } from "../schema";
import { parseStoredSmsgateSettings, type SmsgateSettings } from "../../domain/smsgate-settings";

/** The account's SMSGate settings as stored, parsed (unreadable ones as none). */
export type SmsgateSettingsRow = Omit<typeof smsgateSettings.$inferSelect, "settings"> & { settings: SmsgateSettings };

export function findSmsgateSettings(sqlite: Database, accountId: string): SmsgateSettingsRow | null {
  const r = sqlite
    .query("SELECT account_id AS accountId, settings, updated_at AS updatedAt FROM smsgate_settings WHERE account_id = ?1")
    .get(accountId) as typeof smsgateSettings.$inferSelect | null;
  return r ? { ...r, settings: parseStoredSmsgateSettings(r.settings) } : null;
}

export function upsertSmsgateSettings(sqlite: Database, row: SmsgateSettingsRow): void {
  sqlite
    .query(
      `INSERT INTO smsgate_settings (account_id, settings, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
    )
    .run(row.accountId, JSON.stringify(row.settings), row.updatedAt);
}
