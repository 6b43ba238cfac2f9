/**
 * The shapes of a submitted value that a form's fields declare and the webhook checks: lengths in
 * characters as a person counts them, a field's `pattern` (compiled, and guarded against the
 * classic catastrophic-backtracking shape) and dates in a field's format. Shared by the form
 * definition's validation (form-definition.ts) and a submission's (submission.ts). Pure.
 */

/** Date formats a `date` field may declare; the first is the default. */
export const DATE_FORMATS = ["YYYY-MM-DD", "MM/DD/YYYY", "DD/MM/YYYY", "DD.MM.YYYY", "YYYY/MM/DD"] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];
export const DEFAULT_DATE_FORMAT: DateFormat = "YYYY-MM-DD";

/** Length in Unicode code points: "characters" as a person counts them (an emoji is one). */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Compile a form's `pattern`. Tried with the `u` flag first (so `\p{L}` means letters), then
 * without (so patterns like `[\w-.]` that only legacy syntax accepts still work). Null if neither.
 */
export function compilePattern(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern, "u");
  } catch {
    try {
      return new RegExp(pattern);
    } catch {
      return null;
    }
  }
}

/**
 * Cheap guard against catastrophic backtracking: true when a group that contains an unbounded
 * quantifier (`*`, `+`, `{n,}`) is itself repeated without bound, e.g. `(a+)+` or `(\w+\s?)*`.
 * It does not catch every slow pattern (overlapping alternations), only the classic shape.
 */
export function hasNestedUnboundedQuantifier(pattern: string): boolean {
  const stack: boolean[] = [false]; // per open group: does it contain an unbounded quantifier?
  const quantifierAt = (i: number): { unbounded: boolean; length: number } | null => {
    const c = pattern[i];
    if (c === "*" || c === "+") return { unbounded: true, length: 1 };
    if (c === "?") return { unbounded: false, length: 1 };
    if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m) return { unbounded: m[2] !== undefined && m[3] === "", length: m[0].length };
    }
    return null;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "[") {
      i++;
      while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if (c === "(") {
      stack.push(false);
      i++;
      if (pattern[i] === "?") i++; // (?: (?= (?! (?<…: not a quantifier
      continue;
    }
    if (c === ")") {
      const inner = stack.length > 1 ? stack.pop()! : false;
      i++;
      const q = quantifierAt(i);
      if (q?.unbounded && inner) return true;
      if (q) i += q.length + (pattern[i + q.length] === "?" ? 1 : 0);
      stack[stack.length - 1] = stack[stack.length - 1] || inner || !!q?.unbounded;
      continue;
    }
    const q = quantifierAt(i);
    if (q) {
      if (q.unbounded) stack[stack.length - 1] = true;
      i += q.length;
      continue;
    }
    i++;
  }
  return false;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const DATE_SHAPES: Record<DateFormat, { re: RegExp; order: ["y" | "m" | "d", "y" | "m" | "d", "y" | "m" | "d"] }> = {
  "YYYY-MM-DD": { re: /^(\d{4})-(\d{1,2})-(\d{1,2})$/, order: ["y", "m", "d"] },
  "MM/DD/YYYY": { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: ["m", "d", "y"] },
  "DD/MM/YYYY": { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, order: ["d", "m", "y"] },
  "DD.MM.YYYY": { re: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, order: ["d", "m", "y"] },
  "YYYY/MM/DD": { re: /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/, order: ["y", "m", "d"] },
};

/**
 * Parse `value` written in `format` (one- or two-digit day and month, four-digit year) and
 * return it as `YYYY-MM-DD` if it is a real calendar date, else null. ISO strings compare in date
 * order, so callers compare the results directly.
 */
export function parseDateInFormat(value: string, format: DateFormat = DEFAULT_DATE_FORMAT): string | null {
  const shape = Object.hasOwn(DATE_SHAPES, format) ? DATE_SHAPES[format] : undefined;
  if (!shape) return null;
  const m = shape.re.exec(value.trim());
  if (!m) return null;
  const parts = { y: 0, m: 0, d: 0 };
  shape.order.forEach((k, idx) => (parts[k] = Number(m[idx + 1])));
  const { y, m: month, d } = parts;
  if (y < 1 || month < 1 || month > 12 || d < 1) return null;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const max = month === 2 ? (leap ? 29 : 28) : DAYS_IN_MONTH[month - 1];
  if (d > max) return null;
  return `${String(y).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/**
 * A date field's `min`/`max` bound: written in the field's format, or in ISO `YYYY-MM-DD`
 * (so API clients can always use ISO). Returns the ISO form or null.
 */
export function parseDateBound(value: unknown, format: DateFormat = DEFAULT_DATE_FORMAT): string | null {
  if (typeof value !== "string") return null;
  return parseDateInFormat(value, format) ?? parseDateInFormat(value, "YYYY-MM-DD");
}
