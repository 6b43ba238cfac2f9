/**
 * SMSGate's webhook events (its server's WebhookEvent, v1.47: fourteen) and the Textwire events
 * each one is delivered from (docs/api-decisions.md, "SMSGate third-party API" and "The SMSGate
 * ecosystem, every call"). Every one can be registered. Those with no Textwire source are stored
 * under their own name. Two of them a phone reports and Textwire relays as they came, emitted
 * under that same name (RELAYED_EVENTS): `sms:data-received` and `mms:received` (its metadata).
 * The rest are accepted and never sent: `system:ping` (Textwire watches its phones itself:
 * device.offline / device.online), `mms:downloaded` (Textwire does not download MMS),
 * `app:started`, and the four batch events (Textwire delivers each text on its own).
 */
export const SMSGATE_EVENTS = [
  "sms:received",
  "sms:data-received",
  "sms:sent",
  "sms:delivered",
  "sms:failed",
  "sms:cancelled",
  "system:ping",
  "mms:received",
  "mms:downloaded",
  "app:started",
  "sms:batch:received",
  "sms:batch:data-received",
  "mms:batch:received",
  "mms:batch:downloaded",
] as const;
export type SmsgateEvent = (typeof SMSGATE_EVENTS)[number];

/** Phone events relayed to SMSGate registrations as the phone reported them (services/thirdparty-webhooks.ts relayPhoneEvent). */
export const RELAYED_EVENTS = ["sms:data-received", "mms:received"] as const;
export type RelayedEvent = (typeof RELAYED_EVENTS)[number];
export const isRelayed = (e: string): e is RelayedEvent => (RELAYED_EVENTS as readonly string[]).includes(e);

/**
 * A failed attempt that Textwire will try again: SMSGate's clients see `sms:failed` at once (as
 * the phone reported it), while Textwire's own endpoints get message.failed only for the final
 * failure. Only SMSGate-format registrations subscribe to it; "*" never matches it.
 */
export const ATTEMPT_FAILED_EVENT = "message.attempt_failed";

const TO_TEXTWIRE: Partial<Record<SmsgateEvent, readonly string[]>> = {
  "sms:received": ["inbound.received"],
  "sms:sent": ["message.sent"],
  "sms:delivered": ["message.delivered"],
  "sms:failed": ["message.failed", ATTEMPT_FAILED_EVENT],
  "sms:cancelled": ["message.cancelled"],
};

/** The Textwire event types an SMSGate registration subscribes to (its own name when none produces it). */
export function textwireEventsOf(event: SmsgateEvent): string[] {
  return [...(TO_TEXTWIRE[event] ?? [event])];
}

/** Whether Textwire ever sends this SMSGate event. */
export const isProduced = (event: SmsgateEvent): boolean => TO_TEXTWIRE[event] !== undefined || isRelayed(event);

/** The SMSGate event a stored subscription's first type is (its own name for the never-sent ones), or null. */
export function smsgateEventOf(textwireType: string): SmsgateEvent | null {
  for (const e of SMSGATE_EVENTS) if ((TO_TEXTWIRE[e] ?? [e]).includes(textwireType)) return e;
  return null;
}
