import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Per-account settings set through `PUT /v1/account/settings` (keyword lists and the
 * replies to them). Only the values the owner set are stored (JSON); the rest are defaults,
 * so a default that names the account follows a rename.
 */
export const accountSettings = sqliteTable("account_settings", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  settings: text("settings").notNull().default("{}"),
  updatedAt: text("updated_at").notNull(),
});
