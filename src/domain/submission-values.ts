/**
 * What a visitor sent, as the team reads it: each value with its field's label from the form
 * (the form's own order first, then any undeclared key as it came), and the short preview a
 * notification or the inbox shows. Pure (docs/api-decisions.md, "The owner hears back", every
 * request kept and listed).
 */
import { fieldLabel } from "./visitor-words";

export interface SubmittedValue {
  field: string;
  label: string;
  value: string;
}

/** Why no text was queued for a submission (the webhook answer's `data.suppressed`). */
export const SUPPRESSION_REASONS = ["opted-out", "no-consent", "recipient-limit"] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** The values in the form's field order with their labels; `fields` is the form's definition (JSON text or array). */
export function labelledValues(fields: unknown, values: Record<string, unknown> | null): SubmittedValue[] {
  if (values === null) return [];
  const defs = Array.isArray(fields) ? (fields as Array<{ name?: unknown; label?: unknown }>) : [];
  const out: SubmittedValue[] = [];
  const seen = new Set<string>();
  for (const d of defs) {
    if (typeof d?.name !== "string" || !Object.hasOwn(values, d.name)) continue;
    seen.add(d.name);
    out.push({ field: d.name, label: fieldLabel(d.name, d), value: String(values[d.name]) });
  }
  for (const [k, v] of Object.entries(values)) if (!seen.has(k)) out.push({ field: k, label: fieldLabel(k), value: String(v) });
  return out;
}

/** Fields that name or reach the person rather than say what they want. */
const CONTACT_FIELDS = new Set(["phoneNumber", "firstName", "lastName", "email", "source"]);

/** The visitor's words in one line, at most `max` characters: the first value that is not a name, number or address. */
export function requestPreview(values: SubmittedValue[], max = 100): string {
  const v = values.find((x) => !CONTACT_FIELDS.has(x.field) && x.value.trim() !== "");
  if (!v) return "";
  const one = v.value.replace(/\s+/g, " ").trim();
  return one.length <= max ? one : `${one.slice(0, max - 1).trimEnd()}…`;
}

/** The sender's name as the values give it, else their number. */
export function senderName(values: Record<string, unknown> | null, fallback: string): string {
  const name = [values?.firstName, values?.lastName].filter((x) => typeof x === "string" && x.trim() !== "").join(" ");
  return name || (typeof values?.phoneNumber === "string" ? values.phoneNumber : fallback);
}
