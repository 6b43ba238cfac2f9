/**
 * Per-form daily limit (`settings.rateLimitPerDay`): a submission past the limit is
 * still accepted, its message is scheduled for the start of the next local day that has room.
 * Days are counted by the day a message is scheduled for (the day it will be sent), in the form's
 * time zone. Pure: the count comes from the caller.
 */
import { dayStart, nextDayStart } from "./time-series";

/** How far ahead we look for a day with room before giving up and taking the last day tried. */
export const MAX_DEFERRAL_DAYS = 3_660;

/**
 * The instant to schedule a message for: `candidate` when its local day has fewer than `limit`
 * messages, else the start of the first later day that has (the first allowed instant of it). `countBetween(from, to)` counts the
 * form's messages scheduled in [from, to) (epoch ms).
 */
export function deferForDailyLimit(
  candidate: number,
  timeZone: string,
  limit: number,
  countBetween: (from: number, to: number) => number,
  maxDays = MAX_DEFERRAL_DAYS,
  /** Moves an instant out of hours the form does not send in (quiet hours); identity by default. */
  allowed: (at: number) => number = (at) => at,
): number {
  let at = allowed(candidate);
  for (let i = 0; i < maxDays; i++) {
    const end = nextDayStart(at, timeZone);
    if (countBetween(dayStart(at, timeZone), end) < limit) return at;
    at = allowed(end);
  }
  return at;
}
