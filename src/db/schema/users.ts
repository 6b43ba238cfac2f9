import { sqliteTable, text, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * The people of an account: they sign in to the dashboard with e-mail and password (argon2id
 * hash only). The e-mail is unique on the server (sign-in names no account), kept lower-case
 * (docs/api-decisions.md, "People, roles and the first run").
 */
export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    name: text("name").notNull(),
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ["owner", "admin", "staff", "viewer"] }).notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email), index("users_account_idx").on(t.accountId)],
);

/** One-time invitation links (72 h): only the token's SHA-256 is stored. */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    role: text("role", { enum: ["owner", "admin", "staff", "viewer"] }).notNull(),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    /** The e-mail the inviter typed; the person joins with it (null: an invitation from before, no longer usable). */
    email: text("email"),
  },
  (t) => [uniqueIndex("invitations_token_hash_idx").on(t.tokenHash), index("invitations_account_idx").on(t.accountId)],
);
