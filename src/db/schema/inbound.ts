import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { contacts } from "./contacts";

/**
 * Texts the account's phones received: from a recipe
 * (`POST /v1/messages/<KEY>/inbound`) or SMSGate's `sms:received`. Always linked to the account's
 * contact for the sender's number (created when unknown); deleting the contact deletes them.
 */
export const inboundMessages = sqliteTable(
  "inbound_messages",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    contactId: text("contact_id")
      .notNull()
      .references(() => contacts.id, { onDelete: "cascade" }),
    /** E.164. */
    fromPhone: text("from_phone").notNull(),
    body: text("body").notNull(),
    /** When the phone received it (ISO, from the phone's report). */
    receivedAt: text("received_at").notNull(),
    deviceId: text("device_id"),
    /** The phone's own id for the text: repeats of one (account, device, externalId) are stored once. */
    externalId: text("external_id"),
    /** "opt-out" | "opt-in" | "help" when the text was one of the account's keywords. Migration 0010. */
    keyword: text("keyword"),
    /** When the owner marked the conversation read; null = unread. */
    readAt: text("read_at"),
    /** When Textwire stored it. */
    createdAt: text("created_at").notNull(),
    /**
     * A text the phone sent again because it was asked for its history (an SMSGate inbox export):
     * stored and shown, but it took no action — no keyword, no reply, no automation stop, born
     * read. Migration 0037.
     */
    history: integer("history", { mode: "boolean" }).notNull().default(false),
    /** The SIM slot (1-3) and the phone's own number it arrived on, as the phone reported them (migration 0052). */
    simNumber: integer("sim_number"),
    recipient: text("recipient"),
  },
  (t) => [
    index("inbound_account_created_idx").on(t.accountId, t.createdAt),
    index("inbound_contact_received_idx").on(t.contactId, t.receivedAt),
    uniqueIndex("inbound_external_idx")
      .on(t.accountId, sql`ifnull(${t.deviceId}, '')`, t.externalId)
      .where(sql`${t.externalId} IS NOT NULL`),
    index("inbound_unread_idx").on(t.contactId).where(sql`${t.readAt} IS NULL`),
  ],
);
