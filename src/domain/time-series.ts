/**
 * Calendar days in an IANA time zone, for analytics series and per-day limits.
 *
 * Timestamps are UTC epoch ms; a "date" is a "YYYY-MM-DD" string of the proleptic Gregorian
 * calendar as seen in the zone. Days are not assumed to be 24 h long: DST days are 23 or 25 h,
 * and in a few zones a DST change happens at midnight, so a day can start at 01:00 local.
 *
 * Pure: uses Intl only (formatters cached per zone), never the current time.
 */

export type Period = "1d" | "7d" | "30d" | "90d" | "1y";
export const PERIODS: Period[] = ["1d", "7d", "30d", "90d", "1y"];
export const PERIOD_DAYS: Record<Period, number> = { "1d": 1, "7d": 7, "30d": 30, "90d": 90, "1y": 365 };

export function isPeriod(value: unknown): value is Period {
  return typeof value === "string" && (PERIODS as string[]).includes(value);
}

const DAY_MS = 86_400_000;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(tz, f);
  }
  return f;
}

/**
 * True for a time zone name Intl knows (IANA names such as "America/New_York", "Etc/GMT+5",
 * "UTC"; matched case-insensitively by Intl). Raw offsets ("+05:00") are refused: the API asks for
 * an IANA zone.
 */
export function isValidTimeZone(tz: unknown): tz is string {
  if (typeof tz !== "string" || tz.length === 0 || tz.length > 64) return false;
  if (/^[+-]/.test(tz) || /^\d/.test(tz)) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** The canonical spelling of a valid zone ("america/new_york" → "America/New_York"), or null. */
export function canonicalTimeZone(tz: string): string | null {
  if (!isValidTimeZone(tz)) return null;
  return formatter(tz).resolvedOptions().timeZone;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(ms: number, tz: string): WallClock {
  if (!Number.isFinite(ms)) throw new RangeError(`invalid timestamp: ${ms}`);
  const out: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const p of formatter(tz).formatToParts(ms)) {
    switch (p.type) {
      case "year":
        out.year = Number(p.value);
        break;
      case "month":
        out.month = Number(p.value);
        break;
      case "day":
        out.day = Number(p.value);
        break;
      case "hour":
        out.hour = Number(p.value) % 24; // some engines print 24 for midnight
        break;
      case "minute":
        out.minute = Number(p.value);
        break;
      case "second":
        out.second = Number(p.value);
        break;
    }
  }
  return out;
}

/** Offset of the zone at instant ms, in ms (local − UTC). */
function offsetMs(ms: number, tz: string): number {
  const w = wallClock(ms, tz);
  const wallAsUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const base = ms - (((ms % 1000) + 1000) % 1000); // whole second, as the wall clock shows
  return wallAsUtc - base;
}

/** Offset of the zone from UTC at instant ms, in minutes (New York in winter: −300). */
export function utcOffsetMinutesAt(ms: number, tz: string): number {
  return offsetMs(ms, tz) / 60_000;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

function formatDate(year: number, month: number, day: number): string {
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** "YYYY-MM-DD" of instant ms as seen in tz. */
export function localDate(ms: number, tz: string): string {
  const w = wallClock(ms, tz);
  return formatDate(w.year, w.month, w.day);
}

/** Parses "YYYY-MM-DD" (a real calendar date) to [year, month, day]; throws RangeError otherwise. */
function parseDate(dateStr: string): [number, number, number] {
  const m = DATE_RE.exec(dateStr);
  if (!m) throw new RangeError(`invalid date (want YYYY-MM-DD): ${dateStr}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) {
    throw new RangeError(`invalid date: ${dateStr}`);
  }
  return [y, mo, d];
}

export function isValidDate(dateStr: string): boolean {
  try {
    parseDate(dateStr);
    return true;
  } catch {
    return false;
  }
}

/** Calendar arithmetic on "YYYY-MM-DD" strings (no zone involved). */
export function addDays(dateStr: string, n: number): string {
  const [y, m, d] = parseDate(dateStr);
  const t = new Date(Date.UTC(y, m - 1, d) + n * DAY_MS);
  return formatDate(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate());
}

/**
 * Epoch ms of the first instant of `dateStr` in tz: 00:00 local, or — where a DST change skips
 * midnight — the instant of the change (the day then starts at 01:00 local). Where midnight
 * occurs twice (a fall-back at midnight), the earlier one.
 */
export function startOfLocalDay(dateStr: string, tz: string): number {
  // A day's start in a zone never changes while the process runs (its tz data is fixed): memoized,
  // so a year of analytics does not ask Intl ~1,500 times per request.
  const key = `${tz}\u0000${dateStr}`;
  const hit = dayStarts.get(key);
  if (hit !== undefined) return hit;
  const t = computeStartOfLocalDay(dateStr, tz);
  if (dayStarts.size >= DAY_STARTS_MAX) dayStarts.clear();
  dayStarts.set(key, t);
  return t;
}

/** Memo of startOfLocalDay: a few zones × a few years of days. */
const DAY_STARTS_MAX = 50_000;
const dayStarts = new Map<string, number>();

function computeStartOfLocalDay(dateStr: string, tz: string): number {
  const [y, m, d] = parseDate(dateStr);
  const wall = Date.UTC(y, m - 1, d); // local midnight, read as if it were UTC
  // Offsets in force around that wall time. Zone offsets are within ±14 h, so a day either side
  // covers both sides of any transition near midnight.
  const before = offsetMs(wall - DAY_MS, tz);
  const after = offsetMs(wall + DAY_MS, tz);
  const candidates: number[] = [];
  for (const off of before === after ? [before] : [before, after]) {
    const t = wall - off;
    if (offsetMs(t, tz) === off) candidates.push(t);
  }
  if (candidates.length === 0) {
    // Rare: the offset a day away differs from the one at midnight (two transitions in two days),
    // or midnight itself does not exist. Fall back to iterating from the offset at the guess.
    let t = wall - before;
    for (let i = 0; i < 4; i++) {
      const off = offsetMs(t, tz);
      const next = wall - off;
      if (next === t) break;
      t = next;
    }
    if (localDate(t, tz) === dateStr && offsetMs(t, tz) === wall - t) candidates.push(t);
  }
  if (candidates.length > 0) return Math.min(...candidates);
  // Midnight is skipped: find the first instant whose local date is dateStr. It lies within
  // [wall − 14 h − 2 h, wall + 14 h + 2 h]; binary search to the millisecond.
  let lo = wall - 16 * 3_600_000; // local date < dateStr here
  let hi = wall + 16 * 3_600_000; // local date ≥ dateStr here
  while (localDate(lo, tz) >= dateStr) lo -= DAY_MS / 2;
  while (localDate(hi, tz) < dateStr) hi += DAY_MS / 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDate(mid, tz) >= dateStr) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Start of the local day after the one containing instant ms. */
export function nextDayStart(ms: number, tz: string): number {
  return startOfLocalDay(addDays(localDate(ms, tz), 1), tz);
}

/** Start of the local day containing instant ms. */
export function dayStart(ms: number, tz: string): number {
  return startOfLocalDay(localDate(ms, tz), tz);
}

/** The `count` calendar dates ending with `lastDate`, oldest first. */
export function dateRange(lastDate: string, count: number): string[] {
  const out: string[] = [];
  for (let i = count - 1; i >= 0; i--) out.push(addDays(lastDate, -i));
  return out;
}

/**
 * The period's calendar days in tz: the N days ending today (today included), oldest first.
 * `from` = start of the oldest day, `to` = now. "1d" is today so far; "1y" is 365 days.
 */
export function periodWindow(period: Period, now: number, tz: string): { from: number; to: number; days: string[] } {
  const n = PERIOD_DAYS[period];
  if (!n) throw new RangeError(`invalid period: ${period}`);
  const days = dateRange(localDate(now, tz), n);
  return { from: startOfLocalDay(days[0], tz), to: now, days };
}

/**
 * Start instants of each day, plus the end of the last day (the start of the day after it):
 * length days.length + 1. Days must be in ascending order (as from periodWindow); bucket i is
 * [b[i], b[i+1]).
 */
export function dayBoundaries(days: string[], tz: string): number[] {
  if (days.length === 0) return [];
  const out = days.map((d) => startOfLocalDay(d, tz));
  out.push(startOfLocalDay(addDays(days[days.length - 1], 1), tz));
  return out;
}

/** Index i with boundaries[i] ≤ ms < boundaries[i+1]; −1 when outside (or fewer than 2 boundaries). */
export function bucketIndex(boundaries: number[], ms: number): number {
  const n = boundaries.length;
  if (n < 2 || !(ms >= boundaries[0]) || ms >= boundaries[n - 1]) return -1;
  let lo = 0;
  let hi = n - 1; // invariant: boundaries[lo] ≤ ms < boundaries[hi]
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (boundaries[mid] <= ms) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * One entry per day, in the order of `days`, taking the row for that date or `zero()` when
 * there is none. The `date` key comes first and always wins over a `date` inside a row.
 */
export function fillDaily<T extends object>(
  days: string[],
  rows: Map<string, T>,
  zero: () => T,
): Array<{ date: string } & T> {
  return days.map((date) => {
    const row = rows.get(date) ?? zero();
    const entry = { date, ...row } as { date: string } & T;
    entry.date = date;
    return entry;
  });
}

/**
 * Groups UTC timestamps into the given days: returns a Map date → count, for the cases where
 * SQL returns raw timestamps. Timestamps outside the days are ignored.
 */
export function countByDay(days: string[], tz: string, timestamps: Iterable<number>): Map<string, number> {
  const b = dayBoundaries(days, tz);
  const counts = new Map<string, number>();
  for (const t of timestamps) {
    const i = bucketIndex(b, t);
    if (i >= 0) counts.set(days[i], (counts.get(days[i]) ?? 0) + 1);
  }
  return counts;
}
