/**
 * The shape of contact exports and imports: columns, field selection,
 * spreadsheet formula-injection neutralisation, and reading one CSV row back into a contact body.
 *
 * Columns: the fixed ones below, then one `customFields.<name>` column per custom field, `tags`
 * joined with `;`. A cell that a spreadsheet would read as a formula — it begins with `=`, `+`,
 * `-`, `@`, tab or carriage return — is written with a leading `'`; so is a cell that already
 * begins with quotes followed by one of those, which makes the rule exactly reversible: import
 * removes one leading quote from any cell matching `^'+[=+\-@\t\r]`. An E.164 phone number
 * (`+12015550123`) is left as it is: it is data people search for, and a spreadsheet reads it
 * as a number, not a formula.
 *
 * Pure: no database.
 */
import { splitTags } from "./tags";
import type { FieldError } from "./submission";
import { acceptedColumnsText, importTarget, PHONE_COLUMN_NAMES, type ImportTarget } from "./import-columns";
import { BASE_COLUMNS, CUSTOM_PREFIX } from "./contact-columns";

// The column names have their own module so that import-columns.ts can read them without importing
// this one (which imports it): no import cycle.
export { BASE_COLUMNS, CUSTOM_PREFIX, IMPORT_IGNORED_COLUMNS, type BaseColumn } from "./contact-columns";

export const EXPORT_FORMATS = ["json", "csv", "xlsx"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const TAG_SEPARATOR = ";";

export const E164_RE = /^\+[1-9]\d{6,14}$/;
const FORMULA_START = /^'*[=+\-@\t\r]/;
const NEUTRALISED = /^'+[=+\-@\t\r]/;

/** The cell as written to CSV/XLSX. */
export function neutraliseCell(value: string): string {
  if (value === "" || !FORMULA_START.test(value) || E164_RE.test(value)) return value;
  return "'" + value;
}

/** The inverse of neutraliseCell, for imports. */
export function restoreCell(value: string): string {
  // Only a cell starting with ' can be neutralised: the others skip the regex (every import cell).
  return value.charCodeAt(0) === 39 && NEUTRALISED.test(value) ? value.slice(1) : value;
}

/**
 * What an export writes. `all` = the fixed columns then every custom field column; a selection
 * names columns in the order wanted, `customFields` standing for all custom field columns.
 */
export interface ColumnSelection {
  /** In order; `customFields` (all of them) may appear once. */
  columns: string[];
  /** Whether the caller's list needs the names of every custom field (`customFields` or no selection). */
  needsAllCustom: boolean;
}

export function parseFieldSelection(v: string | undefined, errors: FieldError[]): ColumnSelection {
  if (v === undefined || v.trim() === "") return { columns: [...BASE_COLUMNS, "customFields"], needsAllCustom: true };
  const out: string[] = [];
  for (const raw of v.split(",")) {
    const f = raw.trim();
    if (!f) continue;
    const ok =
      (BASE_COLUMNS as readonly string[]).includes(f) ||
      f === "customFields" ||
      (f.startsWith(CUSTOM_PREFIX) && f.length > CUSTOM_PREFIX.length && f.length <= CUSTOM_PREFIX.length + 64);
    if (!ok) {
      errors.push({
        field: "fields",
        message: `fields: unknown field "${f.slice(0, 80)}"; allowed: ${BASE_COLUMNS.join(", ")}, customFields, customFields.<name>`,
        requirement: `comma-separated list of ${BASE_COLUMNS.join(", ")}, customFields, customFields.<name>`,
        provided: v.slice(0, 100),
      });
      continue;
    }
    if (!out.includes(f)) out.push(f);
  }
  if (out.length === 0 && errors.length === 0) {
    errors.push({ field: "fields", message: "fields must name at least one column", requirement: "at least one column", provided: v.slice(0, 100) });
  }
  return { columns: out, needsAllCustom: out.includes("customFields") };
}

/** Expands `customFields` into one column per name (sorted), for CSV/XLSX headers. */
export function expandColumns(sel: ColumnSelection, customNames: string[]): string[] {
  const out: string[] = [];
  for (const c of sel.columns) {
    if (c === "customFields") {
      for (const n of customNames) {
        const col = CUSTOM_PREFIX + n;
        if (!sel.columns.includes(col) && !out.includes(col)) out.push(col);
      }
    } else if (!out.includes(c)) out.push(c);
  }
  return out;
}

/** A contact as the export sees it (the API's Contact shape). */
export interface ExportContact {
  id: string;
  firstName: string | null;
  lastName: string | null;
  phoneNumber: string;
  email: string | null;
  status: string;
  formId: string | null;
  formName: string | null;
  customFields: Record<string, string>;
  tags: string[];
  source: string | null;
  notes: string | null;
  messageCount: number;
  lastContactedAt: string | null;
  lastResponseAt: string | null;
  optedOut: boolean;
  optedOutAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** The contact's own IANA zone (docs/contacts.md, "Time zone"). */
  timeZone: string | null;
}

/** One flat, neutralised row of cells in `columns` order (messageCount stays a number). */
export function contactCells(c: ExportContact, columns: string[]): Array<string | number> {
  return columns.map((col) => {
    if (col === "messageCount") return c.messageCount;
    if (col === "tags") return neutraliseCell(c.tags.join(TAG_SEPARATOR));
    if (col.startsWith(CUSTOM_PREFIX)) {
      // Own fields only: `customFields.constructor` names a field, not Object.prototype's member.
      const name = col.slice(CUSTOM_PREFIX.length);
      return neutraliseCell(Object.hasOwn(c.customFields, name) ? c.customFields[name] : "");
    }
    const v = (c as unknown as Record<string, unknown>)[col];
    return v === null || v === undefined ? "" : neutraliseCell(String(v));
  });
}

/** The JSON export's object for one contact: the selected keys in order; custom fields nested. */
export function contactJson(c: ExportContact, sel: ColumnSelection): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A Map until the end: a custom field named `__proto__` must be written as a field.
  let custom: Map<string, string> | undefined;
  for (const col of sel.columns) {
    if (col === "customFields") {
      custom ??= new Map();
      for (const [k, v] of Object.entries(c.customFields)) custom.set(k, v);
      out.customFields = null;
    } else if (col.startsWith(CUSTOM_PREFIX)) {
      const name = col.slice(CUSTOM_PREFIX.length);
      custom ??= new Map();
      if (Object.hasOwn(c.customFields, name)) custom.set(name, c.customFields[name]);
      out.customFields = null;
    } else out[col] = (c as unknown as Record<string, unknown>)[col];
  }
  if (custom !== undefined) out.customFields = Object.fromEntries(custom);
  return out;
}

export interface ImportHeader {
  /** Column index → what it sets. */
  map: ImportTarget[];
}

/**
 * Checks an import's header row: a phone column is required; export names and the aliases of
 * import-columns.ts are accepted; unknown columns are refused by name; two columns setting the
 * same field are refused.
 */
export function parseImportHeader(header: string[]): { ok: true; header: ImportHeader } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const map: ImportHeader["map"] = [];
  const setBy = new Map<string, string>(); // field → the column that sets it
  const found = header.map((h) => h.trim().replace(/^\uFEFF/, "").slice(0, 100));
  header.forEach((h, i) => {
    const name = found[i];
    const target = name === "" ? null : importTarget(name);
    if (!target) {
      errors.push({
        field: name || `column ${i + 1}`,
        message: `unknown column "${name.slice(0, 80)}"; accepted columns: ${acceptedColumnsText()}`,
        requirement: "a column of the export or one of its accepted names",
        provided: name,
      });
      map.push({ kind: "ignored" });
      return;
    }
    map.push(target);
    const fields = target.kind === "fullName" ? ["firstName", "lastName"] : target.kind === "base" ? [target.name] : target.kind === "custom" ? [CUSTOM_PREFIX + target.name] : [];
    for (const f of fields) {
      const other = setBy.get(f);
      if (other !== undefined) {
        errors.push({ field: name, message: other === name ? `column "${name}" appears twice` : `columns "${other}" and "${name}" both set ${f}; keep one`, requirement: "one column per field", provided: name });
        break;
      }
      setBy.set(f, name);
    }
  });
  if (!setBy.has("phoneNumber")) {
    errors.push({
      field: "phoneNumber",
      message: `the file needs a phone number column (named ${PHONE_COLUMN_NAMES.join(", ")}); the columns found are: ${found.filter(Boolean).join(", ").slice(0, 300) || "none"}`,
      requirement: "a phone number column",
      provided: found.join(",").slice(0, 100),
    });
  }
  return errors.length ? { ok: false, errors } : { ok: true, header: { map } };
}

/**
 * One data row → a body for validateContactInput("create") plus the columns the service applies
 * itself. An empty cell clears the field (empty custom cell deletes that custom field) — except
 * status, where empty means "leave as is" (new for a new contact).
 */
export function importRowBody(
  h: ImportHeader,
  cells: string[],
): { body: Record<string, unknown>; createdAt?: string; formId?: string; optedOut?: string; optedOutAt?: string } {
  const body: Record<string, unknown> = {};
  // A Map: a `customFields.__proto__` column is a field, not the object's prototype.
  const custom = new Map<string, string | null>();
  let createdAt: string | undefined;
  let formId: string | undefined;
  // An empty optedOut cell leaves the contact as it is: clearing an opt-out needs "false".
  let optedOut: string | undefined;
  let optedOutAt: string | undefined;
  h.map.forEach((m, i) => {
    if (m.kind === "ignored") return;
    const v = restoreCell(cells[i] ?? "");
    if (m.kind === "custom") return void custom.set(m.name, v === "" ? null : v);
    if (m.kind === "fullName") {
      const full = v.trim();
      const space = full.search(/\s/);
      body.firstName = space < 0 ? full : full.slice(0, space);
      body.lastName = space < 0 ? "" : full.slice(space).trim();
      return;
    }
    switch (m.name) {
      case "tags":
        body.tags = splitTags(v);
        break;
      case "status":
        if (v !== "") body.status = v;
        break;
      case "createdAt":
        if (v !== "") createdAt = v;
        break;
      case "formId":
        if (v !== "") formId = v;
        break;
      case "optedOut":
        if (v.trim() !== "") optedOut = v.trim().toLowerCase();
        break;
      case "optedOutAt":
        if (v.trim() !== "") optedOutAt = v.trim();
        break;
      default:
        body[m.name] = v;
    }
  });
  if (custom.size) body.customFields = Object.fromEntries(custom);
  return { body, createdAt, formId, optedOut, optedOutAt };
}
