/**
 * Human-readable durations for analytics:
 * "4m 12s", "1h 5m", "2d 3h", or "n/a".
 *
 * Rules: round to whole seconds first; show the largest non-zero unit (d, h, m, s) and the next
 * smaller unit, leaving that second unit out when it is zero ("1h", "5m", "1d"). Smaller units are
 * truncated, not rounded ("1h 59m" for 7199 s). 0 → "0s". null / undefined / NaN / ±Infinity →
 * "n/a". A negative value (e.g. a sentAt reported before createdAt) keeps its sign: "-4m 12s".
 */
const UNITS: Array<[suffix: string, seconds: number]> = [
  ["d", 86_400],
  ["h", 3_600],
  ["m", 60],
  ["s", 1],
];

export function humanDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || typeof seconds !== "number" || !Number.isFinite(seconds)) {
    return "n/a";
  }
  let total = Math.round(Math.abs(seconds));
  if (total === 0) return "0s";
  const sign = seconds < 0 ? "-" : "";
  const parts: number[] = UNITS.map(([, size]) => {
    const q = Math.floor(total / size);
    total -= q * size;
    return q;
  });
  const first = parts.findIndex((p) => p > 0);
  let out = `${parts[first]}${UNITS[first][0]}`;
  if (first + 1 < UNITS.length && parts[first + 1] > 0) out += ` ${parts[first + 1]}${UNITS[first + 1][0]}`;
  return sign + out;
}
