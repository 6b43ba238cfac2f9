/**
 * Which contact field an import column sets, from the header a spreadsheet or another tool wrote:
 * the export's own names plus common aliases (`Phone`, `Mobile`, `First Name`, `E-mail`, `Name`
 * split into first and last, …). Matching ignores case, spaces, underscores, hyphens and dots,
 * so `phone_number`, `Phone Number` and `PHONE-NUMBER` are one name. `customFields.<name>` keeps
 * the custom field's name exactly as written after the dot.
 *
 * Pure: no database.
 */
import { BASE_COLUMNS, CUSTOM_PREFIX, IMPORT_IGNORED_COLUMNS, type BaseColumn } from "./contact-columns";

/** `fullName`: a "Name" column, split at its first space into firstName and lastName. */
export type ImportTarget = { kind: "base"; name: BaseColumn } | { kind: "fullName" } | { kind: "custom"; name: string } | { kind: "ignored" };

/** Aliases per field, as people write them (shown in error messages and docs/contacts.md). */
export const COLUMN_ALIASES: Readonly<Partial<Record<BaseColumn | "fullName", readonly string[]>>> = {
  phoneNumber: ["Phone", "Phone Number", "Mobile", "Mobile Number", "Mobile Phone", "Cell", "Cell Phone", "Telephone", "Tel", "Primary Phone"],
  firstName: ["First Name", "First", "Given Name", "Forename"],
  lastName: ["Last Name", "Last", "Surname", "Family Name"],
  fullName: ["Name", "Full Name", "Contact Name"],
  email: ["E-mail", "Email Address", "E-mail Address", "Mail"],
  tags: ["Tag", "Labels"],
  notes: ["Note", "Comments"],
  timeZone: ["Time Zone", "Timezone", "TZ"],
};

/** The header's spelling, ignoring what people vary: case, spaces, `_`, `-`, `.`. */
export const normaliseColumnName = (h: string) => h.replace(/^\uFEFF/, "").toLowerCase().replace(/[\s_.\-]+/g, "");

const CUSTOM_RE = /^\s*custom[\s_\-]*fields?\s*\.\s*(.+?)\s*$/i;

const byName = new Map<string, ImportTarget>();
for (const col of BASE_COLUMNS) {
  byName.set(normaliseColumnName(col), (IMPORT_IGNORED_COLUMNS as readonly string[]).includes(col) ? { kind: "ignored" } : { kind: "base", name: col });
}
for (const [field, aliases] of Object.entries(COLUMN_ALIASES)) {
  const target: ImportTarget = field === "fullName" ? { kind: "fullName" } : { kind: "base", name: field as BaseColumn };
  for (const a of aliases!) byName.set(normaliseColumnName(a), target);
}

/** What a header cell sets, or null for a name nothing matches. */
export function importTarget(header: string): ImportTarget | null {
  const custom = CUSTOM_RE.exec(header.replace(/^\uFEFF/, ""));
  if (custom) return { kind: "custom", name: custom[1] };
  return byName.get(normaliseColumnName(header)) ?? null;
}

/** The names an import accepts, for error messages: "phoneNumber (or Phone, Mobile, …), …". */
export function acceptedColumnsText(): string {
  const fields: Array<BaseColumn | "fullName"> = ["phoneNumber", "firstName", "lastName", "fullName", "email", "status", "tags", "source", "notes", "formId", "createdAt", "lastResponseAt", "timeZone"];
  const parts = fields.map((f) => {
    const aliases = COLUMN_ALIASES[f] ?? [];
    if (f === "fullName") return `Name (or ${aliases.slice(1).join(", ")}; split into first and last name)`;
    return aliases.length ? `${f} (or ${aliases.join(", ")})` : f;
  });
  return `${parts.join(", ")}, ${CUSTOM_PREFIX}<name>`;
}

export const PHONE_COLUMN_NAMES = ["phoneNumber", ...(COLUMN_ALIASES.phoneNumber ?? [])];
