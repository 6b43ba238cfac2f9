/**
 * Message templates: `{{ name }}` placeholders replaced by submitted values.
 *
 * Rules (spec, "Template processing rules"): whitespace inside the braces is trimmed, names are
 * case-sensitive, a missing variable becomes empty text. Anything that is not a well-formed
 * placeholder (`{{`, `{{}}`, `{{ two words }}`) stays as literal text. One pass, no recursion:
 * a value that itself contains `{{x}}` is inserted verbatim.
 */

/**
 * A placeholder starting exactly at `lastIndex`. Names: letters, digits, `_`, `.`, `-`.
 * Each attempt only scans the run of whitespace/name characters after the `{{`, and those runs
 * cannot contain another `{{`, so the whole render stays linear in the template's length.
 */
const PLACEHOLDER = /\{\{\s*([\p{L}\p{N}_.\-]+)\s*\}\}/uy;

interface Piece {
  literal: string;
  name?: string;
}

function scan(template: string): Piece[] {
  const pieces: Piece[] = [];
  let literalStart = 0;
  let from = 0;
  for (;;) {
    const open = template.indexOf("{{", from);
    if (open < 0) break;
    PLACEHOLDER.lastIndex = open;
    const m = PLACEHOLDER.exec(template);
    if (!m) {
      from = open + 1;
      continue;
    }
    pieces.push({ literal: template.slice(literalStart, open), name: m[1] });
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

export function renderTemplate(template: string, vars: Record<string, string>): RenderedTemplate {
  const out: string[] = [];
  const used = new Set<string>();
  for (const piece of scan(template)) {
    out.push(piece.literal);
    if (piece.name !== undefined) {
      used.add(piece.name);
      // Own properties only: "{{constructor}}" must not print Object's prototype.
      const value = Object.prototype.hasOwnProperty.call(vars, piece.name) ? vars[piece.name] : undefined;
      if (value !== undefined && value !== null) out.push(String(value));
    }
  }
  return { content: out.join(""), variablesUsed: [...used] };
}

/** Distinct placeholder names in order of first appearance. */
export function templateVariables(template: string): string[] {
  const used = new Set<string>();
  for (const piece of scan(template)) if (piece.name !== undefined) used.add(piece.name);
  return [...used];
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

/**
 * The always-known variables. `date` is YYYY-MM-DD and `time` HH:MM (24 h) in the form's zone.
 * Callers merge submitted custom values over these (`{ ...builtinVariables(…), ...custom }`) so a
 * declared field called e.g. `date` wins over the built-in, as spec rule 2 says.
 */
export function builtinVariables(input: BuiltinVariablesInput): Record<string, string> {
  const firstName = input.firstName ?? "";
  const lastName = input.lastName ?? "";
  const p = zonedParts(input.now, input.timezone);
  const hour = p.hour === "24" ? "00" : p.hour;
  return {
    firstName,
    lastName,
    fullName: `${firstName} ${lastName}`.trim(),
    email: input.email ?? "",
    phoneNumber: input.phoneNumber,
    source: input.source ?? "",
    formName: input.formName,
    date: `${p.year}-${p.month}-${p.day}`,
    time: `${hour}:${p.minute}`,
  };
}
