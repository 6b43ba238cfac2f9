/**
 * The contacts a broadcast (or an automation's start) walks: a segment of the account's contacts
 * by the list API's filter, counted and read in id-ordered chunks, with who gets no text (opted
 * out, or at the per-recipient limit). docs/architecture.md, "Stores".
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { ContactFilter } from "../../../domain/contact-query";
import { filterSql } from "./filter";
import { OPTED_OUT_SQL, type ContactRow } from "./index";
import { jsonObject } from "../row";

/**
 * SQL that holds a segment: the contact filter of the list API, contacts up to `lastContactId`
 * (ids are time-ordered: contacts made after the broadcast are not in it), `excluded` saying
 * which matching contacts get no message (those who opted out).
 */
function segmentWhere(accountId: string, filter: ContactFilter, lastContactId: string): { where: string; params: SQLQueryBindings[] } {
  const f = filterSql(accountId, filter);
  return { where: `${f.where} AND c.id <= ?`, params: [...f.params, lastContactId] };
}

/**
 * Which matching contacts get no message (SQL over alias c, with its parameters): those already
 * sent or queued `recipientLimitPerDay` texts since `since` (the per-recipient limit).
 */
export interface Exclusion {
  recipientLimitPerDay: number | null;
  /** ISO: the start of the per-recipient limit's 24 hours. */
  since: string;
}

/** The per-recipient limit's test (SQL over alias c, with its parameters); null without a limit. */
function overLimitSql(x: Exclusion): { sql: string; params: SQLQueryBindings[] } | null {
  if (x.recipientLimitPerDay === null) return null;
  return {
    sql: `(SELECT COUNT(*) FROM messages m WHERE m.account_id = c.account_id AND m.recipient_phone = c.phone_number
          AND m.created_at >= ? AND m.status IN ('queued', 'sent')) >= ?`,
    params: [x.since, x.recipientLimitPerDay],
  };
}

function exclusionSql(x: Exclusion): { sql: string; params: SQLQueryBindings[] } {
  const limit = overLimitSql(x);
  return limit ? { sql: `(${OPTED_OUT_SQL} OR ${limit.sql})`, params: limit.params } : { sql: `(${OPTED_OUT_SQL})`, params: [] };
}

/** The account's newest contact id: where a broadcast's or an automation start's walk ends. */
export function newestContactId(sqlite: Database, accountId: string): string | null {
  const r = sqlite.query("SELECT MAX(id) AS id FROM contacts WHERE account_id = ?1").get(accountId) as { id: string | null };
  return r.id;
}

/**
 * The segment counted: `recipients` get a text; `suppressed` do not, being opted out
 * (`optedOut`) or, of the others, at the per-recipient limit (`overLimit`).
 */
export function countSegment(
  sqlite: Database,
  accountId: string,
  filter: ContactFilter,
  lastContactId: string,
  x: Exclusion,
): { recipients: number; suppressed: number; optedOut: number; overLimit: number } {
  const s = segmentWhere(accountId, filter, lastContactId);
  const limit = overLimitSql(x);
  const r = sqlite
    .query(
      `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN ${OPTED_OUT_SQL} THEN 1 ELSE 0 END), 0) AS optedOut,
         ${limit ? `COALESCE(SUM(CASE WHEN NOT (${OPTED_OUT_SQL}) AND ${limit.sql} THEN 1 ELSE 0 END), 0)` : "0"} AS overLimit
       FROM contacts c WHERE ${s.where}`,
    )
    .get(...(limit?.params ?? []), ...s.params) as { total: number; optedOut: number; overLimit: number };
  const suppressed = r.optedOut + r.overLimit;
  return { recipients: r.total - suppressed, suppressed, optedOut: r.optedOut, overLimit: r.overLimit };
}

/** A contact of the segment (its custom fields parsed), and whether it gets no text (opted out or at the per-recipient limit). */
export type SegmentContact = Pick<ContactRow, "id" | "phoneNumber" | "firstName" | "lastName" | "email"> & { customFields: Record<string, unknown>; excluded: boolean };

/** Where a walk through a segment is: the account's contacts by `filter` up to `lastContactId`, the next `limit` after `cursor`. */
export interface SegmentWalk {
  accountId: string;
  filter: ContactFilter;
  lastContactId: string;
  cursor: string;
  limit: number;
}

/** The next `limit` contacts of the segment after `cursor`, in id order. */
export function segmentChunk(sqlite: Database, w: SegmentWalk, x: Exclusion): SegmentContact[] {
  const { accountId, cursor, limit } = w;
  const s = segmentWhere(accountId, w.filter, w.lastContactId);
  const e = exclusionSql(x);
  // Walk the primary key from the cursor (`+` keeps SQLite off the account index, which would
  // read and sort every contact of the account for each chunk).
  const where = s.where.replace(/^c\.account_id = \?/, "+c.account_id = ?");
  const rows = sqlite
    .query(
      `SELECT c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName, c.email, c.custom_fields AS customFields,
         CASE WHEN ${e.sql} THEN 1 ELSE 0 END AS excluded
       FROM contacts c WHERE ${where} AND c.id > ? ORDER BY c.id LIMIT ?`,
    )
    .all(...e.params, ...s.params, cursor, limit) as Array<Omit<SegmentContact, "customFields" | "excluded"> & { customFields: string; excluded: number }>;
  return rows.map((r) => ({ ...r, customFields: jsonObject(r.customFields), excluded: r.excluded === 1 }));
}

/** A contact as an automation's run reads it (the start rules, the template's values): custom fields and consent parsed. */
export type RunContact = Pick<ContactRow, "id" | "phoneNumber" | "firstName" | "lastName" | "email" | "source" | "status" | "optedOut" | "timeZone"> & {
  customFields: Record<string, unknown>;
  consent: Record<string, unknown>;
};

/** A plain SQL read gives the opt-out as SQLite stores it (0 or 1), the JSON columns as text. */
const runContactOf = (r: Omit<RunContact, "optedOut" | "customFields" | "consent"> & { optedOut: number; customFields: string; consent: string | null }): RunContact => ({
  ...r,
  optedOut: r.optedOut === 1,
  customFields: jsonObject(r.customFields),
  consent: jsonObject(r.consent),
});

const CONTACT_COLUMNS = `c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName, c.email, c.source,
  c.custom_fields AS customFields, c.status, c.opted_out AS optedOut, c.consent, c.time_zone AS timeZone`;

export function runContact(sqlite: Database, accountId: string, contactId: string): RunContact | null {
  const r = sqlite.query(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.id = ?1 AND c.account_id = ?2`).get(contactId, accountId) as Parameters<typeof runContactOf>[0] | null;
  return r ? runContactOf(r) : null;
}

/** The next `limit` contacts of a segment after `cursor` (up to `lastContactId`), in id order. */
export function segmentContacts(sqlite: Database, w: SegmentWalk): RunContact[] {
  const { lastContactId, cursor, limit } = w;
  const f = filterSql(w.accountId, w.filter);
  // Walk the primary key from the cursor, as the broadcasts' chunks do (segmentChunk above).
  const where = f.where.replace(/^c\.account_id = \?/, "+c.account_id = ?");
  return (
    sqlite
      .query(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE ${where} AND c.id <= ? AND c.id > ? ORDER BY c.id LIMIT ?`)
      .all(...f.params, lastContactId, cursor, limit) as Array<Parameters<typeof runContactOf>[0]>
  ).map(runContactOf);
}

/** Who the runs are for, as a list shows them (a deleted contact has no row). */
export type RunContactName = Pick<ContactRow, "id" | "firstName" | "lastName" | "phoneNumber">;

export function contactsOfRuns(sqlite: Database, accountId: string, contactIds: string[]): RunContactName[] {
  const ids = [...new Set(contactIds)];
  if (ids.length === 0) return [];
  return sqlite
    .query(`SELECT id, first_name AS firstName, last_name AS lastName, phone_number AS phoneNumber FROM contacts WHERE account_id = ? AND id IN (${ids.map(() => "?").join(",")})`)
    .all(accountId, ...ids) as RunContactName[];
}
