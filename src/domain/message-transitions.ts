/**
 * Message status changes (docs/api.md and docs/api-decisions.md, "Messages and phones").
 *
 * Allowed moves:
 *   queued → sent       sentAt required (ISO 8601 date-time); stored as new Date(x).toISOString()
 *   queued → failed     failureReason required (non-empty after trim, ≤ 200 chars); stored trimmed
 *   queued → cancelled
 *   failed → queued     retryCount + 1, failureReason cleared
 * Idempotent repeats (kind "noop", answered 200, nothing written, nothing counted):
 *   queued → queued, cancelled → cancelled,
 *   sent → sent with the same sentAt instant, failed → failed with the same (trimmed) reason.
 * Everything else is kind "invalid" (400 'Invalid status transition', details
 * {currentStatus, requestedStatus, message}, no code) — including sent → sent with a different
 * sentAt and failed → failed with a different reason.
 *
 * Order of checks (pinned by the tests):
 *   1. `status` must be one of the four values           → "validation" (field "status")
 *   2. is the move a candidate (allowed, or a same-status repeat)? if not → "invalid",
 *      whatever the other fields hold (e.g. failed → sent without sentAt is "invalid")
 *   3. the fields the requested status needs: sentAt for sent, failureReason for failed
 *      (also on the repeats sent → sent / failed → failed) → "validation"
 *   4. repeat: same values → "noop", different values → "invalid"; else → "apply"
 * Fields the requested status does not use are ignored (a failureReason sent with "cancelled",
 * a sentAt sent with "failed").
 *
 * sentAt accepts "YYYY-MM-DDTHH:MM[:SS[.fff…]][Z|±HH[:MM]]" (also a space or lowercase t / z);
 * a date-time without a zone designator is read as UTC. Date-only values, out-of-range fields
 * (month 13, Feb 30, 24:00) and anything else are refused. No bound on past or future.
 */

import { isMessageStatus, MESSAGE_STATUSES, type MessageStatus } from "./statuses";

// The list has one home (src/domain/statuses.ts); re-exported for the callers that take it with the rules.
export { isMessageStatus, MESSAGE_STATUSES, type MessageStatus };

export const FAILURE_REASON_MAX = 200;

export interface StatusRequest {
  status: MessageStatus;
  /** ISO 8601 timestamp; required when status is "sent". */
  sentAt?: string;
  /** Required when status is "failed". */
  failureReason?: string;
}

export interface MessageState {
  status: MessageStatus;
  sentAt: string | null;
  failureReason: string | null;
  retryCount: number;
}

export interface NextMessageState {
  status: MessageStatus;
  sentAt: string | null;
  failureReason: string | null;
  retryCount: number;
}

export type TransitionResult =
  /** Same status, same values: idempotent 200, change nothing (no contact counters either). */
  | { kind: "noop" }
  | {
      kind: "apply";
      next: NextMessageState;
      /** queued → sent: update the contact (lastContactedAt = sentAt, messageCount + 1, new → contacted). */
      becameSent: boolean;
      /** The message left the queue (sent, failed, cancelled): end any lease, drop from queue positions. */
      leftQueue: boolean;
      /** failed → queued: the message is back in the queue. */
      enteredQueue: boolean;
    }
  /** 400 'Invalid status transition', details {currentStatus, requestedStatus, message}, no code. */
  | { kind: "invalid"; currentStatus: MessageStatus; requestedStatus: MessageStatus; message: string }
  /** 400 VALIDATION_ERROR; `requirement` / `provided` fit the spec's details {field, requirement, provided}. */
  | { kind: "validation"; field: string; message: string; requirement: string; provided: unknown };

const ALLOWED: Record<MessageStatus, MessageStatus[]> = {
  queued: ["sent", "failed", "cancelled"],
  failed: ["queued"],
  sent: [],
  cancelled: [],
};

/** Whether `from → to` is one of the four allowed moves (repeats excluded). */
export function isAllowedTransition(from: MessageStatus, to: MessageStatus): boolean {
  return ALLOWED[from]?.includes(to) ?? false;
}


const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * The fields of a date-time matched by ISO_RE or a regex with the same groups (year, month, day,
 * hour, minute, second?, fraction?, Z?, offset sign?, offset hours?, offset minutes?), checked
 * for range: `wall` is the written time read as UTC, `zone` "Z", the written offset in minutes
 * east, or null when none was written. Null when a field is out of range. Fractions beyond
 * milliseconds are truncated.
 */
export function isoParts(m: RegExpExecArray): { wall: number; zone: "Z" | number | null } | null {
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, ohs, oms] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  const h = Number(hs);
  const mi = Number(mis);
  const s = ss === undefined ? 0 : Number(ss);
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, "0"));
  // Date.UTC maps years 0–99 to 1900–1999; such timestamps are not plausible send times anyway.
  if (y < 100) return null;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > daysInMonth) return null;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (z) return { wall, zone: "Z" };
  if (!sign) return { wall, zone: null };
  const oh = Number(ohs);
  const om = oms === undefined ? 0 : Number(oms);
  if (oh > 23 || om > 59) return null;
  return { wall, zone: (sign === "-" ? -1 : 1) * (oh * 60 + om) };
}

/**
 * Parses an ISO 8601 date-time to epoch ms, or null. Strict about ranges; no zone → UTC;
 * fractions beyond milliseconds are truncated.
 */
export function parseIsoTimestamp(value: unknown): number | null {
  if (typeof value !== "string" || value.length > 64) return null;
  const m = ISO_RE.exec(value.trim());
  const parts = m ? isoParts(m) : null;
  if (!parts) return null;
  const utc = parts.wall - (typeof parts.zone === "number" ? parts.zone : 0) * 60_000;
  return Number.isFinite(utc) && Math.abs(utc) <= 8.64e15 ? utc : null;
}

function invalid(current: MessageStatus, requested: MessageStatus, message?: string): TransitionResult {
  return {
    kind: "invalid",
    currentStatus: current,
    requestedStatus: requested,
    message: message ?? `Cannot change status from ${current} to ${requested}`,
  };
}

function validation(field: string, message: string, requirement: string, provided: unknown): TransitionResult {
  return { kind: "validation", field, message, requirement, provided: provided === undefined ? null : provided };
}

/** Checks sentAt for a "sent" request; returns the normalised ISO string or a validation result. */
function checkSentAt(raw: unknown): { ok: string } | { error: TransitionResult } {
  const requirement = "ISO 8601 timestamp, e.g. 2026-11-21T15:11:30.664Z";
  if (raw === undefined || raw === null || raw === "") {
    return { error: validation("sentAt", "sentAt is required when status is sent", requirement, raw) };
  }
  const t = parseIsoTimestamp(raw);
  if (t === null) {
    return { error: validation("sentAt", "sentAt must be a valid ISO 8601 timestamp", requirement, raw) };
  }
  return { ok: new Date(t).toISOString() };
}

/** Checks failureReason for a "failed" request; returns the trimmed reason or a validation result. */
function checkFailureReason(raw: unknown): { ok: string } | { error: TransitionResult } {
  const requirement = `non-empty string of at most ${FAILURE_REASON_MAX} characters`;
  if (raw === undefined || raw === null) {
    return { error: validation("failureReason", "failureReason is required when status is failed", requirement, raw) };
  }
  if (typeof raw !== "string") {
    return { error: validation("failureReason", "failureReason must be a string", requirement, raw) };
  }
  const reason = raw.trim();
  if (reason.length === 0) {
    return { error: validation("failureReason", "failureReason is required when status is failed", requirement, raw) };
  }
  if (reason.length > FAILURE_REASON_MAX) {
    return {
      error: validation(
        "failureReason",
        `failureReason must be at most ${FAILURE_REASON_MAX} characters`,
        requirement,
        `${reason.length} characters`,
      ),
    };
  }
  return { ok: reason };
}

function sameInstant(a: string | null, b: string): boolean {
  if (a === null) return false;
  const ta = Date.parse(a);
  return Number.isFinite(ta) && ta === Date.parse(b);
}

export function decideTransition(current: MessageState, req: StatusRequest): TransitionResult {
  const from = current.status;
  const to = req?.status as unknown;
  if (!isMessageStatus(to)) {
    return validation(
      "status",
      `status must be one of ${MESSAGE_STATUSES.join(", ")}`,
      `one of ${MESSAGE_STATUSES.join(", ")}`,
      to,
    );
  }

  const repeat = from === to;
  if (!repeat && !isAllowedTransition(from, to)) return invalid(from, to);

  switch (to) {
    case "queued": {
      if (repeat) return { kind: "noop" };
      // failed → queued
      return {
        kind: "apply",
        next: { status: "queued", sentAt: null, failureReason: null, retryCount: current.retryCount + 1 },
        becameSent: false,
        leftQueue: false,
        enteredQueue: true,
      };
    }
    case "cancelled": {
      if (repeat) return { kind: "noop" };
      // queued → cancelled
      return {
        kind: "apply",
        next: { status: "cancelled", sentAt: current.sentAt, failureReason: current.failureReason, retryCount: current.retryCount },
        becameSent: false,
        leftQueue: true,
        enteredQueue: false,
      };
    }
    case "sent": {
      const sentAt = checkSentAt(req.sentAt);
      if ("error" in sentAt) return sentAt.error;
      if (repeat) {
        if (sameInstant(current.sentAt, sentAt.ok)) return { kind: "noop" };
        return invalid(
          from,
          to,
          `Message was already sent at ${current.sentAt ?? "an unknown time"}; a different sentAt cannot be recorded`,
        );
      }
      // queued → sent
      return {
        kind: "apply",
        next: { status: "sent", sentAt: sentAt.ok, failureReason: null, retryCount: current.retryCount },
        becameSent: true,
        leftQueue: true,
        enteredQueue: false,
      };
    }
    case "failed": {
      const reason = checkFailureReason(req.failureReason);
      if ("error" in reason) return reason.error;
      if (repeat) {
        if ((current.failureReason ?? "").trim() === reason.ok) return { kind: "noop" };
        return invalid(
          from,
          to,
          `Message already failed with reason "${current.failureReason ?? ""}"; a different failureReason cannot be recorded`,
        );
      }
      // queued → failed
      return {
        kind: "apply",
        next: { status: "failed", sentAt: current.sentAt, failureReason: reason.ok, retryCount: current.retryCount },
        becameSent: false,
        leftQueue: true,
        enteredQueue: false,
      };
    }
  }
}
