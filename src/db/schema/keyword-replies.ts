import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Keyword replies (migration 0031; docs/api-decisions.md, "Keyword replies"): a text that is one
 * of `keywords` gets `reply`, and its contact `add_tags` and `set_status`.
 */
export const keywordReplies = sqliteTable(
  "keyword_replies",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** JSON array of keywords as stored (src/domain/keywords.ts normalizeKeyword). */
    keywords: text("keywords").notNull(),
    reply: text("reply").notNull(),
    /** JSON array of tags added to the contact. */
    addTags: text("add_tags").notNull().default("[]"),
    setStatus: text("set_status", { enum: ["new", "contacted", "responded", "converted"] }),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("keyword_replies_account_created_idx").on(t.accountId, t.createdAt)],
);
