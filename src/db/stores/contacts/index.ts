/**
 * The contacts store: every statement on the contacts table outside its store parts
 * (list.ts plans list pages, batch.ts writes import rows many per statement, upsert.ts
 * updates import rows, search-pending.ts keeps the search index, filter.ts turns a filter into
 * SQL, conversations.ts reads threads, analytics.ts counts), all in this folder. Row types come from the drizzle schema; the opt-out columns are written by
 * `writeOptOut` alone, which only src/services/opt-outs.ts calls (docs/api-decisions.md, "One
 * home per rule: opt-outs and contacts").
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { contactSearchText } from "../../../domain/contact-search";
import type { ContactState } from "../../../domain/contact-update";
import type { Actor } from "../../../domain/people";
import type { ContactFilter } from "../../../domain/contact-query";
import { filterSql } from "./filter";
import type { contacts } from "../../schema/contacts";
import type { inboundMessages, messages } from "../../schema";

type MessageColumns = typeof messages.$inferSelect;
import { CONTACT_INSERT_COLUMNS, CONTACT_INSERT_ROW, recordContactInsert } from "./batch";
import { countContactMessages, deleteContactMessages } from "../messages/deletes";

/** A contacts row as the schema types it: the one ContactRow. */
export type ContactRow = typeof contacts.$inferSelect;

/** How a contact entered: stored as JSON in contacts.consent. */
export interface ConsentRecord {
  source: "webhook" | "import" | "manual" | "api" | "inbound";
  formId?: string;
  at: string;
  ipAddress?: string;
  /** Who added the contact by hand or through the API: the signed-in person or the key (docs/api-decisions.md, "Contact care"). */
  by?: Actor;
}

/** The API's Contact (spec "Contact"): the row with its JSON parsed and its form's name. */
export interface Contact extends ContactState {
  id: string;
  formId: string | null;
  formName: string | null;
  lastContactedAt: string | null;
  messageCount: number;
  /** Replied STOP (or set so): no text is sent to the number. */
  optedOut: boolean;
  optedOutAt: string | null;
  /** How the contact entered: {source, formId?, at, ipAddress?}; null only if unknown. */
  consent: ConsentRecord | null;
  createdAt: string;
  updatedAt: string;
}

/** Every column of a contact, as the API names them (alias `c` = contacts, `f` = forms). */
const CONTACT_SELECT = `c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName,
  c.email, c.status, c.form_id AS formId, f.name AS formName, c.custom_fields AS customFields, c.tags,
  c.last_contacted_at AS lastContactedAt, c.last_response_at AS lastResponseAt, c.message_count AS messageCount,
  c.source, c.notes, c.opted_out AS optedOut, c.opted_out_at AS optedOutAt, c.consent, c.created_at AS createdAt, c.updated_at AS updatedAt, c.time_zone AS timeZone`;
const CONTACT_FROM = `contacts c LEFT JOIN forms f ON f.id = c.form_id`;

/** What SQLite returns for CONTACT_SELECT: the row's columns, the boolean as 0/1, plus the form's name. */
type ContactRead = Omit<ContactRow, "accountId" | "searchText" | "optedOut"> & { optedOut: number; formName: string | null };

/** The one mapper from a read contact to the API's Contact. */
function toContact(r: ContactRead): Contact {
  return {
    ...r,
    status: r.status,
    customFields: JSON.parse(r.customFields),
    tags: JSON.parse(r.tags),
    optedOut: r.optedOut === 1,
    consent: r.consent ? (JSON.parse(r.consent) as ConsentRecord) : null,
  };
}

/** A contact by id alone (event payloads: the id came from the same transaction). */
export function readContact(sqlite: Database, contactId: string): Contact | null {
  const row = sqlite.query(`SELECT ${CONTACT_SELECT} FROM ${CONTACT_FROM} WHERE c.id = ?1`).get(contactId) as ContactRead | null;
  return row ? toContact(row) : null;
}

/** The contacts matching `f` (an export), oldest first, read one at a time; `finalize` ends the read early. */
export function iterateContacts(sqlite: Database, accountId: string, f: ContactFilter): { rows: IterableIterator<Contact>; finalize: () => void } {
  const { where, params } = filterSql(accountId, f, "exists");
  const stmt = sqlite.query(`SELECT ${CONTACT_SELECT} FROM ${CONTACT_FROM} WHERE ${where} ORDER BY c.created_at ASC, c.rowid ASC`);
  const raw = stmt.iterate(...params) as IterableIterator<ContactRead>;
  function* mapped(): IterableIterator<Contact> {
    for (const r of raw) yield toContact(r);
  }
  return { rows: mapped(), finalize: () => stmt.finalize() };
}

/** An export's read transaction on its own read-only connection: one consistent snapshot. */
export function beginRead(db: Database): void {
  db.exec("BEGIN");
}
export function endRead(db: Database): void {
  db.exec("COMMIT");
}

/** The custom field names used by the contacts matching `f`, sorted (an export's columns). */
export function customFieldNames(sqlite: Database, accountId: string, f: ContactFilter): string[] {
  const { where, params } = filterSql(accountId, f, "exists");
  return (sqlite.query(`SELECT DISTINCT j.key AS k FROM contacts c, json_each(c.custom_fields) j WHERE ${where} ORDER BY 1`).all(...params) as Array<{ k: string }>).map((r) => r.k);
}

/** A contact as the inbound path needs it: found by its number. */
export type ContactLink = Pick<ContactRow, "id" | "status" | "optedOut" | "optedOutAt" | "firstName" | "lastName" | "updatedAt">;

export function findContactByPhone(sqlite: Database, accountId: string, phone: string): ContactLink | null {
  const r = sqlite
    .query(
      `SELECT id, status, opted_out AS optedOut, opted_out_at AS optedOutAt, first_name AS firstName, last_name AS lastName, updated_at AS updatedAt
       FROM contacts WHERE account_id = ?1 AND phone_number = ?2`,
    )
    .get(accountId, phone) as (Omit<ContactLink, "optedOut"> & { optedOut: number }) | null;
  return r ? { ...r, optedOut: r.optedOut === 1 } : null;
}

/** A contact as a manual send needs it (POST /v1/messages): by id within the account, or by number. */
export type Recipient = Pick<ContactRow, "id" | "phoneNumber" | "firstName" | "lastName" | "optedOut">;

export function findRecipient(sqlite: Database, accountId: string, by: { id: string } | { phone: string }): Recipient | null {
  const cols = "id, phone_number AS phoneNumber, first_name AS firstName, last_name AS lastName, opted_out AS optedOut";
  const r = (
    "id" in by
      ? sqlite.query(`SELECT ${cols} FROM contacts WHERE id = ?1 AND account_id = ?2`).get(by.id, accountId)
      : sqlite.query(`SELECT ${cols} FROM contacts WHERE account_id = ?2 AND phone_number = ?1`).get(by.phone, accountId)
  ) as (Omit<Recipient, "optedOut"> & { optedOut: number }) | null;
  return r ? { ...r, optedOut: r.optedOut === 1 } : null;
}

/** Deletes the contacts a form created (after their messages: stores/messages/deletes.ts). */
export function deleteFormContacts(sqlite: Database, accountId: string, formId: string): void {
  sqlite.query("DELETE FROM contacts WHERE account_id = ? AND form_id = ?").run(accountId, formId);
}

/** Contacts per form, and how many of them converted (the forms list's figures). */
export function contactCountsByForm(sqlite: Database, formIds: string[]): Array<{ formId: string; n: number; converted: number }> {
  return sqlite
    .query(
      `SELECT form_id AS formId, count(*) AS n, coalesce(sum(status = 'converted'), 0) AS converted FROM contacts
       WHERE form_id IN (${formIds.map(() => "?").join(", ")}) GROUP BY form_id`,
    )
    .all(...formIds) as Array<{ formId: string; n: number; converted: number }>;
}

/** The account's contacts (what deleting it removes). */
export function countAccountContacts(sqlite: Database, accountId: string): number {
  return (sqlite.query("SELECT count(*) AS n FROM contacts WHERE account_id = ?").get(accountId) as { n: number }).n;
}

/** The contact exists in the account. */
export function contactInAccount(sqlite: Database, accountId: string, id: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM contacts WHERE id = ?1 AND account_id = ?2").get(id, accountId) !== null;
}

/** A message to the contact became sent: its count, last contact time and status move with it. */
export function countSentOnContact(sqlite: Database, accountId: string, contactId: string, sentAt: string, updatedAt: string): void {
  sqlite
    .query(
      `UPDATE contacts SET last_contacted_at = ?1, message_count = message_count + 1,
         status = CASE WHEN status = 'new' THEN 'contacted' ELSE status END, updated_at = ?2
       WHERE id = ?3 AND account_id = ?4`,
    )
    .run(sentAt, updatedAt, contactId, accountId);
}

/** The SQL test, over alias `c`, of a contact that opted out (a broadcast leaves them out). */
export const OPTED_OUT_SQL = "c.opted_out = 1";

/** A contact's opt-out as stored, and its updated_at (the next one must come after it). */
export function optOutOf(sqlite: Database, id: string): { optedOut: boolean; updatedAt: string } {
  const r = sqlite.query("SELECT opted_out AS o, updated_at AS u FROM contacts WHERE id = ?1").get(id) as { o: number; u: string };
  return { optedOut: r.o === 1, updatedAt: r.u };
}

/**
 * Sets or clears the opt-out (optedOutAt is kept only while opted out). The one writer of
 * contacts.opted_out / opted_out_at: called by src/services/opt-outs.ts only (a unit test checks).
 */
export function writeOptOut(sqlite: Database, id: string, optedOut: boolean, at: string | null, updatedAt: string): void {
  sqlite
    .query("UPDATE contacts SET opted_out = ?2, opted_out_at = ?3, updated_at = ?4 WHERE id = ?1")
    .run(id, optedOut ? 1 : 0, optedOut ? at : null, updatedAt);
}

/** A contact known only by its number (first heard from by a text): status `responded`. */
export function insertRespondedContact(sqlite: Database, c: { id: string; accountId: string; phone: string; lastResponseAt: string; createdAt: string }): void {
  sqlite
    .query(
      `INSERT INTO contacts (id, account_id, phone_number, status, custom_fields, tags, last_response_at, message_count, search_text, consent, created_at, updated_at)
       VALUES (?1, ?2, ?3, 'responded', '{}', '[]', ?4, 0, ?5, ?6, ?7, ?7)`,
    )
    .run(c.id, c.accountId, c.phone, c.lastResponseAt, contactSearchText({ phoneNumber: c.phone }), JSON.stringify({ source: "inbound", at: c.createdAt } satisfies ConsentRecord), c.createdAt);
}

/** A reply arrived: lastResponseAt (never moved back) and new|contacted → responded. */
export function markContactResponded(sqlite: Database, id: string, lastResponseAt: string, updatedAt: string): void {
  sqlite
    .query(
      `UPDATE contacts SET
         last_response_at = CASE WHEN last_response_at IS NULL OR last_response_at < ?2 THEN ?2 ELSE last_response_at END,
         status = CASE WHEN status IN ('new', 'contacted') THEN 'responded' ELSE status END,
         updated_at = ?3
       WHERE id = ?1`,
    )
    .run(id, lastResponseAt, updatedAt);
}

/** A contact's tags and status (what a keyword reply adds to). */
export function contactTagsAndStatus(sqlite: Database, contactId: string): { tags: string[]; status: string; updatedAt: string } | null {
  const r = sqlite.query("SELECT tags, status, updated_at AS updatedAt FROM contacts WHERE id = ?1").get(contactId) as { tags: string; status: string; updatedAt: string } | null;
  return r ? { ...r, tags: JSON.parse(r.tags) as string[] } : null;
}

/** Writes a contact's tags and status (contact_tags follows by trigger). */
export function writeContactTagsAndStatus(sqlite: Database, contactId: string, p: { tags: string[]; status: string; updatedAt: string }): void {
  sqlite.query("UPDATE contacts SET tags = ?2, status = ?3, updated_at = ?4 WHERE id = ?1").run(contactId, JSON.stringify(p.tags), p.status, p.updatedAt);
}

/** One row of the contacts timeline (GET /v1/contacts/<id>/messages). */
export type TimelineItem = Pick<MessageColumns, "id" | "content" | "createdAt"> &
  Partial<Pick<MessageColumns, "sentAt" | "formName">> &
  Partial<Pick<typeof inboundMessages.$inferSelect, "receivedAt">> & {
    direction: "outbound" | "inbound";
    /** The text's status; "received" for one the contact sent. */
    status: string;
  };

// ---- what ContactService runs per request (callers own transactions) ----------------------------

export function findContact(sqlite: Database, accountId: string, id: string): Contact | null {
  const row = sqlite.query(`SELECT ${CONTACT_SELECT} FROM ${CONTACT_FROM} WHERE c.id = ? AND c.account_id = ?`).get(id, accountId) as ContactRead | null;
  return row ? toContact(row) : null;
}

export function contactIdByPhone(sqlite: Database, accountId: string, phone: string): string | null {
  return (sqlite.query(`SELECT id FROM contacts WHERE account_id = ? AND phone_number = ?`).get(accountId, phone) as { id: string } | null)?.id ?? null;
}

/** Writes a new contact from its CONTACT_INSERT_ROW values, and counts it. */
export function insertContact(sqlite: Database, values: SQLQueryBindings[]): void {
  sqlite.query(`INSERT INTO contacts ${CONTACT_INSERT_COLUMNS} VALUES ${CONTACT_INSERT_ROW}`).run(...values);
  recordContactInsert(sqlite, values);
}

/** Rewrites every column a patch may change (contact_tags follows by trigger). */
export function updateContact(sqlite: Database, accountId: string, id: string, s: ContactState, updatedAt: string): void {
  sqlite
    .query(
      `UPDATE contacts SET phone_number = ?, first_name = ?, last_name = ?, email = ?, status = ?, custom_fields = ?, tags = ?,
          last_response_at = ?, source = ?, notes = ?, time_zone = ?, search_text = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
    )
    .run(
      s.phoneNumber, s.firstName, s.lastName, s.email, s.status, JSON.stringify(s.customFields), JSON.stringify(s.tags),
      s.lastResponseAt, s.source, s.notes, s.timeZone, contactSearchText(s), updatedAt, id, accountId,
    );
}

/** A contact's texts in both directions, newest first, and how many there are in all. */
export function contactTimeline(sqlite: Database, accountId: string, id: string, limit: number, offset: number): { messages: TimelineItem[]; total: number } {
  const messages = (
    sqlite
      .query(
        `SELECT * FROM (
           SELECT m.id, 'outbound' AS direction, m.content, m.status, m.sent_at AS sentAt, coalesce(f.name, m.form_name) AS formName,
             m.created_at AS createdAt, NULL AS receivedAt, m.created_at AS at, m.rowid AS rid
           FROM messages m LEFT JOIN forms f ON f.id = m.form_id WHERE m.contact_id = ?1 AND m.account_id = ?2
           UNION ALL
           SELECT i.id, 'inbound', i.body, 'received', NULL, NULL, i.created_at, i.received_at, i.received_at, i.rowid
           FROM inbound_messages i WHERE i.contact_id = ?1 AND i.account_id = ?2)
         ORDER BY at DESC, rid DESC LIMIT ?3 OFFSET ?4`,
      )
      .all(id, accountId, limit, offset) as Array<TimelineItem & { at: string; rid: number }>
  ).map(({ at: _at, rid: _rid, receivedAt, ...m }) => (m.direction === "inbound" ? { ...m, receivedAt } : m));
  const total =
    countContactMessages(sqlite, accountId, id) +
    (sqlite.query(`SELECT count(*) AS n FROM inbound_messages WHERE contact_id = ? AND account_id = ?`).get(id, accountId) as { n: number }).n;
  return { messages, total };
}

/** Deletes the contact and its messages; returns the ids of those that were queued. */
export function deleteContactWithMessages(sqlite: Database, accountId: string, id: string): string[] {
  const removedQueued = deleteContactMessages(sqlite, accountId, id);
  // What they sent through the forms is theirs too (docs/api-decisions.md, "The owner hears back", every request kept).
  sqlite.query(`DELETE FROM submissions WHERE contact_id = ? AND account_id = ?`).run(id, accountId);
  sqlite.query(`DELETE FROM contacts WHERE id = ? AND account_id = ?`).run(id, accountId);
  return removedQueued;
}

/** Runs `fn` in a savepoint inside the caller's transaction: all of it or none (a bulk update's one contact). */
export function inContactSavepoint<T>(sqlite: Database, fn: () => T): T {
  sqlite.exec("SAVEPOINT contact");
  try {
    const out = fn();
    sqlite.exec("RELEASE contact");
    return out;
  } catch (err) {
    sqlite.exec("ROLLBACK TO contact");
    sqlite.exec("RELEASE contact");
    throw err;
  }
}

/**
 * Runs `fn` with synchronous=NORMAL (an import slice commits without waiting for the disk, still
 * atomic in WAL mode), then puts the connection's setting back before anything else can run.
 */
export function relaxedSync<T>(sqlite: Database, fn: () => T): T {
  const sync = (sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
  sqlite.exec("PRAGMA synchronous = NORMAL");
  try {
    return fn();
  } finally {
    sqlite.exec(`PRAGMA synchronous = ${sync}`);
  }
}

/**
 * The durable point of an import: a commit that writes a page, at the connection's own
 * setting, syncs the WAL and with it every relaxed slice before (a no-op rewrite of the account row).
 */
export function syncImportCommit(sqlite: Database, accountId: string): void {
  sqlite.transaction(() => sqlite.query("UPDATE accounts SET name = name WHERE id = ?").run(accountId))();
}

/** The contact's own time zone (IANA), or null (unknown, or no such contact in the account). */
export function contactTimeZoneOf(sqlite: Database, accountId: string, id: string): string | null {
  const r = sqlite.query("SELECT time_zone AS z FROM contacts WHERE id = ?1 AND account_id = ?2").get(id, accountId) as { z: string | null } | null;
  return r?.z ?? null;
}
