/** The clock is injected everywhere so tests can fix time. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The updatedAt of a change made at `now` to a row last updated at `previous` (ISO): strictly
 * later than `previous`, so two changes within one millisecond still read as an update.
 */
export const nextUpdatedAt = (now: number, previous: string | null | undefined): string =>
  iso(previous ? Math.max(now, Date.parse(previous) + 1) : now);
