/**
 * Inbound messages: reading what a phone reports about a text it received. Pure: no clock (the
 * caller passes `now`), no database.
 */
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { DEFAULT_PHONE_COUNTRY, MAX_PHONE_INPUT_LENGTH } from "./phone";
import { parseIsoTimestamp } from "./message-transitions";
import type { FieldError } from "./submission";

/** Longest text stored: a long concatenated SMS is a few thousand characters at most. */
export const INBOUND_BODY_MAX = 10_000;
export const INBOUND_DEVICE_ID_MAX = 100;
export const INBOUND_EXTERNAL_ID_MAX = 200;
/** A `receivedAt` number below this is read as epoch seconds (Tasker's %TIMES), above as ms. */
export const EPOCH_SECONDS_BELOW = 100_000_000_000;

/**
 * The sender's number in E.164. Any valid number is accepted, whatever its type (a landline
 * that sends texts is still a sender); short codes and alphanumeric senders ("VERIFY") are not
 * phone numbers of a contact and are refused.
 */
export function normalizeSender(input: unknown): { ok: true; e164: string } | { ok: false; message: string } {
  if (typeof input !== "string" || input.trim() === "") return { ok: false, message: "from is required: the sender's phone number" };
  const raw = input.trim();
  if (raw.length > MAX_PHONE_INPUT_LENGTH || !/^[0-9+()\-.\/\s]+$/.test(raw)) {
    return { ok: false, message: "from must be the sender's phone number (digits, optionally with + and the country code)" };
  }
  const text = raw.startsWith("00") ? "+" + raw.slice(2) : raw;
  let parsed;
  try {
    parsed = parsePhoneNumberFromString(text, DEFAULT_PHONE_COUNTRY);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !parsed.isValid()) return { ok: false, message: "from is not a valid phone number (short codes and named senders are not stored)" };
  return { ok: true, e164: parsed.number };
}

/** `receivedAt`: epoch ms (or seconds, see EPOCH_SECONDS_BELOW) or an ISO 8601 timestamp. */
export function parseReceivedAt(v: unknown): number | null {
  if (typeof v === "number") {
    if (!Number.isFinite(v) || v <= 0) return null;
    const ms = v < EPOCH_SECONDS_BELOW ? v * 1000 : v;
    return ms <= 8.64e15 ? Math.round(ms) : null;
  }
  if (typeof v === "string" && /^\d+(\.\d+)?$/.test(v.trim())) return parseReceivedAt(Number(v.trim()));
  return parseIsoTimestamp(v);
}

export interface InboundInput {
  from: string;
  body: string;
  /** Epoch ms. */
  receivedAt: number;
  deviceId: string | null;
  externalId: string | null;
}

/**
 * Checks what a phone posted. `receivedAt` may be left out (the server's time is used: a recipe
 * that cannot format a time still delivers the text) and is capped at `now` (a phone clock ahead
 * of the server must not put a reply in the future).
 */
export function validateInbound(
  body: { from?: unknown; body?: unknown; receivedAt?: unknown; deviceId?: unknown; externalId?: unknown },
  now: number,
): { ok: true; value: InboundInput } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const from = normalizeSender(body.from);
  if (!from.ok) errors.push({ field: "from", message: from.message, requirement: "phone number, e.g. +14155552671", provided: body.from ?? null });
  if (typeof body.body !== "string") {
    errors.push({ field: "body", message: "body is required: the text received (may be empty)", requirement: `string of at most ${INBOUND_BODY_MAX} characters`, provided: body.body ?? null });
  } else if (body.body.length > INBOUND_BODY_MAX) {
    errors.push({ field: "body", message: `body must be at most ${INBOUND_BODY_MAX} characters`, requirement: `at most ${INBOUND_BODY_MAX} characters`, provided: `${body.body.length} characters` });
  }
  let receivedAt = now;
  if (body.receivedAt !== undefined && body.receivedAt !== null && body.receivedAt !== "") {
    const t = parseReceivedAt(body.receivedAt);
    if (t === null) {
      errors.push({
        field: "receivedAt",
        message: "receivedAt must be epoch milliseconds (or seconds) or an ISO 8601 timestamp",
        requirement: "epoch ms, e.g. 1795500000000, or ISO 8601, e.g. 2026-11-23T09:00:00Z",
        provided: body.receivedAt,
      });
    } else receivedAt = Math.min(t, now);
  }
  const optionalId = (field: "deviceId" | "externalId", max: number): string | null => {
    const v = body[field];
    if (v === undefined || v === null || v === "") return null;
    if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
    if (typeof v !== "string" || v.length > max) {
      errors.push({ field, message: `${field} must be a string of at most ${max} characters`, requirement: `string, 1-${max} characters`, provided: v });
      return null;
    }
    return v;
  };
  const deviceId = optionalId("deviceId", INBOUND_DEVICE_ID_MAX);
  const externalId = optionalId("externalId", INBOUND_EXTERNAL_ID_MAX);
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: { from: (from as { e164: string }).e164, body: body.body as string, receivedAt, deviceId, externalId } };
}

/** An inbox export a phone was asked for: the window of its texts, and when it was asked (epoch ms). */
export interface InboxExportWindow {
  since: number;
  until: number;
  requestedAt: number;
}

/**
 * How long after an export request the phone's re-sent texts are taken as history. The app sends
 * them at once, one webhook each, retrying a failed one; two hours covers a large inbox and the
 * retries, and a text received after the request is never history anyway.
 */
export const EXPORT_OPEN_MS = 2 * 3_600_000;
/**
 * A text received this close before the export request (by the phone's clock) is not history: its
 * own live report may still be on its way, or the phone's clock a little behind the server's, and
 * a STOP must not be lost to either.
 */
export const HISTORY_LIVE_MARGIN_MS = 10 * 60_000;

/**
 * Whether a received text is history the phone sends again because it was asked (SMSGate's inbox
 * export / refresh), not a new text: it falls in the window of an export asked of its phone in the
 * last EXPORT_OPEN_MS, and the phone received it more than HISTORY_LIVE_MARGIN_MS before that request.
 * Such a text is stored and shown but takes no action (docs/api-decisions.md, "SMSGate: signing
 * key in the settings document, and re-sent history"). Texts a phone never sent again — however
 * late they arrive (a phone that was offline) — are new: they are replied to and a STOP opts out.
 */
export function isResentHistory(receivedAt: number, exports: readonly InboxExportWindow[], now: number): boolean {
  return exports.some(
    (e) => now - e.requestedAt <= EXPORT_OPEN_MS && receivedAt >= e.since && receivedAt <= e.until && receivedAt < e.requestedAt - HISTORY_LIVE_MARGIN_MS,
  );
}
