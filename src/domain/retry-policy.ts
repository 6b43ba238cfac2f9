/**
 * Automatic retries of failed messages.
 *
 * A message reported `failed` with a transient reason goes back to the queue after a backoff
 * (1 min, 5 min, then 30 min for every further attempt) until it has been tried `maxAttempts`
 * times; only the last failure is final. Permanent reasons (an invalid number, an opt-out,
 * anything not listed below) are final at once.
 *
 * Pure: the caller passes the clock reading and the message's counters.
 */

/** Attempts per message unless the form (settings.maxAttempts) or the manual message says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 2;
/** Upper bound of settings.maxAttempts / a manual message's maxAttempts. */
export const MAX_ATTEMPTS_LIMIT = 10;
/** Wait before attempt 2, 3, and every later one. */
export const RETRY_BACKOFF_MS = [60_000, 5 * 60_000, 30 * 60_000] as const;

/**
 * Failure reasons worth another try: the phone never reported (`no-report`, see leases), and the
 * radio errors Android's SmsManager reports for a send that may well work a minute later.
 * Compared case-insensitively with `_`/`-`/spaces folded, and an Android constant's
 * `RESULT_ERROR_` prefix dropped, so "GENERIC_FAILURE", "Generic failure" and
 * "RESULT_ERROR_NO_SERVICE" all match.
 */
export const TRANSIENT_FAILURE_REASONS = ["no-report", "generic failure", "no service", "radio off"] as const;

function fold(reason: string): string {
  return reason
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, " ")
    .replace(/^result error /, "");
}

const TRANSIENT = new Set(TRANSIENT_FAILURE_REASONS.map(fold));

export function isTransientFailure(reason: string | null | undefined): boolean {
  return typeof reason === "string" && TRANSIENT.has(fold(reason));
}

/** Backoff before the attempt that follows `retryCount` earlier retries. */
export function retryBackoffMs(retryCount: number): number {
  return RETRY_BACKOFF_MS[Math.min(Math.max(retryCount, 0), RETRY_BACKOFF_MS.length - 1)];
}

export type RetryDecision = { retry: true; retryCount: number; scheduledFor: number } | { retry: false };

/**
 * Whether a failure of a message that has had `retryCount` retries so far (so `retryCount + 1`
 * attempts, this one included) is retried.
 */
export function decideRetry(input: { retryCount: number; maxAttempts: number; reason: string | null; now: number }): RetryDecision {
  const attempts = input.retryCount + 1;
  if (attempts >= input.maxAttempts || !isTransientFailure(input.reason)) return { retry: false };
  return { retry: true, retryCount: input.retryCount + 1, scheduledFor: input.now + retryBackoffMs(input.retryCount) };
}

/** Checks a maxAttempts value from a form setting or a request; returns an error message or null. */
export function maxAttemptsError(v: unknown): string | null {
  if (v === undefined) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_ATTEMPTS_LIMIT) {
    return `maxAttempts must be a whole number from 1 to ${MAX_ATTEMPTS_LIMIT}`;
  }
  return null;
}
