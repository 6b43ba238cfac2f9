import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan", { enum: ["standard", "pro", "enterprise"] }).notNull().default("standard"),
  /** null = the plan's default (standard 1,000/h, pro 5,000/h). */
  apiLimitPerHour: integer("api_limit_per_hour"),
  /** null = the default burst bucket (100 requests per minute per key). */
  apiBurstPerMinute: integer("api_burst_per_minute"),
  /** null = no monthly message quota. */
  monthlyQuota: integer("monthly_quota"),
  /** IANA zone for zone-less device times (sentAt); null = UTC. */
  timeZone: text("time_zone"),
  /** ISO 3166 alpha-2 (upper case), set with `accounts update --default-country`; null = US. */
  defaultCountry: text("default_country"),
  createdAt: text("created_at").notNull(),
  /** When a person chose the name (migration 0028); null: replies say "this number" instead. */
  nameSetAt: text("name_set_at"),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** SHA-256 of the whole key, hex. The clear key is shown once and never stored. */
    keyHash: text("key_hash").notNull(),
    /** Last 4 characters, for display as txwire_sk_…abcd. */
    last4: text("last4").notNull(),
    permission: text("permission", { enum: ["admin_access", "standard_access"] }).notNull(),
    /** A server operator's key (always admin_access): may download backups and read /metrics. */
    operator: integer("operator", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_account_idx").on(t.accountId)],
);

/**
 * Messages created per account and UTC calendar month ("2026-11"), for the monthly quota. Kept by
 * a trigger on messages inserts (migration 0004) and never decreased: deleting messages does not
 * give quota back, and the figure is the same before and after a restart.
 */
export const monthlyUsage = sqliteTable(
  "monthly_usage",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    month: text("month").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.month] })],
);
