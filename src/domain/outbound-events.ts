/**
 * Outbound events: the event types, the retry schedule and the Standard Webhooks
 * signature (standardwebhooks.com). Pure: no clock, no randomness, no database.
 */
import { createHmac } from "node:crypto";

/** Every event type an endpoint can subscribe to ("*" = all of them). `ping` is only ever sent by the test route. */
export const EVENT_TYPES = [
  "message.queued",
  "message.sent",
  "message.delivered",
  "message.failed",
  "message.cancelled",
  "contact.created",
  "contact.updated",
  "contact.opted_out",
  "contact.opted_in",
  "inbound.received",
  "form.submission",
  "automation.run.started",
  "automation.run.stopped",
  "automation.run.completed",
  "device.offline",
  "device.online",
  "device.paused",
  "device.resumed",
  "queue.stuck",
  "replication.stalled",
  "endpoint.disabled",
] as const;
/**
 * `message.attempt_failed`: a failed attempt Textwire tries again, for SMSGate-format webhooks
 * only (src/domain/smsgate-webhook.ts): no /v1 endpoint can subscribe to it, and "*" never takes it.
 */
export type EventType = (typeof EVENT_TYPES)[number] | "ping" | SmsgateOnlyEvent;
/**
 * Events for SMSGate-format webhooks only: a failed attempt Textwire retries, and the phone events
 * relayed as they came (src/domain/smsgate-webhook.ts). "*" never takes them.
 */
export type SmsgateOnlyEvent = "message.attempt_failed" | "sms:data-received" | "mms:received";
const SMSGATE_ONLY: readonly string[] = ["message.attempt_failed", "sms:data-received", "mms:received"];
export const ALL_EVENTS = "*";

export const isEventType = (v: unknown): v is (typeof EVENT_TYPES)[number] => (EVENT_TYPES as readonly unknown[]).includes(v);

/** Whether an endpoint's `events` list takes this type. */
export function subscribes(events: readonly string[], type: string): boolean {
  return (events.includes(ALL_EVENTS) && !SMSGATE_ONLY.includes(type)) || events.includes(type);
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Waits before each retry after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
 * (about 27 h in all); the attempt after the last wait is the final one, then the delivery is
 * `failed`. Eight attempts per delivery.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * HOUR;
/** After a rotation the old secret keeps signing (a second signature) for this long. */
export const SECRET_OVERLAP_MS = 24 * HOUR;
/** One attempt's time limit (connect + answer). */
export const DELIVERY_TIMEOUT_MS = 10 * SECOND;
/** How much of an answer's body the delivery log keeps. */
export const RESPONSE_BODY_KEEP_BYTES = 1_024;

/**
 * After `attemptsMade` attempts (≥ 1) all failed: ms until the next one, or null when that was
 * the last allowed attempt.
 */
export function retryDelay(attemptsMade: number, schedule: readonly number[] = RETRY_SCHEDULE_MS): number | null {
  if (attemptsMade < 1) return 0;
  return attemptsMade <= schedule.length ? schedule[attemptsMade - 1] : null;
}

export const SECRET_PREFIX = "whsec_";
/** Random bytes in a new signing secret (the specification asks for 24 to 64). */
export const SECRET_BYTES = 32;

export function formatSecret(random: Uint8Array): string {
  if (random.length < 24) throw new Error("a signing secret needs at least 24 random bytes");
  return SECRET_PREFIX + Buffer.from(random).toString("base64");
}

/** The HMAC key of a whsec_ secret: its base64 part, decoded. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for one secret. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return "v1," + createHmac("sha256", secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
}

/** The three Standard Webhooks headers; with several secrets (rotation) the signatures are space-separated. */
export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((s) => signature(s, id, timestampSeconds, body)).join(" "),
  };
}

/** The event body: Standard Webhooks' {type, timestamp, data}. */
export function eventBody(type: string, timestampIso: string, data: unknown): string {
  return JSON.stringify({ type, timestamp: timestampIso, data });
}
