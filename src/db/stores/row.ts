/**
 * A table's row as SQLite hands it back to a raw statement (`SELECT *`): the drizzle schema's
 * columns under their SQL names (snake_case), each with the schema's type, null where the column
 * allows it. Stores type raw results with this instead of a hand-written interface that would
 * repeat the schema (docs/api-decisions.md, "One home per rule: messages, phones, events and
 * change announcements").
 */
import type { Table } from "drizzle-orm";

type Columns<T extends Table> = T["_"]["columns"];

export type RawRow<T extends Table> = {
  [K in keyof Columns<T> as Columns<T>[K]["_"]["name"]]: Columns<T>[K]["_"]["notNull"] extends true
    ? Columns<T>[K]["_"]["data"]
    : Columns<T>[K]["_"]["data"] | null;
};

/**
 * A stored JSON object column, parsed; `{}` for null, text that is not JSON, or JSON that is not
 * an object (what every reader of such a column did by hand before the stores parsed them).
 */
export function jsonObject(text: string | null | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A stored JSON array column, parsed; `[]` for null, text that is not JSON, or JSON that is not an array. */
export function jsonArray<T>(text: string | null | undefined): T[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}
