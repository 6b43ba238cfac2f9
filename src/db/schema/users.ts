import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
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
    /** Their mobile, E.164, for the team's texts (migration 0045); null: none given. */
    phoneNumber: text("phone_number"),
    notifySubmissions: integer("notify_submissions", { mode: "boolean" }).notNull().default(false),
    notifyReplies: integer("notify_replies", { mode: "boolean" }).notNull().default(false),
    /** Also by e-mail, to their sign-in address, when the operator set up SMTP. */
    notifyEmail: integer("notify_email", { mode: "boolean" }).notNull().default(false),
    /** "HH:MM" in the business's time zone: no team text between them (null: any time). */
    quietStart: text("quiet_start"),
    quietEnd: text("quiet_end"),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email), index("users_account_idx").on(t.accountId)],
);

/**
 * What the team is to be told (migration 0045): one row per person, cause and channel, made by
 * triggers on submissions and inbound_messages in the cause's own transaction; sent_at is set in
 * the transaction that queues the text (or after the e-mail was accepted by the SMTP server).
 */
export const teamNotices = sqliteTable("team_notices", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  accountId: text("account_id").notNull(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  /** submission | reply */
  kind: text("kind").notNull(),
  /** The submission's or the inbound text's id. */
  refId: text("ref_id").notNull(),
  /** text | email */
  channel: text("channel").notNull(),
  createdAt: text("created_at").notNull(),
  /** An e-mail handed to the SMTP server (sent_at follows its acceptance). */
  attemptedAt: text("attempted_at"),
  sentAt: text("sent_at"),
  /** The team text that carried it. */
  messageId: text("message_id"),
});

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
