/** Storage of per-account settings (one JSON row per account that changed any). */
import type { Database } from "bun:sqlite";
import type { accountSettings } from "../schema";
import { parseStoredSettings, type StoredAccountSettings } from "../../domain/account-settings";

/** The account's settings as stored, parsed (what does not check reads as unset: domain/account-settings.ts). */
export type AccountSettingsRow = Omit<typeof accountSettings.$inferSelect, "settings"> & { settings: StoredAccountSettings };

export function findAccountSettings(sqlite: Database, accountId: string): AccountSettingsRow | null {
  const r = sqlite
    .query("SELECT account_id AS accountId, settings, updated_at AS updatedAt FROM account_settings WHERE account_id = ?1")
    .get(accountId) as typeof accountSettings.$inferSelect | null;
  return r ? { ...r, settings: parseStoredSettings(r.settings) } : null;
}

export function upsertAccountSettings(sqlite: Database, row: AccountSettingsRow): void {
  sqlite
    .query(
      `INSERT INTO account_settings (account_id, settings, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
    )
    .run(row.accountId, JSON.stringify(row.settings), row.updatedAt);
}
