/**
 * What a phone's failure report says about the phone or SIM (docs/phones.md, "When a phone or
 * SIM is paused"). Pure. The SMSGate app words a send failure as
 * `Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)`
 * (its MessagesService.resultToErrorMessage); recipes may send the bare constant or our own words.
 */

export type FailureKind =
  /** Android's per-app limit: the whole phone waits out its window. */
  | "android-limit"
  /** No signal, radio off or not available: the SIM waits, with back-off. */
  | "no-service"
  | "radio-off"
  /** A failure with no cause given: the SIM waits after a few in a row. */
  | "generic"
  /** About this text or number (a bad address, a refused short code): nothing to pause. */
  | "text";

/** Android's own window for its per-app limit (sms_outgoing_check_interval_ms). */
export const ANDROID_LIMIT_WINDOW_MS = 60_000;
/** Generic failures in a row on one SIM before it is paused. */
export const GENERIC_FAILURES_BEFORE_PAUSE = 3;
/** Back-off of a SIM with no service: 1 min, doubling, at most 30 min. */
export const BACKOFF_FIRST_MS = 60_000;
export const BACKOFF_MAX_MS = 30 * 60_000;

const has = (reason: string, ...codes: string[]) => codes.some((c) => reason.includes(c));

export function classifyFailure(reason: string | null | undefined): FailureKind {
  const r = (reason ?? "").toUpperCase();
  if (has(r, "RESULT_ERROR_LIMIT_EXCEEDED", "RESULT_UNEXPECTED_EVENT_STOP_SENDING", "LIMIT_EXCEEDED")) return "android-limit";
  if (has(r, "RESULT_ERROR_RADIO_OFF")) return "radio-off";
  if (has(r, "RESULT_ERROR_NO_SERVICE", "RESULT_RADIO_NOT_AVAILABLE", "RESULT_RIL_RADIO_NOT_AVAILABLE", "RESULT_NETWORK_REJECT", "RESULT_RIL_NETWORK_REJECT", "NO_SERVICE")) return "no-service";
  if (has(r, "RESULT_ERROR_GENERIC_FAILURE", "RESULT_MODEM_ERROR", "RESULT_NETWORK_ERROR", "RESULT_SYSTEM_ERROR", "RESULT_INTERNAL_ERROR", "RESULT_RIL_SMS_SEND_FAIL_RETRY", "RESULT_SMS_SEND_RETRY_FAILED", "RESULT_NO_RESOURCES")) return "generic";
  return "text";
}

/** The owner's words for a pause (the dashboard and `pauseReason`). */
export const PAUSE_REASONS: Record<Exclude<FailureKind, "text">, string> = {
  "android-limit": "android-limit",
  "no-service": "no-service",
  "radio-off": "radio-off",
  generic: "repeated-failures",
};

/** How long after the `failures`-th failure in a row (1-based) a SIM waits. */
export function backoffMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

/**
 * The pause a failure causes, given the failures in a row so far on that SIM (this one
 * included): null when none. `phone`: the whole phone waits (Android's limit is per app).
 */
export function pauseFor(kind: FailureKind, failuresInRow: number): { ms: number; phone: boolean; reason: string } | null {
  switch (kind) {
    case "android-limit":
      return { ms: ANDROID_LIMIT_WINDOW_MS, phone: true, reason: PAUSE_REASONS[kind] };
    case "no-service":
    case "radio-off":
      return { ms: backoffMs(failuresInRow), phone: false, reason: PAUSE_REASONS[kind] };
    case "generic":
      return failuresInRow >= GENERIC_FAILURES_BEFORE_PAUSE
        ? { ms: backoffMs(failuresInRow - GENERIC_FAILURES_BEFORE_PAUSE + 1), phone: false, reason: PAUSE_REASONS[kind] }
        : null;
    case "text":
      return null;
  }
}
