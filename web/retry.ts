/**
 * How long the dashboard waits before asking a busy server again (429 or 503): the server's
 * Retry-After when it gives one, else 1 s, 2 s, 4 s … up to 30 s (docs/api-decisions.md, "The
 * dashboard never locks itself out; honest status"). Pure, so it is unit-tested.
 */
export const RETRY_CAP_SECONDS = 30;

/** The wait before try `attempt` (0-based): the server's Retry-After, else doubling from 1 s; never above the cap. */
export function retryDelaySeconds(attempt: number, retryAfter: string | null): number {
  const given = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : NaN;
  const s = Number.isFinite(given) && given > 0 ? given : 2 ** Math.min(attempt, 5);
  return Math.min(RETRY_CAP_SECONDS, Math.max(1, s));
}
