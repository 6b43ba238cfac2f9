import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const forms = sqliteTable(
  "forms",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** lower(name): names are unique per account, case-insensitively. */
    nameKey: text("name_key").notNull(),
    description: text("description"),
    messageTemplate: text("message_template").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    /** JSON array of field definitions. */
    fields: text("fields").notNull(),
    /** JSON object of settings. */
    settings: text("settings").notNull().default("{}"),
    /** The webhook address's secret part; null = the form id (never rotated). Migration 0006. */
    webhookToken: text("webhook_token"),
    /** Honeypot submissions refused so far (flushed from memory every few seconds). */
    spamBlocked: integer("spam_blocked").notNull().default(0),
    /** The last post to the old plain-HTTP address once HTTPS is on (migration 0028; flushed from memory). */
    plainHttpPostAt: text("plain_http_post_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("forms_account_name_idx").on(t.accountId, t.nameKey),
    uniqueIndex("forms_webhook_token_idx").on(t.webhookToken),
    index("forms_account_created_idx").on(t.accountId, t.createdAt),
  ],
);

/** One row per accepted webhook submission: statistics, and what the visitor sent (migration 0044). */
export const submissions = sqliteTable(
  "submissions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    formId: text("form_id")
      .notNull()
      .references(() => forms.id, { onDelete: "cascade" }),
    contactId: text("contact_id").notNull(),
    /** null: accepted without a message (suppressed: recipient limit, opted out, no consent). */
    messageId: text("message_id"),
    newContact: integer("new_contact", { mode: "boolean" }).notNull(),
    createdAt: text("created_at").notNull(),
    /** JSON object of the posted values by field name (null: accepted before migration 0044). */
    formValues: text("form_values"),
    /** Why no text was queued: opted-out, no-consent, recipient-limit; null otherwise. */
    suppressed: text("suppressed"),
    /** When someone on the team opened it (the inbox's unread mark). */
    readAt: text("read_at"),
  },
  (t) => [
    index("submissions_contact_idx").on(t.contactId),
    // (form, created) serves form stats' residue and form deletes; (account, created) had no
    // reader and went in migration 0024 (one b-tree fewer per applied submission).
    index("submissions_form_created_idx").on(t.formId, t.createdAt),
  ],
);

/** Idempotency-Key replay store: the first answer, byte for byte, for 24 hours. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    formId: text("form_id")
      .notNull()
      .references(() => forms.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    status: integer("status").notNull(),
    body: text("body").notNull(),
    /** SHA-256 of the first request's body: a reuse with another body is refused (null: before 0006). */
    bodyHash: text("body_hash"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.formId, t.key] }), index("idempotency_created_idx").on(t.createdAt)],
);
