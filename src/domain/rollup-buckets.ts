/**
 * The UTC buckets of the message rollups (migration 0015) and how any time range splits into them.
 *
 * Levels: 0 = day "YYYY-MM-DD", 1 = hour "YYYY-MM-DDTHH", 2 = quarter hour "YYYY-MM-DDTHH:MM"
 * (MM in 00, 15, 30, 45), all by a message's createdAt in UTC; the failed messages per reason of
 * the same buckets sit REASON_LEVEL (3) levels further (migration 0021), so that a range of one
 * level's bucket rows steps over no reason rows. A range [lo, hi) is the whole
 * days from day(lo) to day(hi) plus prefix(hi) − prefix(lo), where prefix(t) is [00:00 UTC of
 * day(t), t): a range of whole hours (or the day minus the hours after, when shorter), a range of
 * whole quarters, and
 * — only for an instant not on a quarter hour, which no zone offset since 1972 produces — a
 * residue range the caller counts from the messages themselves. Exact in every zone.
 *
 * Pure: no clock, no database.
 */

export type RollupLevel = 0 | 1 | 2;
export const LEVEL_DAY: RollupLevel = 0;
export const LEVEL_HOUR: RollupLevel = 1;
export const LEVEL_QUARTER: RollupLevel = 2;
/** Added to a level for its reason rows: 3 day, 4 hour, 5 quarter hour. */
export const REASON_LEVEL = 3;

const HOUR_MS = 3_600_000;
const QUARTER_MS = 900_000;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The three buckets [day, hour, quarter] of an ISO timestamp ("2026-03-08T07:44:10.123Z"). */
export function bucketsOf(createdAtIso: string): [string, string, string] {
  const minute = Number(createdAtIso.slice(14, 16));
  return [createdAtIso.slice(0, 10), createdAtIso.slice(0, 13), `${createdAtIso.slice(0, 14)}${pad2(Math.floor(minute / 15) * 15)}`];
}

/** The rollup rows of one level with bucket in [from, to), to add (sign 1) or take away (sign −1). */
export interface Term {
  sign: 1 | -1;
  level: RollupLevel;
  from: string;
  to: string;
}

/** [00:00 UTC of t's day, t) as rollup terms, plus a residue range to count directly (or null). */
export interface Prefix {
  day: string;
  terms: Term[];
  residue: [number, number] | null;
}

export function prefixOf(t: number): Prefix {
  const s = new Date(t).toISOString();
  const day = s.slice(0, 10);
  const hour = Number(s.slice(11, 13));
  const minute = Number(s.slice(14, 16));
  const quarter = Math.floor(minute / 15);
  const terms: Term[] = [];
  // Whichever reads fewer rows: the hours before, or the day minus the hours from here on.
  if (hour > 12) {
    terms.push({ sign: 1, level: LEVEL_DAY, from: day, to: `${day}~` });
    terms.push({ sign: -1, level: LEVEL_HOUR, from: `${day}T${pad2(hour)}`, to: `${day}T24` });
  } else if (hour > 0) {
    terms.push({ sign: 1, level: LEVEL_HOUR, from: `${day}T00`, to: `${day}T${pad2(hour)}` });
  }
  if (quarter > 0) terms.push({ sign: 1, level: LEVEL_QUARTER, from: `${day}T${pad2(hour)}:00`, to: `${day}T${pad2(hour)}:${pad2(quarter * 15)}` });
  const hourStart = t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
  const quarterStart = hourStart + quarter * QUARTER_MS;
  return { day, terms, residue: t > quarterStart ? [quarterStart, t] : null };
}
