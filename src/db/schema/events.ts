import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** Where an account's outbound events go. The secret signs, so it is stored as is. */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** JSON array of event types, or ["*"]. */
    events: text("events").notNull(),
    description: text("description"),
    isActive: integer("is_active").notNull().default(1),
    allowInsecure: integer("allow_insecure").notNull().default(0),
    /** whsec_<base64>: needed in clear to sign; never logged, shown once. */
    secret: text("secret").notNull(),
    /** The secret before the last rotation: still signs until previous_secret_expires_at. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    /** First failed attempt since the last success (null while healthy). */
    failingSince: text("failing_since"),
    disabledAt: text("disabled_at"),
    disabledReason: text("disabled_reason"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** "textwire" (Standard Webhooks), or "smsgate": registered through SMSGate's /webhooks, sent in its body and signature (migration 0029). */
    format: text("format", { enum: ["textwire", "smsgate"] }).notNull().default("textwire"),
    /** The SMSGate client's own id for the registration. */
    externalId: text("external_id"),
    /** SMSGate's optional device filter: only events of this phone. */
    deviceId: text("device_id"),
  },
  (t) => [
    index("webhook_endpoints_account_idx").on(t.accountId),
    uniqueIndex("webhook_endpoints_external_idx").on(t.accountId, t.externalId).where(sql`${t.externalId} IS NOT NULL`),
  ],
);

/**
 * The outbox: one row per event, written in the transaction of the change that caused it.
 * `seq` never goes back (AUTOINCREMENT), so `event_fanout.done_seq` marks what has been fanned
 * out to endpoints even after pruning empties the table.
 */
export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    /** The exact JSON body sent: {type, timestamp, data}. */
    payload: text("payload").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("events_id_idx").on(t.id)],
);

/** One event to one endpoint: the delivery log. Made by the dispatcher's fan-out, after commit. */
export const eventDeliveries = sqliteTable(
  "event_deliveries",
  {
    id: integer("id").primaryKey(),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastAttemptAt: text("last_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    /** First 1 KB of the last answer's body. */
    lastResponseBody: text("last_response_body"),
    lastError: text("last_error"),
    deliveredAt: text("delivered_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("event_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId),
    index("event_deliveries_endpoint_idx").on(t.endpointId),
    index("event_deliveries_due_idx").on(t.endpointId, t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);

/** The last events.seq whose deliveries have been made (one row, id 1). */
export const eventFanout = sqliteTable("event_fanout", {
  id: integer("id").primaryKey(),
  doneSeq: integer("done_seq").notNull(),
});
