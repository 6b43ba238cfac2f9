/**
 * The rows of the one sending path (docs/api-decisions.md, "The house, round two: one sending
 * path"): how a new queued message row looks, its queue entry, and the only calls in src/services
 * that insert into `messages` outside the form path (whose texts, admitted by the webhook's job,
 * the intake applier writes in its batch through applied.ts). test/unit/sending-home.test.ts
 * keeps it so.
 */
import type { Database } from "bun:sqlite";
import { insertMessageRow } from "../../db/stores/messages/suppression";
import { insertTemplateMessage, type TemplateMessage } from "../../db/stores/broadcasts";
import type { MessageRow } from "../../db/stores/messages";
import { recipientName } from "../../domain/contact-name";
import { smsInfo } from "../../domain/sms-encoding";
import { iso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { PRIORITY_RANK, type Priority, type QueueEntry } from "../../queue/priority-queue";

export type { QueueEntry };

/**
 * A new message written outside a form (a manual message, a keyword reply, a team notice, an
 * SMSGate client's text): queued, never leased, with no form, webhook data or template;
 * `created_at` is also its `updated_at`.
 */
export function newQueuedRow(
  f: Pick<MessageRow, "account_id" | "contact_id" | "content" | "recipient_phone" | "recipient_name" | "priority" | "scheduled_for" | "metadata" | "seq" | "created_at"> &
    Partial<Pick<MessageRow, "max_attempts" | "created_by">>,
): MessageRow {
  return {
    id: newId(),
    form_id: null,
    form_name: null,
    status: "queued",
    priority_rank: PRIORITY_RANK[f.priority],
    webhook_data: null,
    template_used: null,
    sent_at: null,
    failure_reason: null,
    retry_count: 0,
    lease_token: null,
    lease_expires_at: null,
    lease_device_id: null,
    lease_expiries: 0,
    last_lease_token: null,
    max_attempts: null,
    broadcast_id: null,
    created_by: null,
    cancelled_by: null,
    updated_at: f.created_at,
    ...f,
  };
}

/** The queue entry of a queued message row. */
export function queueEntryOf(r: Pick<MessageRow, "id" | "account_id" | "priority" | "scheduled_for" | "seq">): QueueEntry {
  return { id: r.id, accountId: r.account_id, priority: r.priority, scheduledFor: Date.parse(r.scheduled_for), seq: r.seq };
}

/** A broadcast's or an automation step's message: a template rendered for one contact. */
export function templateMessageOf(
  m: { id: string; priority: Priority; scheduledFor: number; seq: number },
  t: {
    accountId: string;
    contact: { id: string; phoneNumber: string; firstName: string | null; lastName: string | null };
    rendered: { content: string; variablesUsed: string[] };
    template: string;
    origin: Record<string, unknown>;
    maxAttempts: number | null;
    broadcastId: string | null;
    createdAt: string;
  },
): TemplateMessage {
  const info = smsInfo(t.rendered.content);
  return {
    id: m.id,
    accountId: t.accountId,
    contactId: t.contact.id,
    content: t.rendered.content,
    recipientPhone: t.contact.phoneNumber,
    recipientName: recipientName(t.contact),
    priority: m.priority,
    priorityRank: PRIORITY_RANK[m.priority],
    templateUsed: t.template,
    scheduledFor: iso(m.scheduledFor),
    metadata: JSON.stringify({
      ...t.origin,
      messageLength: t.rendered.content.length,
      variablesUsed: t.rendered.variablesUsed,
      encoding: info.encoding,
      segments: info.segments,
    }),
    seq: m.seq,
    maxAttempts: t.maxAttempts,
    broadcastId: t.broadcastId,
    createdAt: t.createdAt,
  };
}

/** Inside the caller's transaction: writes a row made by newQueuedRow (and counts it). */
export function writeRow(sqlite: Database, row: MessageRow): void {
  insertMessageRow(sqlite, row);
}

/** Inside the caller's transaction: writes a template message (and counts it). */
export function writeTemplateRow(sqlite: Database, m: TemplateMessage): void {
  insertTemplateMessage(sqlite, m);
}
