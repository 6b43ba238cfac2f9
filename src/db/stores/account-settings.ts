/** Storage of per-account settings (one JSON row per account that changed any). */
import type { Database } from "bun:sqlite";
import type { accountSettings } from "../schema";

export type AccountSettingsRow = typeof accountSettings.$inferSelect;

export function findAccountSettings(sqlite: Database, accountId: string): AccountSettingsRow | null {
  return sqlite
    .query("SELECT account_id AS accountId, settings, updated_at AS updatedAt FROM account_settings WHERE account_id = ?1")
    .get(accountId) as AccountSettingsRow | null;
}

export function upsertAccountSettings(sqlite: Database, row: AccountSettingsRow): void {
  sqlite
    .query(
      `INSERT INTO account_settings (account_id, settings, updated_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (account_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
    )
    .run(row.accountId, row.settings, row.updatedAt);
}
