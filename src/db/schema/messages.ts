import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { forms } from "./forms";
import { contacts } from "./contacts";
import { MESSAGE_STATUSES, PRIORITIES } from "../../domain/statuses";
import { broadcasts } from "./broadcasts";

/**
 * sentAt − createdAt in ms (null until sent), as the rollup triggers and rebuild compute it
 * (migration 0015); src/db/derived-counts.ts computes the same in JS.
 */
export const RESPONSE_MS_SQL = "CAST(round((julianday(sent_at) - julianday(created_at)) * 86400000.0) AS INTEGER)";

/** scheduled_for as epoch ms, as indexed for the boot read (migration 0017): spell it exactly so. */
export const QUEUED_SCHEDULED_MS_SQL = "CAST(round((julianday(scheduled_for) - 2440587.5) * 86400000.0) AS INTEGER)";

export const messages = sqliteTable(
  "messages",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Null for manual messages (POST /messages/<KEY>). */
    formId: text("form_id").references(() => forms.id, { onDelete: "cascade" }),
    formName: text("form_name"),
    contactId: text("contact_id").references(() => contacts.id, { onDelete: "cascade" }),
    content: text("content").notNull(),
    recipientPhone: text("recipient_phone").notNull(),
    recipientName: text("recipient_name"),
    status: text("status", { enum: MESSAGE_STATUSES }).notNull().default("queued"),
    priority: text("priority", { enum: PRIORITIES }).notNull().default("normal"),
    /** urgent 0, high 1, normal 2, low 3: sorts by priority with an index. */
    priorityRank: integer("priority_rank").notNull().default(2),
    webhookData: text("webhook_data"),
    templateUsed: text("template_used"),
    scheduledFor: text("scheduled_for").notNull(),
    sentAt: text("sent_at"),
    failureReason: text("failure_reason"),
    retryCount: integer("retry_count").notNull().default(0),
    metadata: text("metadata").notNull().default("{}"),
    /** Creation order within the queue (ties on priority and scheduledFor). */
    seq: integer("seq").notNull(),
    leaseToken: text("lease_token"),
    leaseExpiresAt: text("lease_expires_at"),
    leaseDeviceId: text("lease_device_id"),
    /** Leases that expired with no report; at --max-lease-attempts the message fails with "no-report". */
    leaseExpiries: integer("lease_expiries").notNull().default(0),
    /** The latest lease's token, kept after the lease ends: a report with an older one is a LEASE_CONFLICT. */
    lastLeaseToken: text("last_lease_token"),
    /** A manual message's own attempt count; null = the form's settings.maxAttempts, or 2 (retry-policy.ts). */
    maxAttempts: integer("max_attempts"),
    /** The broadcast that created the message, if any. */
    broadcastId: text("broadcast_id").references(() => broadcasts.id, { onDelete: "set null" }),
    /** Who sent a manual text: JSON {type: "user", id, name} or {type: "key", id}; null otherwise. */
    createdBy: text("created_by"),
    /** Who cancelled the message (same shape as createdBy); null when nobody did. */
    cancelledBy: text("cancelled_by"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    /** Per-recipient limit and duplicate window of public forms (migration 0006). */
    index("messages_account_recipient_created_idx").on(t.accountId, t.recipientPhone, t.createdAt),
    // Whole-account pages by created or scheduled time merge the four status ranges of these two
    // (src/db/stores/messages/list.ts; migration 0019 dropped (account_id, created_at), (account_id,
    // scheduled_for) and (scheduled_for) WHERE queued: fewer entries per inserted message).
    index("messages_account_status_created_idx").on(t.accountId, t.status, t.createdAt),
    index("messages_account_status_scheduled_idx").on(t.accountId, t.status, t.scheduledFor),
    index("messages_account_priority_idx").on(t.accountId, t.priorityRank, t.createdAt),
    index("messages_account_sent_idx").on(t.accountId, t.sentAt),
    index("messages_form_created_idx").on(t.formId, t.createdAt),
    index("messages_form_scheduled_idx").on(t.formId, t.scheduledFor),
    index("messages_contact_created_idx").on(t.contactId, t.createdAt),
    // Boot reads max(seq) (src/lib/seq.ts): one step down this index (migration 0018).
    index("messages_seq_idx").on(t.seq),
    // Partial (migration 0015): only leased rows — the lease sweep and reload (a lease's token and
    // expiry are set and cleared together, so its queries say `lease_expires_at IS NOT NULL`).
    index("messages_leased_idx").on(t.leaseExpiresAt).where(sql`status = 'queued' AND lease_expires_at IS NOT NULL`),
    index("messages_broadcast_status_idx").on(t.broadcastId, t.status).where(sql`broadcast_id IS NOT NULL`),
    /** Queued messages in queue order per account, covering the boot read (migration 0017). */
    index("messages_queued_order_idx").on(t.accountId, t.priorityRank, sql.raw(QUEUED_SCHEDULED_MS_SQL), t.seq, t.id).where(sql`${t.status} = 'queued'`),
  ],
);

/**
 * Messages per account, status and priority: inserts recorded by the writers and flushed once per
 * batch (src/db/derived-counts.ts), status changes and deletes by triggers (migration 0001). The
 * list's summary for a whole account (or one priority) is then one tiny read, not a count.
 */
export const messageCounts = sqliteTable(
  "message_counts",
  {
    accountId: text("account_id").notNull(),
    status: text("status").notNull(),
    priorityRank: integer("priority_rank").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.status, t.priorityRank] })],
);
