import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { forms } from "./forms";

export const contacts = sqliteTable(
  "contacts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** E.164, unique per account. */
    phoneNumber: text("phone_number").notNull(),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    status: text("status", { enum: ["new", "contacted", "responded", "converted"] }).notNull().default("new"),
    /** The form that created the contact; deleting the form deletes its contacts. Null for API-created contacts. */
    formId: text("form_id").references(() => forms.id, { onDelete: "cascade" }),
    /** JSON object of string values. */
    customFields: text("custom_fields").notNull().default("{}"),
    /** JSON array of strings (also indexed row-wise in contact_tags). */
    tags: text("tags").notNull().default("[]"),
    lastContactedAt: text("last_contacted_at"),
    lastResponseAt: text("last_response_at"),
    messageCount: integer("message_count").notNull().default(0),
    source: text("source"),
    notes: text("notes"),
    /** lower-cased names, e-mail and phone digits: what `search` matches. */
    searchText: text("search_text").notNull().default(""),
    /** Replied STOP (or was set opted out): never texted again until opted back in. Migration 0010. */
    optedOut: integer("opted_out", { mode: "boolean" }).notNull().default(false),
    optedOutAt: text("opted_out_at"),
    /** JSON {source: webhook|import|manual|api|inbound, formId?, at, ipAddress?}: how the contact entered. */
    consent: text("consent"),
    /** The contact's own IANA time zone (migration 0040); null = the form's. */
    timeZone: text("time_zone"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("contacts_account_phone_idx").on(t.accountId, t.phoneNumber),
    index("contacts_account_created_idx").on(t.accountId, t.createdAt),
    index("contacts_account_status_created_idx").on(t.accountId, t.status, t.createdAt),
    index("contacts_account_updated_idx").on(t.accountId, t.updatedAt),
    index("contacts_account_first_idx").on(t.accountId, t.firstName),
    index("contacts_account_last_idx").on(t.accountId, t.lastName),
    index("contacts_form_created_idx").on(t.formId, t.createdAt),
    // The Forms page's contacts and converted per form, from the index alone (migration 0035).
    index("contacts_form_status_idx").on(t.formId, t.status),
    index("contacts_account_opted_out_idx").on(t.accountId, t.optedOut),
    // Analytics replyRate: contacts texted since a date (migration 0018).
    index("contacts_account_contacted_idx").on(t.accountId, t.lastContactedAt, t.formId, t.id).where(sql`${t.lastContactedAt} IS NOT NULL`),
  ],
);

/**
 * A contact's tags, one row each (migration 0020): derived from contacts.tags by triggers on
 * contacts (no code writes here), keyed on the contact's rowid. WITHOUT ROWID, primary key
 * (account_id, tag, contact_rowid): a tag's contacts in rowid order, and a contact's tag in one
 * seek. Deleting a contact deletes its rows (trigger; a rowid cannot be a foreign key). Each row
 * carries its contact's status (migration 0025, kept by a trigger on contacts.status), so tags
 * with a status are counted here alone, from one index range per tag.
 */
export const contactTags = sqliteTable(
  "contact_tags",
  {
    accountId: text("account_id").notNull(),
    tag: text("tag").notNull(),
    /** contacts.rowid (the same rowid the search index contacts_fts uses). */
    contactRowid: integer("contact_rowid").notNull(),
    /** contacts.status of that contact. */
    status: text("status", { enum: ["new", "contacted", "responded", "converted"] }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.tag, t.contactRowid] }),
    /**
     * A tag's contacts with one status, in rowid order (the key's contact_rowid ends each entry).
     * Status before tag: a list by tag alone cannot use it and reads the key, in rowid order.
     */
    index("contact_tags_status_idx").on(t.accountId, t.status, t.tag),
  ],
);

/**
 * One row per contact with messages in either direction (migration 0010): the newest one's time
 * and the received texts not yet marked read. Kept by triggers on messages and inbound_messages;
 * `POST /v1/conversations/<contactId>/read` zeroes unread_count.
 */
export const conversations = sqliteTable(
  "conversations",
  {
    contactId: text("contact_id")
      .primaryKey()
      .references(() => contacts.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    lastMessageAt: text("last_message_at").notNull(),
    unreadCount: integer("unread_count").notNull().default(0),
  },
  (t) => [
    index("conversations_account_last_idx").on(t.accountId, t.lastMessageAt),
    // The unread total reads only conversations with something unread (migration 0035).
    index("conversations_account_unread_idx").on(t.accountId, t.unreadCount).where(sql`${t.unreadCount} > 0`),
  ],
);

/**
 * Contacts whose text is not in the search index contacts_fts yet (migration 0023): a new
 * contact's rowid lands here (trigger), and the intake applier Worker indexes pending rows off the
 * write path (src/db/stores/contacts/search-pending.ts). Searches read these rows too, so they stay exact.
 */
export const contactsFtsPending = sqliteTable("contacts_fts_pending", {
  /** contacts.rowid. */
  contactRowid: integer("contact_rowid").primaryKey(),
});
