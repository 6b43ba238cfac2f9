/**
 * Automations, the pure part: the body of POST/PUT /v1/automations checked (every problem at
 * once, each naming its step and field), durations ("30m", "2h", "2d", "1w", "-1d"), and the time
 * each step goes out, DST included (docs/api-decisions.md, "Automations"). No clock, no database.
 */
import { codePointLength } from "./form-definition";
import { fallbackProblems, MAX_FALLBACK_LENGTH } from "./template";
import { instantOfLocalTime } from "./quiet-hours";
import { addDays, localDate, utcOffsetMinutesAt } from "./time-series";
import { CONTACT_STATUSES } from "./contact-update";
import type { FieldDef, FieldError } from "./submission";
import { DEFAULT_DATE_SEND_AT, MAX_DURATION_DAYS, parseDuration } from "./automation-time";

// Durations and the plain-words line live in automation-time.ts (no phone-number code, so the
// dashboard's builder can use them without loading libphonenumber); re-exported for the engine.
export { DEFAULT_DATE_SEND_AT, MAX_DURATION_DAYS, describeStepTime, parseDuration, type Duration } from "./automation-time";

export const AUTOMATION_NAME_MAX = 200;
export const STEP_TEMPLATE_MAX = 1_600;
export const MAX_STEPS = 20;
const MINUTE_MS = 60_000;
const HHMM_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;
const BODY_KEYS = ["name", "formId", "isActive", "steps", "stopOnReply", "stopOnStatus", "restartOnResubmit"] as const;
const STEP_KEYS = ["template", "delay", "relativeTo", "offset", "sendAt"] as const;

export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/** A step as stored and shown. */
export interface AutomationStep {
  template: string;
  /** After the submission (or the start), e.g. "2d". */
  delay?: string;
  /** A `date` field of the form, with `offset` (negative: before). */
  relativeTo?: string;
  offset?: string;
  /** "HH:MM" in the form's zone. */
  sendAt?: string;
}

export interface AutomationInput {
  name: string;
  formId: string;
  isActive: boolean;
  steps: AutomationStep[];
  stopOnReply: boolean;
  stopOnStatus: ContactStatus[];
  restartOnResubmit: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const shown = (v: unknown) => (typeof v === "string" ? v.slice(0, 100) : v === undefined ? null : typeof v === "object" ? null : v);

/**
 * Checks a create body, or an update merged over the stored automation (`current`): the shape
 * only; whether `relativeTo` names a date field of the form is `checkStepFields`.
 */
export function parseAutomationBody(body: unknown, current?: AutomationInput): { ok: true; value: AutomationInput } | { ok: false; errors: FieldError[] } {
  if (!isObject(body)) return { ok: false, errors: [{ field: "body", message: "the body must be a JSON object", requirement: "object", provided: null }] };
  const errors: FieldError[] = [];
  for (const k of Object.keys(body)) {
    if (!(BODY_KEYS as readonly string[]).includes(k)) errors.push({ field: k, message: `unknown field '${k}'; allowed: ${BODY_KEYS.join(", ")}`, requirement: BODY_KEYS.join(", "), provided: k });
  }
  const pick = <K extends keyof AutomationInput>(k: K): unknown => (Object.hasOwn(body, k) ? body[k] : current?.[k]);
  const name = pick("name");
  if (typeof name !== "string" || name.trim() === "" || codePointLength(name) > AUTOMATION_NAME_MAX) {
    errors.push({ field: "name", message: `name is required, 1-${AUTOMATION_NAME_MAX} characters`, requirement: `1-${AUTOMATION_NAME_MAX} characters`, provided: shown(name) });
  }
  const formId = pick("formId");
  if (typeof formId !== "string" || formId === "" || formId.length > 200) {
    errors.push({ field: "formId", message: "formId is required: the id of the form whose submissions start this automation", requirement: "a form id", provided: shown(formId) });
  }
  const bools: Record<string, boolean> = {};
  for (const [k, dflt] of [["isActive", true], ["stopOnReply", true], ["restartOnResubmit", false]] as const) {
    const v = pick(k);
    if (v === undefined) bools[k] = dflt;
    else if (typeof v === "boolean") bools[k] = v;
    else errors.push({ field: k, message: `${k} must be true or false`, requirement: "boolean", provided: shown(v) });
  }
  const rawStatus = pick("stopOnStatus") ?? [];
  let stopOnStatus: ContactStatus[] = [];
  if (!Array.isArray(rawStatus) || !rawStatus.every((s) => (CONTACT_STATUSES as readonly unknown[]).includes(s))) {
    errors.push({ field: "stopOnStatus", message: `stopOnStatus must be a list of contact statuses: ${CONTACT_STATUSES.join(", ")}`, requirement: `array of ${CONTACT_STATUSES.join(", ")}`, provided: shown(rawStatus) });
  } else stopOnStatus = [...new Set(rawStatus as ContactStatus[])];
  const rawSteps = pick("steps");
  const steps: AutomationStep[] = [];
  if (!Array.isArray(rawSteps) || rawSteps.length === 0 || rawSteps.length > MAX_STEPS) {
    errors.push({ field: "steps", message: `steps must be a list of 1 to ${MAX_STEPS} steps`, requirement: `1-${MAX_STEPS} steps`, provided: Array.isArray(rawSteps) ? `${rawSteps.length} steps` : shown(rawSteps) });
  } else {
    rawSteps.forEach((s, i) => {
      const step = parseStep(s, `steps[${i}]`, errors);
      if (step) steps.push(step);
    });
  }
  if (errors.length) return { ok: false, errors };
  // Reminders are not cancelled by a thank-you: an automation made only of date-relative steps
  // ("the day before the pickup") does not stop on a reply unless asked (docs/api-decisions.md,
  // "The owner hears back", reminders and backups).
  if (pick("stopOnReply") === undefined) bools.stopOnReply = defaultStopOnReply(steps);
  return {
    ok: true,
    value: {
      name: (name as string).trim(),
      formId: formId as string,
      isActive: bools.isActive,
      steps,
      stopOnReply: bools.stopOnReply,
      stopOnStatus,
      restartOnResubmit: bools.restartOnResubmit,
    },
  };
}

/** stopOnReply when not given: false for an automation made only of date-relative steps, else true. */
export function defaultStopOnReply(steps: ReadonlyArray<{ relativeTo?: string }>): boolean {
  return !(steps.length > 0 && steps.every((st) => st.relativeTo !== undefined));
}

function parseStep(s: unknown, at: string, errors: FieldError[]): AutomationStep | null {
  if (!isObject(s)) {
    errors.push({ field: at, message: `${at} must be an object {template, delay | relativeTo + offset, sendAt?}`, requirement: "object", provided: null });
    return null;
  }
  const before = errors.length;
  for (const k of Object.keys(s)) {
    if (!(STEP_KEYS as readonly string[]).includes(k)) errors.push({ field: `${at}.${k}`, message: `unknown field '${k}' in ${at}; allowed: ${STEP_KEYS.join(", ")}`, requirement: STEP_KEYS.join(", "), provided: k });
  }
  const { template, delay, relativeTo, offset, sendAt } = s;
  if (typeof template !== "string" || template.trim() === "" || codePointLength(template) > STEP_TEMPLATE_MAX) {
    errors.push({ field: `${at}.template`, message: `${at}.template is required, 1-${STEP_TEMPLATE_MAX} characters`, requirement: `1-${STEP_TEMPLATE_MAX} characters`, provided: shown(template) });
  } else {
    for (const p of fallbackProblems(template)) {
      errors.push({
        field: `${at}.template`,
        message: `${at}.template: "${p}" is not a valid fallback; write {{name | text}} with 1-${MAX_FALLBACK_LENGTH} characters of text and no {, }, | or line break`,
        requirement: "{{name | text}}",
        provided: p,
      });
    }
  }
  if (delay !== undefined && relativeTo !== undefined) {
    errors.push({ field: `${at}.delay`, message: `${at} has both delay and relativeTo; give delay (after the submission) or relativeTo with offset (around a date), not both`, requirement: "delay or relativeTo", provided: shown(delay) });
  } else if (delay === undefined && relativeTo === undefined) {
    errors.push({ field: `${at}.delay`, message: `${at} needs a time: delay (e.g. "2d" after the submission) or relativeTo a date field with an offset (e.g. "-1d")`, requirement: "delay or relativeTo", provided: null });
  } else if (delay !== undefined) {
    if (parseDuration(delay, false) === null) {
      errors.push({ field: `${at}.delay`, message: `${at}.delay must be a duration such as 30m, 2h, 2d or 1w (at most ${MAX_DURATION_DAYS} days, not negative)`, requirement: "number + m|h|d|w", provided: shown(delay) });
    }
    if (offset !== undefined) errors.push({ field: `${at}.offset`, message: `${at}.offset goes with relativeTo; a delay step has no offset`, requirement: "only with relativeTo", provided: shown(offset) });
  } else {
    if (typeof relativeTo !== "string" || relativeTo === "" || relativeTo.length > 64) {
      errors.push({ field: `${at}.relativeTo`, message: `${at}.relativeTo must name a date field of the form`, requirement: "a date field's name", provided: shown(relativeTo) });
    }
    if (offset !== undefined && parseDuration(offset, true) === null) {
      errors.push({ field: `${at}.offset`, message: `${at}.offset must be a duration such as -1d, -2h, 0d or 1w (negative = before the date; at most ${MAX_DURATION_DAYS} days)`, requirement: "[-]number + m|h|d|w", provided: shown(offset) });
    }
  }
  if (sendAt !== undefined && (typeof sendAt !== "string" || !HHMM_RE.test(sendAt))) {
    errors.push({ field: `${at}.sendAt`, message: `${at}.sendAt must be a time of day as HH:MM (24-hour clock, the form's time zone), e.g. 10:00`, requirement: "HH:MM", provided: shown(sendAt) });
  }
  if (errors.length > before) return null;
  const step: AutomationStep = { template: template as string };
  if (delay !== undefined) step.delay = (delay as string).trim();
  else {
    step.relativeTo = relativeTo as string;
    step.offset = offset === undefined ? "0d" : (offset as string).trim();
  }
  if (sendAt !== undefined) step.sendAt = sendAt as string;
  return step;
}

/** Each `relativeTo` must name a `date` field of the form (400 naming the step otherwise). */
export function checkStepFields(steps: AutomationStep[], fields: FieldDef[]): FieldError[] {
  const errors: FieldError[] = [];
  const dates = fields.filter((f) => f.type === "date").map((f) => f.name);
  steps.forEach((s, i) => {
    if (s.relativeTo === undefined) return;
    const field = fields.find((f) => f.name === s.relativeTo);
    if (!field || field.type !== "date") {
      errors.push({
        field: `steps[${i}].relativeTo`,
        message: field
          ? `steps[${i}].relativeTo: the form's field '${s.relativeTo}' is a ${field.type} field, not a date field`
          : `steps[${i}].relativeTo: the form has no field '${s.relativeTo}'` + (dates.length ? `; its date fields: ${dates.join(", ")}` : "; it has no date field"),
        requirement: dates.length ? `one of ${dates.join(", ")}` : "a date field of the form",
        provided: s.relativeTo,
      });
    }
  });
  return errors;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** What decides a step's time for one run. */
export interface StepTimeInput {
  /** When the run started: the submission's time, or the start request's. Epoch ms. */
  start: number;
  now: number;
  /** The form's IANA zone (sendAt and dates are local to it). */
  timezone: string;
  /** The contact's value of the step's date field as YYYY-MM-DD (relativeTo steps); null when missing. */
  date: string | null;
}

export type StepTime = { at: number } | { skipped: "past" | "no-date" };

/**
 * The instant a step goes out. A delay in days or weeks counts calendar days in the form's zone
 * (2d at 10:00 = the day after tomorrow at 10:00 local, also across a clock change); minutes and
 * hours are elapsed time, and a sendAt already passed that day moves to the next. A date step
 * starts from the date at sendAt (09:00 without one), then its offset: days as calendar days,
 * hours and minutes as elapsed time. A time that has passed by more than the step's own delay or
 * offset is skipped (`past`), not sent late; one passed by less goes now.
 */
export function stepTime(step: AutomationStep, input: StepTimeInput): StepTime {
  const tz = input.timezone;
  let at: number;
  let slack: number;
  if (step.delay !== undefined) {
    const d = parseDuration(step.delay, false)!;
    slack = d.ms;
    if (d.unit === "d" || d.unit === "w") {
      const days = d.unit === "w" ? d.n * 7 : d.n;
      if (step.sendAt !== undefined) at = instantOfLocalTime(addDays(localDate(input.start, tz), days), minutesOf(step.sendAt), tz);
      else at = sameWallTimeDaysLater(input.start, days, tz);
    } else {
      at = input.start + d.ms;
      if (step.sendAt !== undefined) {
        const day = localDate(at, tz);
        let t = instantOfLocalTime(day, minutesOf(step.sendAt), tz);
        if (t < at) t = instantOfLocalTime(addDays(day, 1), minutesOf(step.sendAt), tz);
        at = t;
      }
    }
  } else {
    if (input.date === null) return { skipped: "no-date" };
    const o = parseDuration(step.offset ?? "0d", true)!;
    slack = Math.abs(o.ms);
    const time = minutesOf(step.sendAt ?? DEFAULT_DATE_SEND_AT);
    if (o.unit === "d" || o.unit === "w") {
      const days = (o.unit === "w" ? o.n * 7 : o.n) * (o.negative ? -1 : 1);
      at = instantOfLocalTime(addDays(input.date, days), time, tz);
    } else {
      at = instantOfLocalTime(input.date, time, tz) + o.ms;
    }
  }
  if (at < input.now) {
    if (input.now - at > slack) return { skipped: "past" };
    return { at: input.now };
  }
  return { at };
}

/** The same local wall time `days` calendar days later (DST-safe: 15:00 stays 15:00). */
function sameWallTimeDaysLater(ms: number, days: number, tz: string): number {
  const local = ms + utcOffsetMinutesAt(ms, tz) * MINUTE_MS;
  const intoDay = ((local % 86_400_000) + 86_400_000) % 86_400_000;
  const minutes = Math.floor(intoDay / MINUTE_MS);
  return instantOfLocalTime(addDays(localDate(ms, tz), days), minutes, tz) + (intoDay - minutes * MINUTE_MS);
}
