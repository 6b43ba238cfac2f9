/**
 * One item of an SMSGate phone's state report (PATCH /api/mobile/v1/message, and the phone's
 * sms:sent / sms:delivered / sms:failed webhooks): read and checked on its own, so one bad item
 * never blocks the others (docs/api-decisions.md, "The phone path, round two"). Pure: the caller
 * passes the time zone, the lease time and `now`.
 *
 * The app's item: {id, state, recipients: [{phoneNumber, state, error}], states: {State: date}}.
 */
import { parseDeviceTime } from "./device-time";
import { FAILURE_REASON_MAX } from "./message-transitions";

/** The states the app reports (its ProcessingState). Pending changes nothing. */
export const APP_STATES = ["Pending", "Processed", "Sent", "Delivered", "Failed"] as const;
export type AppState = (typeof APP_STATES)[number];

/** A message id longer than this is not one of ours (ids are UUIDs). */
export const REPORT_ID_MAX = 100;
/** Recipients per item: our messages have one; the app's own limit is far below this. */
export const REPORT_RECIPIENTS_MAX = 100;
/** A phone's date more than this before its lease or after the server's clock is not believed. */
export const DEVICE_CLOCK_SKEW_MS = 5 * 60_000;
/** The failure reason given when the phone names none. */
export const GENERIC_FAILURE_REASON = "generic failure";

export interface DeviceReport {
  id: string;
  state: AppState;
  /** The dates the phone gave, per state: the raw text and the instant it reads as. */
  times: Partial<Record<AppState, { raw: string; at: number }>>;
  /** Failed: the first recipient error, trimmed and cut to the stored length. */
  failureReason: string;
}

export type ReadReport = { ok: true; report: DeviceReport } | { ok: false; field: string; message: string };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const refuse = (field: string, message: string): ReadReport => ({ ok: false, field, message });

/** The item's id when it has a usable one (for the log line of a refused item), else null. */
export function reportIdOf(item: unknown): string | null {
  if (!isPlainObject(item) || typeof item.id !== "string") return null;
  return item.id.slice(0, REPORT_ID_MAX);
}

/**
 * Checks one item. Refused: not an object; `id` not a string of 1-REPORT_ID_MAX characters;
 * `state` not exactly one of APP_STATES (a list like ["Sent"] included); `recipients` present
 * but not an array of objects whose `error` is a string or null; `states` present but not an
 * object, or holding a date of a known state that does not read as a date-time. Unknown keys of
 * `states` and of the item are ignored (newer app versions add fields).
 */
export function readDeviceReport(item: unknown, timeZone: string | null): ReadReport {
  if (!isPlainObject(item)) return refuse("item", "each item must be an object");
  const { id, state, recipients, states } = item;
  if (typeof id !== "string" || id.length === 0 || id.length > REPORT_ID_MAX) return refuse("id", `id must be a message id (1-${REPORT_ID_MAX} characters)`);
  if (typeof state !== "string" || !(APP_STATES as readonly string[]).includes(state)) return refuse("state", `state must be one of ${APP_STATES.join(", ")}`);
  let failureReason = GENERIC_FAILURE_REASON;
  let reasonFound = false;
  if (recipients !== undefined && recipients !== null) {
    if (!Array.isArray(recipients) || recipients.length > REPORT_RECIPIENTS_MAX) return refuse("recipients", `recipients must be a list of at most ${REPORT_RECIPIENTS_MAX} objects`);
    for (const r of recipients) {
      if (!isPlainObject(r)) return refuse("recipients", "each recipient must be an object");
      const err = r.error;
      if (err !== undefined && err !== null && typeof err !== "string") return refuse("recipients.error", "a recipient's error must be text or null");
      if (!reasonFound && typeof err === "string" && err.trim()) {
        failureReason = err.trim().slice(0, FAILURE_REASON_MAX).trim();
        reasonFound = true;
      }
    }
  }
  const times: DeviceReport["times"] = {};
  if (states !== undefined && states !== null) {
    if (!isPlainObject(states)) return refuse("states", "states must be an object of state → date");
    for (const k of APP_STATES) {
      const v = states[k];
      if (v === undefined || v === null) continue;
      const at = typeof v === "string" ? parseDeviceTime(v, timeZone) : null;
      if (at === null || !Number.isFinite(at)) return refuse(`states.${k}`, `states.${k} must be a date-time, e.g. 2026-11-23T10:15:30.250+02:00`);
      times[k] = { raw: v as string, at };
    }
  }
  return { ok: true, report: { id, state: state as AppState, times, failureReason } };
}

/**
 * The instant to record for a date the phone reported: its own when it lies within
 * [leasedAt − DEVICE_CLOCK_SKEW_MS, now + DEVICE_CLOCK_SKEW_MS], else the server's `now` with the
 * phone's raw text kept (`deviceTime`) for the timeline. No date given: `now`.
 */
export function believedTime(given: { raw: string; at: number } | undefined, leasedAt: number | null, now: number): { at: number; deviceTime?: string } {
  if (!given) return { at: now };
  const earliest = (leasedAt ?? now) - DEVICE_CLOCK_SKEW_MS;
  if (given.at >= earliest && given.at <= now + DEVICE_CLOCK_SKEW_MS) return { at: given.at };
  return { at: now, deviceTime: given.raw.slice(0, 64) };
}
