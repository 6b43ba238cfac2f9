/** The clock is injected everywhere so tests can fix time. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();
export const iso = (ms: number): string => new Date(ms).toISOString();
