import { sqliteTable, text, integer, primaryKey } from "drizzle-orm/sqlite-core";

/**
 * Message analytics rollups (migration 0015): per account, form ('*' = all of the account's
 * messages, '' = messages of no form), UTC bucket at three levels (0 day "YYYY-MM-DD", 1 hour
 * "YYYY-MM-DDTHH", 2 quarter hour "YYYY-MM-DDTHH:MM") and reason ('' = the bucket's row;
 * "#<failure reason>" = its failed messages with that reason), by createdAt. Inserts are recorded
 * by src/db/derived-counts.ts; status changes and deletes by triggers.
 */
export const messageRollups = sqliteTable(
  "message_rollups",
  {
    accountId: text("account_id").notNull(),
    formId: text("form_id").notNull(),
    level: integer("level").notNull(),
    bucket: text("bucket").notNull(),
    reason: text("reason").notNull(),
    queued: integer("queued").notNull().default(0),
    sent: integer("sent").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
    /** Sum of sentAt − createdAt (ms) over sent messages that have a sentAt. */
    sentMs: integer("sent_ms").notNull().default(0),
    /** Number of those messages. */
    sentTimed: integer("sent_timed").notNull().default(0),
    /** The form's submissions (migration 0022; 0 on '*' and '' rows). */
    submissions: integer("submissions").notNull().default(0),
    /** Contacts created with this form (migration 0022; 0 on '*' and '' rows). */
    newContacts: integer("new_contacts").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.formId, t.level, t.bucket, t.reason] })],
);
