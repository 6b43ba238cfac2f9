/**
 * Read-only figures the analytics service needs beyond the rollups (src/db/stores/messages/rollups.ts):
 * queries that span contacts and received texts and belong to no one entity's store.
 */
import type { Database } from "bun:sqlite";

/**
 * Of the account's contacts texted since `sinceIso` (their last text was sent then or later; one
 * form's when formId is given), how many sent a text back since then. Read from the partial index
 * of texted contacts alone (migration 0018), not every contact row.
 */
export function replyCounts(sqlite: Database, accountId: string, formId: string | null, sinceIso: string): { texted: number; replied: number } {
  return sqlite
    .query(
      `SELECT COUNT(*) AS texted, COALESCE(SUM(EXISTS (SELECT 1 FROM inbound_messages i WHERE i.contact_id = c.id AND i.received_at >= ?3)), 0) AS replied
       FROM contacts c INDEXED BY contacts_account_contacted_idx
       WHERE c.account_id = ?2 AND c.last_contacted_at IS NOT NULL AND c.last_contacted_at >= ?3 AND (?1 IS NULL OR c.form_id = ?1)`,
    )
    .get(formId, accountId, sinceIso) as { texted: number; replied: number };
}
