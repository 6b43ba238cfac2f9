/**
 * SMSGate's webhook events and the Textwire events each one is (docs/api-decisions.md, "SMSGate
 * third-party API"). `system:ping` is accepted and stored, and never sent: Textwire watches its
 * phones itself (device.offline / device.online on /v1/webhook-endpoints).
 */
export const SMSGATE_EVENTS = ["sms:received", "sms:sent", "sms:delivered", "sms:failed", "system:ping"] as const;
export type SmsgateEvent = (typeof SMSGATE_EVENTS)[number];

const TO_TEXTWIRE: Record<SmsgateEvent, string> = {
  "sms:received": "inbound.received",
  "sms:sent": "message.sent",
  "sms:delivered": "message.delivered",
  "sms:failed": "message.failed",
  // No Textwire event has this name: the endpoint's subscription matches nothing.
  "system:ping": "system:ping",
};

/** The Textwire event type an SMSGate registration subscribes to. */
export function textwireEventOf(event: SmsgateEvent): string {
  return TO_TEXTWIRE[event];
}

/** The SMSGate event a Textwire event type is delivered as, or null when it has none. */
export function smsgateEventOf(textwireType: string): SmsgateEvent | null {
  for (const e of SMSGATE_EVENTS) if (TO_TEXTWIRE[e] === textwireType) return e;
  return null;
}
