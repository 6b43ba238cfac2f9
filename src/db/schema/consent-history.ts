import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { contacts } from "./contacts";

/**
 * A contact's consent history (migration 0032): one row per change of its opt-out, written by
 * src/services/opt-outs.ts alone, next to the change itself. Deleting the contact deletes it.
 */
export const consentHistory = sqliteTable(
  "consent_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    contactId: text("contact_id")
      .notNull()
      .references(() => contacts.id, { onDelete: "cascade" }),
    /** "opted_out" | "opted_in". */
    action: text("action", { enum: ["opted_out", "opted_in"] }).notNull(),
    /** How: "manual" (by hand in the dashboard or the API's opt-out/opt-in), "keyword" (a STOP/START text), "import", "api" (optedOut in a contact body). */
    source: text("source", { enum: ["manual", "keyword", "import", "api"] }).notNull(),
    /** The owner's words (required to opt back in by hand). */
    reason: text("reason"),
    /** JSON Actor {type: user|key, id, name?}: who did it; null for a text from the customer. */
    actor: text("actor"),
    at: text("at").notNull(),
  },
  (t) => [index("consent_history_contact_idx").on(t.contactId, t.id)],
);
