import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Phones: SMSGate apps registered through the mobile API (`kind = "smsgate"`, a
 * device token stored as its SHA-256) and key-polling recipes seen through `X-Device-Id`
 * (`kind = "recipe"`, `external_id` = that header).
 */
export const devices = sqliteTable(
  "devices",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["smsgate", "recipe"] }).notNull(),
    externalId: text("external_id"),
    name: text("name").notNull(),
    /** SHA-256 of the device token, hex (SMSGate only). */
    tokenHash: text("token_hash"),
    /** HMAC key the app signs its webhooks with; must be kept in clear to verify them. */
    signingKey: text("signing_key"),
    pushToken: text("push_token"),
    /** JSON array of the app's SimCard objects. */
    simCards: text("sim_cards").notNull().default("[]"),
    appVersion: text("app_version"),
    lastSeenAt: text("last_seen_at"),
    lastIp: text("last_ip"),
    /** Percent, from the app's system:ping. */
    battery: integer("battery"),
    /** null = the server's --send-rate-per-minute. */
    sendRatePerMinute: integer("send_rate_per_minute"),
    /** Its own sending limits and its SIMs' (JSON {limits, sims: [{slot, limits}]}; null = the account's; migration 0040). */
    sendingLimits: text("sending_limits"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("devices_token_idx").on(t.tokenHash), uniqueIndex("devices_account_external_idx").on(t.accountId, t.externalId)],
);

export const deviceRegistrationTokens = sqliteTable(
  "device_registration_tokens",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    reusable: integer("reusable", { mode: "boolean" }).notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("device_registration_tokens_hash_idx").on(t.tokenHash)],
);

/** Messages a device reported sent / failed, per UTC day. */
export const deviceDailyCounts = sqliteTable(
  "device_daily_counts",
  {
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    sent: integer("sent").notNull().default(0),
    failed: integer("failed").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.day] })],
);

/** Webhook event ids already applied, per device (the app retries; each id is applied once). */
export const deviceWebhookEvents = sqliteTable(
  "device_webhook_events",
  {
    deviceId: text("device_id")
      .notNull()
      .references(() => devices.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.eventId] })],
);

/**
 * The inbox exports a phone was asked for (MessagesExportRequested, migration 0037): the texts it
 * then sends again from that window are history, not new replies (domain/inbound.ts,
 * isResentHistory). Kept a while after the request, then pruned.
 */
export const inboxExports = sqliteTable(
  "inbox_exports",
  {
  id: integer("id").primaryKey({ autoIncrement: true }),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  deviceId: text("device_id")
    .notNull()
    .references(() => devices.id, { onDelete: "cascade" }),
  since: text("since").notNull(),
  until: text("until").notNull(),
  requestedAt: text("requested_at").notNull(),
  },
  (t) => [index("inbox_exports_device_idx").on(t.deviceId, t.requestedAt)],
);

/**
 * One row per text handed to a phone (migration 0040): the SIM slot (0 = the phone's own
 * choice), the time (epoch ms) and parts. The budgets' rolling windows are rebuilt from it at boot
 * (src/services/sending-capacity.ts); written in the lease's own transaction.
 */
export const sendHandouts = sqliteTable("send_handouts", {
  deviceId: text("device_id").notNull(),
  slot: integer("slot").notNull(),
  at: integer("at").notNull(),
  parts: integer("parts").notNull(),
  recipient: text("recipient").notNull(),
});

/** A phone's (slot -1) or SIM's pause after failures it reported, until `until` (epoch ms). */
export const sendPauses = sqliteTable(
  "send_pauses",
  {
    deviceId: text("device_id").notNull(),
    slot: integer("slot").notNull(),
    until: integer("until").notNull(),
    reason: text("reason").notNull(),
    failures: integer("failures").notNull(),
    since: integer("since").notNull(),
  },
  (t) => [primaryKey({ columns: [t.deviceId, t.slot] })],
);

/** The phone and SIM each number last exchanged texts with (the sticky sender). */
export const contactSenders = sqliteTable(
  "contact_senders",
  {
    accountId: text("account_id").notNull(),
    phone: text("phone").notNull(),
    deviceId: text("device_id").notNull(),
    slot: integer("slot").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.phone] })],
);
