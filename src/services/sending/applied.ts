/**
 * The form path's queued texts, written by the intake applier (docs/api-decisions.md, "The house,
 * round two: one sending path"). The webhook admitted each text in its request (`admit()`) and put
 * it in the in-memory queue before its commit (`Sending.queueAhead`); the applier, on its own
 * connection and in its own batch, writes the rows here. So every message insert in src/services
 * is in this folder, the form path's included (test/unit/sending-home.test.ts).
 */
import type { Database } from "bun:sqlite";
import { recordMessageInsert } from "../../db/derived-counts";
import type { IntakeApplierStore } from "../../db/stores/intake-applier";

/** One admitted form text, as the applier knows it once the contact is resolved. */
export interface AppliedText {
  messageId: string;
  accountId: string;
  formId: string;
  formName: string;
  contactId: string;
  phone: string;
  recipientName: string | null;
  /** ISO instant of the request (created_at and updated_at). */
  at: string;
  message: { content: string; priority: string; priorityRank: number; webhookData: string; template: string; scheduledFor: string; metadata: string; seq: number };
}

function values(t: AppliedText): unknown[] {
  const m = t.message;
  return [t.messageId, t.accountId, t.formId, t.formName, t.contactId, m.content, t.phone, t.recipientName, m.priority, m.priorityRank, m.webhookData, m.template, m.scheduledFor, m.metadata, m.seq, t.at, t.at];
}

function count(sqlite: Database, t: AppliedText): void {
  recordMessageInsert(sqlite, { accountId: t.accountId, formId: t.formId, contactId: t.contactId, status: "queued", priorityRank: t.message.priorityRank, createdAt: t.at, sentAt: null, failureReason: null });
}

/** Inside the applier's transaction: a chunk's texts in multi-row inserts (and counted). */
export function writeAppliedTexts(sqlite: Database, sql: Pick<IntakeApplierStore, "messageInserts">, texts: AppliedText[]): void {
  sql.messageInserts.run(texts.map(values));
  for (const t of texts) count(sqlite, t);
}

/** Inside the applier's transaction: one entry's text (the row-by-row path, and counted). */
export function writeAppliedText(sqlite: Database, sql: Pick<IntakeApplierStore, "messageInsert">, t: AppliedText): void {
  sql.messageInsert.run(...values(t));
  count(sqlite, t);
}
