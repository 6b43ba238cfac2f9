/**
 * The counts behind GET /v1/contacts/analytics: contacts created in a window (optionally of one
 * form) by status, the mean time to a first response, and per form. The service turns them into rates.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { ContactRow } from "./index";

export interface ContactWindowCounts {
  byStatus: Array<{ status: ContactRow["status"]; n: number }>;
  /** Mean seconds from creation to lastResponseAt over those with one (null: none), and how many. */
  response: { s: number | null; n: number };
  byForm: Array<{ formId: string; formName: string; contacts: number; converted: number }>;
}

export function contactWindowCounts(sqlite: Database, accountId: string, fromIso: string, toIso: string, formId?: string): ContactWindowCounts {
  const conds = ["c.account_id = ?", "c.created_at >= ?", "c.created_at <= ?"];
  const params: SQLQueryBindings[] = [accountId, fromIso, toIso];
  if (formId) conds.push("c.form_id = ?"), params.push(formId);
  const where = conds.join(" AND ");
  const byStatus = sqlite.query(`SELECT c.status AS status, count(*) AS n FROM contacts c WHERE ${where} GROUP BY c.status`).all(...params) as ContactWindowCounts["byStatus"];
  const response = sqlite
    .query(`SELECT avg((julianday(c.last_response_at) - julianday(c.created_at)) * 86400.0) AS s, count(*) AS n FROM contacts c WHERE ${where} AND c.last_response_at IS NOT NULL`)
    .get(...params) as ContactWindowCounts["response"];
  const byForm = sqlite
    .query(
      `SELECT c.form_id AS formId, f.name AS formName, count(*) AS contacts, sum(c.status = 'converted') AS converted
       FROM contacts c JOIN forms f ON f.id = c.form_id WHERE ${where} GROUP BY c.form_id`,
    )
    .all(...params) as ContactWindowCounts["byForm"];
  return { byStatus, response, byForm };
}

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
