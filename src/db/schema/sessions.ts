import { sqliteTable, text, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, apiKeys } from "./accounts";
import { users } from "./users";

/**
 * Dashboard sign-ins: a browser session opened with an API key. Only the token's
 * SHA-256 is stored; the key's permission and revocation apply (revoking the key ends them).
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The key a session was opened with (null for a person's session). */
    keyId: text("key_id").references(() => apiKeys.id, { onDelete: "cascade" }),
    /** The person signed in (null for a key's session); removing the person ends it. */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    /** Sent back in X-CSRF-Token on every state-changing request (not a credential by itself). */
    csrfToken: text("csrf_token").notNull(),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    /** Sliding: moved to lastSeenAt + 7 days as the session is used. */
    expiresAt: text("expires_at").notNull(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
  },
  (t) => [
    uniqueIndex("sessions_token_hash_idx").on(t.tokenHash),
    index("sessions_account_idx").on(t.accountId, t.expiresAt),
    index("sessions_key_idx").on(t.keyId),
    index("sessions_user_idx").on(t.userId),
  ],
);
