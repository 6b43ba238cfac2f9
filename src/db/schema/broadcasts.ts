import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { PRIORITIES } from "../../domain/statuses";

/**
 * Broadcasts (POST /v1/broadcasts): one text, rendered per contact of a segment. The messages are
 * created after the 202 in chunks (`cursor` = the last contact id done, `last_contact_id` the
 * newest contact when the broadcast was made: later contacts are not part of it), so a restart
 * resumes where the last committed chunk ended.
 */
export const broadcasts = sqliteTable(
  "broadcasts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    content: text("content").notNull(),
    /** JSON of the segment as posted (status, tags, formId, createdAfter, createdBefore, search). */
    segment: text("segment").notNull(),
    priority: text("priority", { enum: PRIORITIES }).notNull(),
    scheduledFor: text("scheduled_for").notNull(),
    sendRatePerMinute: integer("send_rate_per_minute"),
    maxAttempts: integer("max_attempts"),
    /** JSON {start, end} ("HH:MM") in `timezone`: messages due inside are moved to the end. */
    quietHours: text("quiet_hours"),
    timezone: text("timezone").notNull().default("UTC"),
    /** Skip a contact already sent (or queued) this many texts in the last 24 h. */
    recipientLimitPerDay: integer("recipient_limit_per_day"),
    /** queuing → queued (every message created), or cancelled. */
    status: text("status", { enum: ["queuing", "queued", "cancelled"] }).notNull(),
    /** Matching contacts that get a message, as counted when the broadcast was made. */
    recipients: integer("recipients").notNull(),
    /** Matching contacts left out (opted out, or over a per-recipient limit), as counted then. */
    suppressed: integer("suppressed").notNull(),
    /** Messages created so far. */
    queuedCount: integer("queued_count").notNull().default(0),
    /** Recipients skipped while queuing (the monthly quota ran out, or the contact opted out meanwhile). */
    skipped: integer("skipped").notNull().default(0),
    cursor: text("cursor").notNull().default(""),
    lastContactId: text("last_contact_id").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("broadcasts_account_created_idx").on(t.accountId, t.createdAt)],
);
