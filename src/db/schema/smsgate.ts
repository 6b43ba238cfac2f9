import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, primaryKey, foreignKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { messages } from "./messages";

/**
 * SMSGate's third-party API (migration 0029; docs/api-decisions.md, "SMSGate third-party API"):
 * a message as an SMSGate client sent it, under the client's id, with one Textwire message per
 * phone number.
 */
export const smsgateMessages = sqliteTable(
  "smsgate_messages",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    deviceId: text("device_id"),
    simNumber: integer("sim_number"),
    withDeliveryReport: integer("with_delivery_report").notNull().default(1),
    validUntil: text("valid_until"),
    /** 1 while valid_until has not been judged yet: the expiry sweep reads only these rows. */
    expiryPending: integer("expiry_pending").notNull().default(0),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index("smsgate_messages_created_idx").on(t.accountId, t.createdAt),
    index("smsgate_messages_expiry_idx").on(t.validUntil).where(sql`${t.expiryPending} = 1`),
  ],
);

/** One per phone number, in the order given: its Textwire message, or the rule that refused it. */
export const smsgateRecipients = sqliteTable(
  "smsgate_recipients",
  {
    accountId: text("account_id").notNull(),
    smsgateId: text("smsgate_id").notNull(),
    position: integer("position").notNull(),
    phoneNumber: text("phone_number").notNull(),
    messageId: text("message_id").references(() => messages.id, { onDelete: "set null" }),
    /** Why no message was queued (opted-out, recipient-limit); null when one was. */
    error: text("error"),
    /** When a phone first took the message (SMSGate's Processed). */
    processedAt: text("processed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.smsgateId, t.position] }),
    foreignKey({ columns: [t.accountId, t.smsgateId], foreignColumns: [smsgateMessages.accountId, smsgateMessages.id] }).onDelete("cascade"),
    index("smsgate_recipients_message_idx").on(t.messageId),
  ],
);

/** Per account: the webhooks' signing key and the send rules no form carries for these texts. */
export const smsgateClients = sqliteTable("smsgate_clients", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** Signs SMSGate-format webhooks; needed in clear to sign, like an endpoint's secret. */
  signingKey: text("signing_key").notNull(),
  /** JSON {start, end} in the account's time zone, or null. */
  quietHours: text("quiet_hours"),
  recipientLimitPerDay: integer("recipient_limit_per_day"),
  updatedAt: text("updated_at").notNull(),
  /**
   * Signs the account's SMSGate JWTs (HS256, migration 0052): needed in clear to verify, like the
   * signing key; made on first use, never shown (docs/api-decisions.md, "The SMSGate ecosystem, every call").
   */
  tokenSecret: text("token_secret"),
});

/**
 * The JWTs of POST /3rdparty/v1/auth/token and their refresh tokens (migration 0052): only the
 * claims that decide whether one still works, never the token itself. `key_id` is the key that
 * asked (a token dies with it); `parent_jti` ties a refresh token to its access token, so revoking
 * one revokes the pair.
 */
export const smsgateTokens = sqliteTable(
  "smsgate_tokens",
  {
    jti: text("jti").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    keyId: text("key_id").notNull(),
    /** "access" | "refresh". */
    tokenUse: text("token_use").notNull(),
    parentJti: text("parent_jti"),
    /** JSON array of SMSGate scopes (for a refresh token: the access token's). */
    scopes: text("scopes").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("smsgate_tokens_account_idx").on(t.accountId, t.expiresAt), index("smsgate_tokens_parent_idx").on(t.parentJti)],
);
