/**
 * Broadcasts: one text to every contact of a segment. Pure rules: the request's
 * validation, the template's contact variables, and when each recipient's message is due.
 */
import type { FieldError } from "./submission";
import { parseFilter, type ContactFilter } from "./contact-query";
import { renderTemplate, templateVariables } from "./template";
import { codePointLength, PRIORITIES, type Priority } from "./form-definition";
import { parseIsoTimestamp } from "./message-transitions";
import { enumError } from "./query-params";
import { maxAttemptsError } from "./retry-policy";
import { afterQuietHours, instantOfLocalTime, isValidQuietHours, type QuietHours } from "./quiet-hours";
import { addDays, isValidTimeZone, localDate } from "./time-series";
import { MAX_RECIPIENT_LIMIT_PER_DAY } from "./protection";
import { fullName } from "./contact-name";

export const BROADCAST_NAME_MAX = 200;
export const BROADCAST_CONTENT_MAX = 1_600;
/** Highest per-broadcast sending pace (messages a minute); above it the phone's own rate decides. */
export const BROADCAST_RATE_MAX = 10_000;
/** Rendered examples a dry run answers with. */
export const DRY_RUN_SAMPLES = 3;

/** Contact variables a broadcast's content may use besides `customFields.<name>`. */
export const BROADCAST_VARIABLES = ["firstName", "lastName", "fullName", "phoneNumber", "email"] as const;

const SEGMENT_KEYS = ["status", "tags", "formId", "createdAfter", "createdBefore", "search"] as const;
const BODY_KEYS = ["name", "content", "segment", "priority", "scheduledFor", "sendRatePerMinute", "maxAttempts", "quietHours", "timezone", "recipientLimitPerDay"] as const;

export interface BroadcastRequest {
  name: string;
  content: string;
  /** The segment as posted (kept on the broadcast, shown back). */
  segmentInput: Record<string, unknown>;
  filter: ContactFilter;
  priority: Priority;
  /** Epoch ms; null = now. */
  scheduledFor: number | null;
  sendRatePerMinute: number | null;
  maxAttempts: number | null;
  /** undefined = not given (the segment's form decides); null = none. */
  quietHours: QuietHours | null | undefined;
  timezone: string | undefined;
  recipientLimitPerDay: number | null | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Validates a POST /v1/broadcasts body; every problem at once. */
export function parseBroadcastRequest(body: unknown): { ok: true; value: BroadcastRequest } | { ok: false; errors: FieldError[] } {
  if (!isObject(body)) return { ok: false, errors: [{ field: "body", message: "the body must be a JSON object", requirement: "object", provided: null }] };
  const errors: FieldError[] = [];
  for (const k of Object.keys(body)) {
    if (!(BODY_KEYS as readonly string[]).includes(k)) errors.push({ field: k, message: `unknown field '${k}'; allowed: ${BODY_KEYS.join(", ")}`, requirement: BODY_KEYS.join(", "), provided: k });
  }
  const { name, content, segment, priority, scheduledFor, sendRatePerMinute, maxAttempts, quietHours, timezone, recipientLimitPerDay } = body;
  if (typeof name !== "string" || name.trim() === "" || codePointLength(name) > BROADCAST_NAME_MAX) {
    errors.push({ field: "name", message: `name is required, 1-${BROADCAST_NAME_MAX} characters`, requirement: `1-${BROADCAST_NAME_MAX} characters`, provided: typeof name === "string" ? name.slice(0, 100) : (name ?? null) });
  }
  if (typeof content !== "string" || content.trim() === "" || codePointLength(content) > BROADCAST_CONTENT_MAX) {
    errors.push({
      field: "content",
      message: `content is required, 1-${BROADCAST_CONTENT_MAX} characters`,
      requirement: `1-${BROADCAST_CONTENT_MAX} characters`,
      provided: typeof content === "string" ? `${codePointLength(content)} characters` : (content ?? null),
    });
  } else {
    const unknown = templateVariables(content).filter((v) => !isBroadcastVariable(v));
    if (unknown.length) {
      errors.push({
        field: "content",
        message: `content uses ${unknown.map((v) => `{{${v}}}`).join(", ")}; a broadcast can use ${BROADCAST_VARIABLES.map((v) => `{{${v}}}`).join(", ")} and {{customFields.<name>}}`,
        requirement: "contact variables only",
        provided: unknown.join(", "),
      });
    }
  }
  const { filter, segmentInput } = parseSegment(segment, errors);
  if (priority !== undefined && !(PRIORITIES as readonly unknown[]).includes(priority)) errors.push(enumError("priority", PRIORITIES, priority));
  let when: number | null = null;
  if (scheduledFor !== undefined && scheduledFor !== null) {
    when = parseIsoTimestamp(scheduledFor);
    if (when === null) errors.push({ field: "scheduledFor", message: "scheduledFor must be an ISO 8601 timestamp", requirement: "ISO 8601 timestamp", provided: scheduledFor });
  }
  if (sendRatePerMinute !== undefined && sendRatePerMinute !== null) {
    if (typeof sendRatePerMinute !== "number" || !Number.isInteger(sendRatePerMinute) || sendRatePerMinute < 1 || sendRatePerMinute > BROADCAST_RATE_MAX) {
      errors.push({ field: "sendRatePerMinute", message: `sendRatePerMinute must be a whole number from 1 to ${BROADCAST_RATE_MAX}`, requirement: `integer 1-${BROADCAST_RATE_MAX}`, provided: sendRatePerMinute });
    }
  }
  const attemptsErr = maxAttemptsError(maxAttempts);
  if (attemptsErr) errors.push({ field: "maxAttempts", message: attemptsErr, requirement: "whole number from 1 to 10", provided: maxAttempts ?? null });
  if (quietHours !== undefined && quietHours !== null && !isValidQuietHours(quietHours)) {
    errors.push({ field: "quietHours", message: 'quietHours must be {start: "HH:MM", end: "HH:MM"} (24-hour clock, start and end differ), or null for none', requirement: '{start: "HH:MM", end: "HH:MM"}', provided: null });
  }
  if (timezone !== undefined && !isValidTimeZone(timezone)) {
    errors.push({ field: "timezone", message: "timezone must be an IANA time zone such as UTC or America/New_York", requirement: "IANA time zone", provided: typeof timezone === "string" ? timezone.slice(0, 100) : null });
  }
  if (
    recipientLimitPerDay !== undefined &&
    recipientLimitPerDay !== null &&
    !(typeof recipientLimitPerDay === "number" && Number.isInteger(recipientLimitPerDay) && recipientLimitPerDay >= 1 && recipientLimitPerDay <= MAX_RECIPIENT_LIMIT_PER_DAY)
  ) {
    errors.push({ field: "recipientLimitPerDay", message: `recipientLimitPerDay must be a whole number from 1 to ${MAX_RECIPIENT_LIMIT_PER_DAY}, or null for none`, requirement: `integer 1-${MAX_RECIPIENT_LIMIT_PER_DAY}`, provided: recipientLimitPerDay });
  }
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    value: {
      name: (name as string).trim(),
      content: content as string,
      segmentInput,
      filter,
      priority: (priority as Priority | undefined) ?? "normal",
      scheduledFor: when,
      sendRatePerMinute: (sendRatePerMinute as number | undefined) ?? null,
      maxAttempts: (maxAttempts as number | undefined) ?? null,
      quietHours: quietHours as QuietHours | null | undefined,
      timezone: timezone as string | undefined,
      recipientLimitPerDay: recipientLimitPerDay as number | null | undefined,
    },
  };
}

/**
 * A segment of contacts as posted (`{status?, tags?, formId?, createdAfter?, createdBefore?,
 * search?}`; none = every contact): the broadcasts' and the automations' start use the same one.
 * Problems are pushed to `errors` under `segment.<filter>`.
 */
export function parseSegment(segment: unknown, errors: FieldError[]): { filter: ContactFilter; segmentInput: Record<string, unknown> } {
  let filter: ContactFilter = {};
  let segmentInput: Record<string, unknown> = {};
  if (segment === undefined || segment === null) return { filter, segmentInput };
  if (!isObject(segment)) {
    errors.push({ field: "segment", message: "segment must be an object", requirement: `object with ${SEGMENT_KEYS.join(", ")}`, provided: null });
    return { filter, segmentInput };
  }
  segmentInput = segment;
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(segment)) {
    if (!(SEGMENT_KEYS as readonly string[]).includes(k)) {
      errors.push({ field: `segment.${k}`, message: `unknown segment filter '${k}'; allowed: ${SEGMENT_KEYS.join(", ")}`, requirement: SEGMENT_KEYS.join(", "), provided: k });
    } else if (k === "tags" && Array.isArray(v)) {
      if (v.every((t) => typeof t === "string")) raw.tags = v.join(",");
      else errors.push({ field: "segment.tags", message: "tags must be a list of strings", requirement: "array of strings", provided: null });
    } else if (typeof v === "string") raw[k] = v;
    else errors.push({ field: `segment.${k}`, message: `segment.${k} must be a string`, requirement: "string", provided: v ?? null });
  }
  const segErrors: FieldError[] = [];
  filter = parseFilter(raw, segErrors);
  for (const e of segErrors) errors.push({ ...e, field: `segment.${e.field}` });
  return { filter, segmentInput };
}

function isBroadcastVariable(name: string): boolean {
  if ((BROADCAST_VARIABLES as readonly string[]).includes(name)) return true;
  return name.startsWith("customFields.") && name.length > "customFields.".length;
}

export interface BroadcastContact {
  phoneNumber: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  customFields: Record<string, unknown>;
}

/** The contact's text: `{{fullName}}` is first and last name joined; a missing value renders as nothing (or its `| fallback`). */
export function renderBroadcast(content: string, c: BroadcastContact): { content: string; variablesUsed: string[] } {
  const vars: Record<string, string> = {};
  if (c.firstName) vars.firstName = c.firstName;
  if (c.lastName) vars.lastName = c.lastName;
  const full = fullName(c.firstName, c.lastName);
  if (full) vars.fullName = full;
  vars.phoneNumber = c.phoneNumber;
  if (c.email) vars.email = c.email;
  for (const [k, v] of Object.entries(c.customFields)) if (v !== null && v !== undefined && v !== "") vars[`customFields.${k}`] = String(v);
  return renderTemplate(content, vars);
}

/**
 * When the n-th recipient (0-based) is due: all at `start` without a pace; with one, `rate` a
 * minute (the phone's own send rate still caps what it is handed); a time inside the quiet hours
 * moves to their end.
 */
export function recipientDueAt(start: number, n: number, ratePerMinute: number | null, quiet: { hours: QuietHours | null; timezone: string } = { hours: null, timezone: "UTC" }): number {
  const paced = ratePerMinute ? start + Math.floor(n / ratePerMinute) * 60_000 : start;
  return afterQuietHours(paced, quiet.timezone, quiet.hours);
}

/** What the confirmation needs to know about how a broadcast's texts will leave. */
export interface SendingPlanInput {
  /** Texts that will be queued. */
  count: number;
  /** Epoch ms of the first text (the broadcast's scheduledFor, or now). */
  start: number;
  /** The broadcast's own pace (messages a minute); null = all due at the start. */
  pacePerMinute: number | null;
  quiet: { hours: QuietHours | null; timezone: string };
  /** What the connected phones may send a minute together (the account's cap included); 0 = no phone connected. */
  phoneRatePerMinute: number;
}

export interface SendingPlan {
  /** Texts whose time falls inside the quiet hours and waits for their end. */
  delayedByQuietHours: number;
  /** When the first text is due. */
  firstDueAt: number;
  /** When the last one should have left; null when no phone is connected (texts wait until one is). */
  finishesAt: number | null;
}

/**
 * The figures of the confirmation, from the same rule that schedules the texts (recipientDueAt):
 * recipients due at one instant form a group (all of them without a pace, `pace` a minute with
 * one); the phones take each group when it is due, at their rate, after what the groups before
 * left waiting. Queued texts of other sources are not counted (docs/api-decisions.md, "Confirmed
 * broadcasts").
 *
 * Runs of groups are taken whole, from one edge of the quiet hours to the next, so 100,000
 * recipients at one a minute cost a few calls a day of sending, not one per group (a loop per
 * group took 0.8 s there).
 */
export function planSending(p: SendingPlanInput): SendingPlan {
  const rate = p.phoneRatePerMinute;
  const firstDueAt = recipientDueAt(p.start, 0, p.pacePerMinute, p.quiet);
  if (p.count === 0) return { delayedByQuietHours: 0, firstDueAt, finishesAt: rate > 0 ? firstDueAt : null };
  const minutesFor = (n: number) => (n / rate) * MINUTE_MS;
  if (!p.pacePerMinute) {
    return { delayedByQuietHours: firstDueAt !== p.start ? p.count : 0, firstDueAt, finishesAt: rate > 0 ? Math.ceil(firstDueAt + minutesFor(p.count)) : null };
  }
  const pace = p.pacePerMinute;
  const groups = Math.ceil(p.count / pace);
  const sizeOf = (g: number) => Math.min(pace, p.count - g * pace);
  let delayed = 0;
  let t = -Infinity; // when the phones are through what is due so far
  /** Groups g..end-1, the i-th due at first + i minutes (all but perhaps the very last group are full). */
  const spaced = (g: number, end: number, first: number) => {
    const full = end === groups && sizeOf(groups - 1) < pace ? end - 1 : end;
    const k = full - g;
    if (k > 0) {
      // t after k equal groups a minute apart: the later of the backlog carried through all of
      // them and the last group's own time (the maximum of a linear run is at one of its ends).
      t = Math.max(Math.max(t, first) + minutesFor(k * pace), first + (k - 1) * MINUTE_MS + minutesFor(pace));
    }
    if (full < end) t = Math.max(t, first + k * MINUTE_MS) + minutesFor(sizeOf(groups - 1));
  };
  let g = 0;
  while (g < groups) {
    const paced = p.start + g * MINUTE_MS;
    const due = afterQuietHours(paced, p.quiet.timezone, p.quiet.hours);
    if (due !== paced) {
      // Every group paced before the quiet hours end waits for their end.
      const end = Math.min(groups, g + Math.ceil((due - paced) / MINUTE_MS));
      let n = 0;
      for (let i = g; i < end; i++) n += sizeOf(i);
      delayed += n;
      if (rate > 0) t = Math.max(t, due) + minutesFor(n);
      g = end;
    } else {
      const end = Math.min(groups, g + Math.ceil((nextQuietStart(paced, p.quiet) - paced) / MINUTE_MS));
      if (rate > 0) spaced(g, end, paced);
      g = end;
    }
  }
  return { delayedByQuietHours: delayed, firstDueAt, finishesAt: rate > 0 ? Math.ceil(t) : null };
}

const MINUTE_MS = 60_000;

/** The first instant after `at` (outside the quiet hours) at which they begin; Infinity without any. */
function nextQuietStart(at: number, quiet: { hours: QuietHours | null; timezone: string }): number {
  if (!quiet.hours) return Infinity;
  const minutes = Number(quiet.hours.start.slice(0, 2)) * 60 + Number(quiet.hours.start.slice(3, 5));
  const today = localDate(at, quiet.timezone);
  const sameDay = instantOfLocalTime(today, minutes, quiet.timezone);
  return sameDay > at ? sameDay : instantOfLocalTime(addDays(today, 1), minutes, quiet.timezone);
}
