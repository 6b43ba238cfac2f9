/**
 * Per-form figures for the forms list (GET /v1/forms?counts=true): texts queued and sent,
 * contacts and converted contacts, in two grouped queries for a whole page of forms instead of
 * one GET /v1/forms/{id}/stats per form (which the dashboard's list would otherwise need).
 */
import type { Database } from "bun:sqlite";

export interface FormCounts {
  /** Messages the form created (every state). */
  messages: number;
  messagesSent: number;
  contacts: number;
  converted: number;
  /** converted ÷ contacts × 100, one decimal (as GET /v1/contacts/analytics). */
  conversionRate: number;
}

const EMPTY: FormCounts = { messages: 0, messagesSent: 0, contacts: 0, converted: 0, conversionRate: 0 };

export function formCounts(sqlite: Database, formIds: string[]): Map<string, FormCounts> {
  const out = new Map<string, FormCounts>(formIds.map((id) => [id, { ...EMPTY }]));
  if (formIds.length === 0) return out;
  const marks = formIds.map(() => "?").join(", ");
  const msgs = sqlite
    .query(`SELECT form_id AS formId, count(*) AS n, coalesce(sum(status = 'sent'), 0) AS sent FROM messages WHERE form_id IN (${marks}) GROUP BY form_id`)
    .all(...formIds) as Array<{ formId: string; n: number; sent: number }>;
  for (const r of msgs) Object.assign(out.get(r.formId)!, { messages: r.n, messagesSent: r.sent });
  const contacts = sqlite
    .query(`SELECT form_id AS formId, count(*) AS n, coalesce(sum(status = 'converted'), 0) AS converted FROM contacts WHERE form_id IN (${marks}) GROUP BY form_id`)
    .all(...formIds) as Array<{ formId: string; n: number; converted: number }>;
  for (const r of contacts) {
    Object.assign(out.get(r.formId)!, { contacts: r.n, converted: r.converted, conversionRate: r.n === 0 ? 0 : Math.round((r.converted / r.n) * 1000) / 10 });
  }
  return out;
}
