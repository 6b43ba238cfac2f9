/**
 * Quiet hours of a form (`settings.quietHours: {start: "21:00", end: "08:00"}`, in the form's
 * time zone): a message that would be scheduled inside them is scheduled for their end. Pure and
 * DST-aware: local times are turned into instants with the zone's offset at that moment, and a
 * local end time that a spring-forward skips means the moment the clocks jump.
 */
import { addDays, localDate, utcOffsetMinutesAt } from "./time-series";

export interface QuietHours {
  /** "HH:MM", 24-hour clock, local time. */
  start: string;
  end: string;
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export function isValidQuietHours(v: unknown): v is QuietHours {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).some((k) => k !== "start" && k !== "end")) return false;
  return typeof o.start === "string" && typeof o.end === "string" && HHMM.test(o.start) && HHMM.test(o.end) && o.start !== o.end;
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const offsetMs = (ms: number, tz: string) => utcOffsetMinutesAt(ms, tz) * MINUTE_MS;

/** Minutes since local midnight on the wall clock at instant ms. */
function wallMinutes(ms: number, tz: string): number {
  const local = ms + offsetMs(ms, tz);
  return Math.floor((((local % DAY_MS) + DAY_MS) % DAY_MS) / MINUTE_MS);
}

/**
 * The instant the wall clock in tz shows `minutes` past midnight on `date` (YYYY-MM-DD). Where
 * that time happens twice (fall back), the first; where it is skipped (spring forward), the
 * instant of the jump.
 */
export function instantOfLocalTime(date: string, minutes: number, tz: string): number {
  const [y, m, d] = date.split("-").map(Number);
  const wall = Date.UTC(y, m - 1, d) + minutes * MINUTE_MS;
  const before = offsetMs(wall - DAY_MS, tz);
  const after = offsetMs(wall + DAY_MS, tz);
  const found: number[] = [];
  for (const off of before === after ? [before] : [before, after]) {
    if (offsetMs(wall - off, tz) === off) found.push(wall - off);
  }
  if (found.length > 0) return Math.min(...found);
  // Skipped: search the transition between the two candidate instants, to the minute.
  let lo = Math.min(wall - before, wall - after);
  let hi = Math.max(wall - before, wall - after);
  const offLo = offsetMs(lo, tz);
  while (hi - lo > MINUTE_MS) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
    if (offsetMs(mid, tz) === offLo) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** `at` when it is outside the quiet hours, else the instant they end. */
export function afterQuietHours(at: number, tz: string, quiet: QuietHours | null): number {
  if (!quiet) return at;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  const now = wallMinutes(at, tz);
  const today = localDate(at, tz);
  if (start < end) {
    return now >= start && now < end ? Math.max(at, instantOfLocalTime(today, end, tz)) : at;
  }
  // Over midnight: [start, 24:00) ends tomorrow, [00:00, end) ends today.
  if (now >= start) return Math.max(at, instantOfLocalTime(addDays(today, 1), end, tz));
  if (now < end) return Math.max(at, instantOfLocalTime(today, end, tz));
  return at;
}
