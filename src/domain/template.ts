/**
 * Message templates: `{{ name }}` placeholders replaced by submitted values.
 *
 * Rules: whitespace inside the braces is trimmed, names are
 * case-sensitive, a missing variable becomes empty text. Anything that is not a well-formed
 * placeholder (`{{`, `{{}}`, `{{ two words }}`) stays as literal text. One pass, no recursion:
 * a value that itself contains `{{x}}` is inserted verbatim.
 *
 * Textwire's addition: `{{ name | fallback }}` prints the fallback text when the value
 * is missing or blank. The fallback is 1–100 characters with no `{`, `}`, `|` or line break, its
 * ends trimmed; form definitions refuse a malformed one (`fallbackProblems`).
 */

/**
 * A placeholder starting exactly at `lastIndex`. Names: letters, digits, `_`, `.`, `-`.
 * Each attempt only scans the run of whitespace/name characters after the `{{`, and those runs
 * cannot contain another `{{`, so the whole render stays linear in the template's length.
 */
const PLACEHOLDER = /\{\{\s*([\p{L}\p{N}_.\-]+)\s*(?:\|([^{}|\r\n]*))?\}\}/uy;
/** `{{ name |` — the start of a placeholder with a fallback, well-formed or not. */
const FALLBACK_START = /\{\{\s*([\p{L}\p{N}_.\-]+)\s*\|/gu;
export const MAX_FALLBACK_LENGTH = 100;

interface Piece {
  literal: string;
  name?: string;
  fallback?: string;
}

/** The fallback text of a matched placeholder, or null when it is written but empty or too long. */
function fallbackOf(raw: string | undefined): string | undefined | null {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === "" || [...text].length > MAX_FALLBACK_LENGTH) return null;
  return text;
}

/**
 * Scanned templates, by text: a form's template is rendered on every submission, and scanning it
 * again each time cost more than filling it in. Pieces are never changed once made.
 */
const SCANNED = new Map<string, { pieces: readonly Piece[]; names: readonly string[] }>();
const MAX_SCANNED = 1_000;

/** The template's pieces and its distinct placeholder names in order of first appearance. */
function scanned(template: string): { pieces: readonly Piece[]; names: readonly string[] } {
  let s = SCANNED.get(template);
  if (s === undefined) {
    const pieces = scanOnce(template);
    const names = new Set<string>();
    for (const piece of pieces) if (piece.name !== undefined) names.add(piece.name);
    s = { pieces, names: [...names] };
    if (SCANNED.size >= MAX_SCANNED) SCANNED.clear();
    SCANNED.set(template, s);
  }
  return s;
}

function scanOnce(template: string): Piece[] {
  const pieces: Piece[] = [];
  let literalStart = 0;
  let from = 0;
  for (;;) {
    const open = template.indexOf("{{", from);
    if (open < 0) break;
    PLACEHOLDER.lastIndex = open;
    const m = PLACEHOLDER.exec(template);
    const fallback = m ? fallbackOf(m[2]) : null;
    if (!m || fallback === null) {
      from = open + 1;
      continue;
    }
    pieces.push({ literal: template.slice(literalStart, open), name: m[1], fallback });
    literalStart = from = PLACEHOLDER.lastIndex;
  }
  pieces.push({ literal: template.slice(literalStart) });
  return pieces;
}

export interface RenderedTemplate {
  content: string;
  /** Distinct placeholder names in order of first appearance, whether or not a value existed. */
  variablesUsed: string[];
}

/** A template's values: a Map, or an object whose own properties alone count. */
export type TemplateVariables = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

/**
 * Placeholder names are data the form's owner typed: `{{constructor}}`, `{{__proto__}}` or
 * `{{toString}}` look up a submitted value like any other name and never reach Object's
 * prototype (docs/api-decisions.md, "Hostile input, round two").
 */
function lookup(vars: TemplateVariables, name: string): string | undefined {
  if (vars instanceof Map) return vars.get(name);
  return Object.hasOwn(vars, name) ? (vars as Record<string, string>)[name] : undefined;
}

export function renderTemplate(template: string, vars: TemplateVariables): RenderedTemplate {
  const { pieces, names } = scanned(template);
  let content = "";
  for (const piece of pieces) {
    content += piece.literal;
    if (piece.name !== undefined) {
      const value = lookup(vars, piece.name);
      const text = value === undefined || value === null ? "" : String(value);
      content += piece.fallback !== undefined && text.trim() === "" ? piece.fallback : text;
    }
  }
  return { content, variablesUsed: names.slice() };
}

/**
 * Placeholders that start like `{{ name |` but are not a well-formed fallback (empty, over
 * MAX_FALLBACK_LENGTH, a `{`, `}`, `|` or line break inside, or never closed). Each entry is
 * the offending text, cut at 40 characters, for the form definition's error message.
 */
export function fallbackProblems(template: string): string[] {
  const problems: string[] = [];
  for (const start of template.matchAll(FALLBACK_START)) {
    PLACEHOLDER.lastIndex = start.index;
    const m = PLACEHOLDER.exec(template);
    if (m && fallbackOf(m[2]) !== null) continue;
    const end = m ? PLACEHOLDER.lastIndex : template.indexOf("}}", start.index) >= 0 ? template.indexOf("}}", start.index) + 2 : template.length;
    const text = template.slice(start.index, end);
    problems.push(text.length > 40 ? text.slice(0, 40) + "…" : text);
  }
  return problems;
}

/** Distinct placeholder names in order of first appearance. */
export function templateVariables(template: string): string[] {
  return scanned(template).names.slice();
}

/** Names that every template may use without the form declaring them. */
export const BUILTIN_VARIABLE_NAMES = [
  "firstName",
  "lastName",
  "fullName",
  "email",
  "phoneNumber",
  "source",
  "formName",
  "date",
  "time",
] as const;

export interface BuiltinVariablesInput {
  firstName?: string;
  lastName?: string;
  email?: string;
  /** E.164. */
  phoneNumber: string;
  source?: string;
  formName: string;
  /** Epoch milliseconds. */
  now: number;
  /** IANA zone of the form (settings.timezone); an unknown zone falls back to UTC. */
  timezone: string;
  /**
   * `date` and `time` already worked out for `now` in `timezone` (a caller rendering many texts
   * for the same few instants, e.g. an automation's steps, saves the zone arithmetic per text).
   */
  clock?: { date: string; time: string };
}

/** Formatters per zone: building an Intl.DateTimeFormat costs ~25 µs, using one ~2 µs. */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1_000;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  const zone = timeZone || "UTC";
  let fmt = FORMATTERS.get(zone);
  if (fmt === undefined) {
    const make = (tz: string) =>
      new Intl.DateTimeFormat("en-US", {
        timeZone: tz,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        hourCycle: "h23",
      });
    try {
      fmt = make(zone);
    } catch {
      fmt = make("UTC");
    }
    if (FORMATTERS.size >= MAX_FORMATTERS) FORMATTERS.clear();
    FORMATTERS.set(zone, fmt);
  }
  return fmt;
}

function zonedParts(now: number, timeZone: string): Record<string, string> {
  const parts: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(now))) parts[p.type] = p.value;
  return parts;
}

interface ZonedMinute {
  date: string;
  time: string;
}

function zonedMinute(now: number, timeZone: string): ZonedMinute {
  const p = zonedParts(now, timeZone);
  const hour = p.hour === "24" ? "00" : p.hour;
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${hour}:${p.minute}` };
}

/**
 * `date` and `time` per zone for the current UTC minute: formatting costs ~5 µs per submission,
 * a lookup nothing. A minute is kept only when its first and last millisecond show the same date
 * and time as `now` — never across a clock change, nor in a zone whose offset has seconds.
 */
const MINUTES = new Map<string, ZonedMinute & { from: number }>();

function cachedZonedMinute(now: number, timeZone: string): ZonedMinute {
  const from = Math.floor(now / 60_000) * 60_000;
  const hit = MINUTES.get(timeZone);
  if (hit !== undefined && hit.from === from) return hit;
  const m = zonedMinute(now, timeZone);
  const first = zonedMinute(from, timeZone);
  const last = zonedMinute(from + 59_999, timeZone);
  if (first.date === m.date && first.time === m.time && last.date === m.date && last.time === m.time) {
    if (MINUTES.size >= MAX_FORMATTERS) MINUTES.clear();
    MINUTES.set(timeZone, { ...m, from });
  }
  return m;
}

/**
 * The always-known variables. `date` is YYYY-MM-DD and `time` HH:MM (24 h) in the form's zone.
 * Callers merge submitted custom values over these (`{ ...builtinVariables(…), ...custom }`) so a
 * declared field called e.g. `date` wins over the built-in.
 */
export function builtinVariables(input: BuiltinVariablesInput): Record<string, string> {
  const firstName = input.firstName ?? "";
  const lastName = input.lastName ?? "";
  const { date, time } = input.clock ?? cachedZonedMinute(input.now, input.timezone);
  return {
    firstName,
    lastName,
    fullName: `${firstName} ${lastName}`.trim(),
    email: input.email ?? "",
    phoneNumber: input.phoneNumber,
    source: input.source ?? "",
    formName: input.formName,
    date,
    time,
  };
}
