/**
 * Per-form figures for the forms list (GET /v1/forms?counts=true): texts queued and sent,
 * contacts and converted contacts, in two grouped queries for a whole page of forms instead of
 * one GET /v1/forms/{id}/stats per form (which the dashboard's list would otherwise need).
 */
import type { Db } from "../db/open";
import { formTallies } from "../db/stores/forms";

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

export function formCounts(db: Db, accountId: string, formIds: string[]): Map<string, FormCounts> {
  const out = new Map<string, FormCounts>(formIds.map((id) => [id, { ...EMPTY }]));
  const { messages, contacts } = formTallies(db, accountId, formIds);
  for (const r of messages) Object.assign(out.get(r.formId)!, { messages: r.n, messagesSent: r.sent });
  for (const r of contacts) {
    Object.assign(out.get(r.formId)!, { contacts: r.n, converted: r.converted, conversionRate: r.n === 0 ? 0 : Math.round((r.converted / r.n) * 1000) / 10 });
  }
  return out;
}
