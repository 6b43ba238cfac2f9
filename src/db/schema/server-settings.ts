import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Server-wide settings an operator sets from the dashboard (migration 0026), one row per key; the
 * replica address is the first (docs/api-decisions.md, "Continuous replication with Litestream").
 */
export const serverSettings = sqliteTable("server_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull(),
});
