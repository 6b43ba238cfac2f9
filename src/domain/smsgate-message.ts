/**
 * SMSGate's third-party message, read and shown the way its clients send and expect it
 * (android-sms-gateway/server `handlers/messages/3rdparty.go`, client-go `domain_messages.go`).
 * Pure: the request's checks, the priority mapping, and a recipient's and a message's state from
 * what Textwire's messages say (docs/api-decisions.md, "SMSGate third-party API").
 */
import type { FieldError } from "./submission";
import type { Priority } from "./statuses";
import { parseIsoTimestamp } from "./message-transitions";

/** SMSGate's bounds: an id of at most 36 characters, 1 to 100 numbers, SIM 1-3, ttl ≥ 5 s, priority -128..127. */
export const SMSGATE_ID_MAX = 36;
export const SMSGATE_RECIPIENTS_MAX = 100;
export const SMSGATE_SIM_MAX = 3;
export const SMSGATE_TTL_MIN_SECONDS = 5;
/** An id goes into the message's address (/messages/{id}): letters, digits and - _ . : ~ only. */
const ID_RE = /^[A-Za-z0-9._~:-]+$/;

export interface SmsgateSendRequest {
  id: string | null;
  text: string;
  phoneNumbers: string[];
  simNumber: number | null;
  withDeliveryReport: boolean;
  /** SMSGate's -128..127. */
  priority: number;
  /** Epoch ms; from ttl (seconds after now) or validUntil. */
  validUntil: number | null;
  scheduleAt: number | null;
  deviceId: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;

/**
 * Checks a send request. Encrypted and data messages are refused in plain words: Textwire reads
 * every text it sends (opt-out keywords, the links rule), and its phones send text only.
 */
export function parseSendRequest(body: unknown, now: number, maxTextLength: number): { ok: true; value: SmsgateSendRequest } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!isObject(body)) return { ok: false, errors: [{ field: "body", message: "The body must be a JSON object", requirement: "a JSON object", provided: null }] };
  const b = body;
  if (b.isEncrypted === true) {
    errors.push({ field: "isEncrypted", message: "Encrypted messages are not supported by Textwire: send the text unencrypted (over HTTPS)", requirement: "false or absent", provided: true });
  } else if (!absent(b.isEncrypted) && typeof b.isEncrypted !== "boolean") {
    errors.push({ field: "isEncrypted", message: "isEncrypted must be true or false", requirement: "boolean", provided: b.isEncrypted });
  }
  if (!absent(b.dataMessage)) {
    errors.push({ field: "dataMessage", message: "Data messages (dataMessage) are not supported by Textwire: send a text with textMessage or message", requirement: "absent", provided: null });
  }
  let id: string | null = null;
  if (!absent(b.id) && b.id !== "") {
    if (typeof b.id !== "string" || b.id.length > SMSGATE_ID_MAX || !ID_RE.test(b.id)) {
      errors.push({ field: "id", message: `id must be 1 to ${SMSGATE_ID_MAX} letters, digits or - _ . : ~`, requirement: `1-${SMSGATE_ID_MAX} characters [A-Za-z0-9._~:-]`, provided: typeof b.id === "string" ? b.id.slice(0, 60) : b.id });
    } else id = b.id;
  }
  // textMessage.text wins over the older `message`, as on SMSGate's server.
  let text: unknown = b.message;
  let textField = "message";
  if (!absent(b.textMessage)) {
    textField = "textMessage.text";
    text = isObject(b.textMessage) ? b.textMessage.text : undefined;
  }
  if (absent(text) && absent(b.dataMessage)) {
    errors.push({ field: "message", message: "No message content provided: give textMessage.text (or message)", requirement: "textMessage: {text}", provided: null });
  } else if (!absent(text) && (typeof text !== "string" || text.trim() === "")) {
    errors.push({ field: textField, message: `${textField} must be non-empty text`, requirement: `1-${maxTextLength} characters`, provided: text });
  } else if (typeof text === "string" && text.length > maxTextLength) {
    errors.push({ field: textField, message: `${textField} must be at most ${maxTextLength} characters`, requirement: `1-${maxTextLength} characters`, provided: `${text.length} characters` });
  }
  const phones = b.phoneNumbers;
  if (!Array.isArray(phones) || phones.length === 0 || phones.length > SMSGATE_RECIPIENTS_MAX) {
    errors.push({ field: "phoneNumbers", message: `phoneNumbers must be a list of 1 to ${SMSGATE_RECIPIENTS_MAX} phone numbers`, requirement: `1-${SMSGATE_RECIPIENTS_MAX} numbers`, provided: Array.isArray(phones) ? `${phones.length} numbers` : (phones ?? null) });
  } else {
    const bad = phones.findIndex((p) => typeof p !== "string");
    if (bad >= 0) errors.push({ field: `phoneNumbers[${bad}]`, message: `phoneNumbers[${bad}] must be a phone number as text`, requirement: "text", provided: phones[bad] });
  }
  let simNumber: number | null = null;
  if (!absent(b.simNumber)) {
    if (!Number.isInteger(b.simNumber) || (b.simNumber as number) < 1 || (b.simNumber as number) > SMSGATE_SIM_MAX) {
      errors.push({ field: "simNumber", message: `simNumber must be a whole number from 1 to ${SMSGATE_SIM_MAX}`, requirement: `integer 1-${SMSGATE_SIM_MAX}`, provided: b.simNumber });
    } else simNumber = b.simNumber as number;
  }
  let withDeliveryReport = true;
  if (!absent(b.withDeliveryReport)) {
    if (typeof b.withDeliveryReport !== "boolean") errors.push({ field: "withDeliveryReport", message: "withDeliveryReport must be true or false", requirement: "boolean", provided: b.withDeliveryReport });
    else withDeliveryReport = b.withDeliveryReport;
  }
  let priority = 0;
  if (!absent(b.priority)) {
    if (!Number.isInteger(b.priority) || (b.priority as number) < -128 || (b.priority as number) > 127) {
      errors.push({ field: "priority", message: "priority must be a whole number from -128 to 127", requirement: "integer -128..127", provided: b.priority });
    } else priority = b.priority as number;
  }
  let validUntil: number | null = null;
  if (!absent(b.ttl) && !absent(b.validUntil)) {
    errors.push({ field: "ttl", message: "Give either ttl or validUntil, not both", requirement: "ttl or validUntil", provided: b.ttl });
  } else if (!absent(b.ttl)) {
    if (!Number.isInteger(b.ttl) || (b.ttl as number) < SMSGATE_TTL_MIN_SECONDS || (b.ttl as number) > 10 * 365 * 86_400) {
      errors.push({ field: "ttl", message: `ttl must be a whole number of seconds, at least ${SMSGATE_TTL_MIN_SECONDS}`, requirement: `integer ≥ ${SMSGATE_TTL_MIN_SECONDS}`, provided: b.ttl });
    } else validUntil = now + (b.ttl as number) * 1000;
  } else if (!absent(b.validUntil)) {
    const t = parseIsoTimestamp(b.validUntil);
    if (t === null) errors.push({ field: "validUntil", message: "validUntil must be a date and time (ISO 8601, e.g. 2030-01-01T08:30:00Z)", requirement: "ISO 8601 date-time", provided: b.validUntil });
    else if (t <= now) errors.push({ field: "validUntil", message: "validUntil is already past: nothing could be sent in time", requirement: "a future date-time", provided: b.validUntil });
    else validUntil = t;
  }
  let scheduleAt: number | null = null;
  if (!absent(b.scheduleAt)) {
    const t = parseIsoTimestamp(b.scheduleAt);
    if (t === null) errors.push({ field: "scheduleAt", message: "scheduleAt must be a date and time (ISO 8601, e.g. 2030-01-01T08:30:00Z)", requirement: "ISO 8601 date-time", provided: b.scheduleAt });
    else scheduleAt = t;
  }
  let deviceId: string | null = null;
  if (!absent(b.deviceId) && b.deviceId !== "") {
    if (typeof b.deviceId !== "string" || b.deviceId.length > 64) errors.push({ field: "deviceId", message: "deviceId must be the id of one of your phones", requirement: "a device id", provided: b.deviceId });
    else deviceId = b.deviceId;
  }
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: { id, text: text as string, phoneNumbers: phones as string[], simNumber, withDeliveryReport, priority, validUntil, scheduleAt, deviceId } };
}

/** SMSGate's priority as Textwire's: ≥ 100 urgent (SMSGate's "bypass" threshold), ≥ 50 high, < 0 low, else normal. */
export function priorityOf(smsgatePriority: number): Priority {
  if (smsgatePriority >= 100) return "urgent";
  if (smsgatePriority >= 50) return "high";
  if (smsgatePriority < 0) return "low";
  return "normal";
}

/** SMSGate's ProcessingState, in the order a text moves through them (Failed and Cancelled end it). */
export const SMSGATE_STATES = ["Pending", "Processed", "Sent", "Delivered", "Failed", "Cancelled"] as const;
export type SmsgateState = (typeof SMSGATE_STATES)[number];

/** What a recipient's state is read from: its Textwire message (null fields: none was queued, or it was deleted). */
export interface RecipientFacts {
  /** Why no message was queued (opted-out, recipient-limit). */
  refusal: string | null;
  hasMessage: boolean;
  status: string | null;
  leased: boolean;
  delivered: boolean;
  failureReason: string | null;
  /**
   * The reason of the last failed attempt of a text Textwire tries again (null when none): until a
   * phone takes the new attempt the text is `Failed`, as the phone reported it; the new attempt is
   * shown as SMSGate shows a resend, `Processed` again and onwards (docs/api-decisions.md, "The
   * SMSGate ecosystem, every call").
   */
  retryReason?: string | null;
}

export function recipientState(f: RecipientFacts): { state: SmsgateState; error: string | null } {
  if (!f.hasMessage) return f.refusal !== null ? { state: "Failed", error: f.refusal } : { state: "Cancelled", error: null };
  switch (f.status) {
    case "queued":
      if (f.leased) return { state: "Processed", error: null };
      return f.retryReason ? { state: "Failed", error: f.retryReason } : { state: "Pending", error: null };
    case "sent":
      return { state: f.delivered ? "Delivered" : "Sent", error: null };
    case "failed":
      return { state: "Failed", error: f.failureReason ?? "failed" };
    default:
      // Cancelled because the number opted out after it was queued: a failure to the client.
      return f.failureReason === "opted-out" ? { state: "Failed", error: "opted-out" } : { state: "Cancelled", error: null };
  }
}

/** The message's state: its least advanced recipient's (SMSGATE_STATES order). */
export function groupState(states: readonly SmsgateState[]): SmsgateState {
  let min = SMSGATE_STATES.length - 1;
  for (const s of states) min = Math.min(min, SMSGATE_STATES.indexOf(s));
  return states.length === 0 ? "Pending" : SMSGATE_STATES[min];
}

/**
 * The paging and time range of SMSGate's lists (GET /messages, GET /inbox): `limit` (1..`max`,
 * default `dflt`), `offset`, and `from`/`to` as ISO times; problems are added to `errors`.
 */
export function smsgateListRange(
  q: Record<string, string | undefined>,
  max: number,
  dflt: number,
  errors: FieldError[],
): { limit: number; offset: number; from?: string; to?: string } {
  const int = (name: string, min: number, top: number, fallback: number) => {
    const v = q[name];
    if (v === undefined) return fallback;
    const n = /^\d{1,9}$/.test(v) ? Number(v) : NaN;
    if (!(n >= min && n <= top)) errors.push({ field: name, message: `${name} must be a whole number from ${min} to ${top}`, requirement: `integer ${min}-${top}`, provided: v.slice(0, 40) });
    return n;
  };
  const date = (name: "from" | "to") => {
    const v = q[name];
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (!Number.isFinite(t)) errors.push({ field: name, message: `${name} must be a date and time (RFC 3339, e.g. 2030-01-01T00:00:00Z)`, requirement: "RFC 3339 date-time", provided: v.slice(0, 40) });
    return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
  };
  return { limit: int("limit", 1, max, dflt), offset: int("offset", 0, 1_000_000_000, 0), from: date("from"), to: date("to") };
}
