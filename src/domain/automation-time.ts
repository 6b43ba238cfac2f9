/**
 * An automation step's time, the parts without a form or a zone: durations ("30m", "2h", "2d",
 * "1w", "-1d") and the plain-words line for a step ("2 days after the form, at 10:00"). Kept apart
 * from automation-steps.ts, which checks bodies against the form's rules and imports phone-number
 * code, so the dashboard's builder says exactly what the engine reads without loading it
 * (docs/api-decisions.md, "Dashboard: Automations").
 */

/** The longest delay or offset: a year and a day (a yearly reminder still fits). */
export const MAX_DURATION_DAYS = 366;
/** A date field's step without sendAt goes out at this local time: a date has no time of day, and midnight texts wake people. */
export const DEFAULT_DATE_SEND_AT = "09:00";

const MINUTE_MS = 60_000;
const UNIT_MS = { m: MINUTE_MS, h: 60 * MINUTE_MS, d: 1_440 * MINUTE_MS, w: 10_080 * MINUTE_MS } as const;
type Unit = keyof typeof UNIT_MS;
const DURATION_RE = /^(-?)(\d{1,6})(m|h|d|w)$/;

/** The time fields of a step (automation-steps.ts's AutomationStep is one; its template is not read here). */
export interface StepTiming {
  template?: string;
  delay?: string;
  relativeTo?: string;
  offset?: string;
  sendAt?: string;
}

export interface Duration {
  negative: boolean;
  n: number;
  unit: Unit;
  /** Signed milliseconds. */
  ms: number;
}

/** "30m", "2h", "2d", "1w", "-1d" → the duration; null when malformed or longer than MAX_DURATION_DAYS. */
export function parseDuration(v: unknown, allowNegative: boolean): Duration | null {
  if (typeof v !== "string") return null;
  const m = DURATION_RE.exec(v.trim());
  if (!m) return null;
  const negative = m[1] === "-";
  if (negative && !allowNegative) return null;
  const n = Number(m[2]);
  const unit = m[3] as Unit;
  const abs = n * UNIT_MS[unit];
  if (abs > MAX_DURATION_DAYS * UNIT_MS.d) return null;
  return { negative, n, unit, ms: negative ? -abs : abs };
}

/** A human line for a step ("2 days after the form, at 10:00"), for messages read by owners. */
export function describeStepTime(step: StepTiming): string {
  const unitWord = (d: Duration) => `${d.n} ${{ m: "minute", h: "hour", d: "day", w: "week" }[d.unit]}${d.n === 1 ? "" : "s"}`;
  let s: string;
  if (step.delay !== undefined) s = `${unitWord(parseDuration(step.delay, false)!)} after the form`;
  else {
    const o = parseDuration(step.offset ?? "0d", true)!;
    s = o.n === 0 ? `on ${step.relativeTo}` : `${unitWord(o)} ${o.negative ? "before" : "after"} ${step.relativeTo}`;
  }
  return step.sendAt ? `${s}, at ${step.sendAt}` : s;
}
