/**
 * Date fields as a text says them: "Thu, Dec 10" in the form's language, not "2026-12-10". A
 * template may ask for another way with a suffix on the field's name (docs/forms.md, "Dates in
 * texts"): `{{pickup}}` Thu, Dec 10 · `{{pickup.long}}` Thursday, December 10 · `{{pickup.numeric}}`
 * 12/10/2026 · `{{pickup.iso}}` 2026-12-10 · `{{pickup.asSent}}` as the visitor typed it. The year
 * is added to the first two when the date is not in the current year. Pure: `now` is given.
 */
import { DEFAULT_DATE_FORMAT, parseDateInFormat, type DateFormat } from "./field-values";

/** The suffixes a template may put after a date field's name. */
export const DATE_STYLES = ["long", "numeric", "iso", "asSent"] as const;

const FORMATS = new Map<string, Intl.DateTimeFormat>();

function formatter(locale: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale} ${JSON.stringify(opts)}`;
  let f = FORMATS.get(key);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat(locale, { ...opts, timeZone: "UTC" });
    } catch {
      f = new Intl.DateTimeFormat("en-US", { ...opts, timeZone: "UTC" });
    }
    if (FORMATS.size > 200) FORMATS.clear();
    FORMATS.set(key, f);
  }
  return f;
}

/** One ISO date (YYYY-MM-DD) in words: short ("Thu, Dec 10") or long ("Thursday, December 10"), with the year when not `thisYear`. */
export function dateInWords(iso: string, locale: string, thisYear: number, style: "short" | "long" | "numeric" = "short"): string {
  const at = Date.parse(`${iso}T12:00:00Z`);
  if (Number.isNaN(at)) return iso;
  if (style === "numeric") return formatter(locale, { year: "numeric", month: "numeric", day: "numeric" }).format(at);
  const year = Number(iso.slice(0, 4)) !== thisYear ? ({ year: "numeric" } as const) : {};
  return formatter(locale, style === "long" ? { weekday: "long", month: "long", day: "numeric", ...year } : { weekday: "short", month: "short", day: "numeric", ...year }).format(at);
}

/**
 * The template variables of a form's date fields that hold a value: the field's own name in
 * words, and each suffix of DATE_STYLES. `values` are the submitted (or stored) values as typed;
 * `today` is the current date (YYYY-MM-DD) in the form's zone.
 */
export function dateVariables(
  fields: ReadonlyArray<{ name: string; type: string; validation?: { format?: unknown } }>,
  values: Readonly<Record<string, string>>,
  locale: string,
  today: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const thisYear = Number(today.slice(0, 4));
  for (const f of fields) {
    if (f.type !== "date" || !Object.hasOwn(values, f.name)) continue;
    const typed = values[f.name];
    const format = (typeof f.validation?.format === "string" ? f.validation.format : DEFAULT_DATE_FORMAT) as DateFormat;
    const iso = parseDateInFormat(typed, format);
    if (!iso) continue;
    out[f.name] = dateInWords(iso, locale, thisYear);
    out[`${f.name}.long`] = dateInWords(iso, locale, thisYear, "long");
    out[`${f.name}.numeric`] = dateInWords(iso, locale, thisYear, "numeric");
    out[`${f.name}.iso`] = iso;
    out[`${f.name}.asSent`] = typed;
  }
  return out;
}
