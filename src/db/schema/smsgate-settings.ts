import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * The account's settings document of SMSGate's third-party API (`/3rdparty/v1/settings`), as the
 * client gave it (SMSGate's camelCase shape, unknown keys kept); the account's phones get it mapped
 * onto their own settings (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings").
 */
export const smsgateSettings = sqliteTable("smsgate_settings", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  settings: text("settings").notNull().default("{}"),
  updatedAt: text("updated_at").notNull(),
});
