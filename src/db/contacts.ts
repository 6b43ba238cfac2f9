/**
 * Contact reads and writes used outside ContactService (inbound messages, opt-outs): plain
 * functions over the connection, statements cached by `sqlite.query`.
 */
import type { Database } from "bun:sqlite";
import { contactSearchText } from "../domain/contact-search";
import type { ContactStatus } from "../domain/contact-update";

export interface ContactLink {
  id: string;
  status: ContactStatus;
  optedOut: boolean;
  /** When the opt-out took effect (null while not opted out). */
  optedOutAt: string | null;
  firstName: string | null;
  lastName: string | null;
  updatedAt: string;
}

export function findContactByPhone(sqlite: Database, accountId: string, phone: string): ContactLink | null {
  const r = sqlite
    .query(
      `SELECT id, status, opted_out AS optedOut, opted_out_at AS optedOutAt, first_name AS firstName, last_name AS lastName, updated_at AS updatedAt
       FROM contacts WHERE account_id = ?1 AND phone_number = ?2`,
    )
    .get(accountId, phone) as (Omit<ContactLink, "optedOut"> & { optedOut: number }) | null;
  return r ? { ...r, optedOut: r.optedOut === 1 } : null;
}

/** Whether the account's contact for this number opted out (a number without a contact has not). */
export function isNumberOptedOut(sqlite: Database, accountId: string, phone: string): boolean {
  return sqlite.query("SELECT 1 AS x FROM contacts WHERE account_id = ?1 AND phone_number = ?2 AND opted_out = 1").get(accountId, phone) !== null;
}

/** Sets or clears the opt-out (optedOutAt is kept only while opted out). */
export function setContactOptOut(sqlite: Database, id: string, optedOut: boolean, at: string | null, updatedAt: string): void {
  sqlite
    .query("UPDATE contacts SET opted_out = ?2, opted_out_at = ?3, updated_at = ?4 WHERE id = ?1")
    .run(id, optedOut ? 1 : 0, optedOut ? at : null, updatedAt);
}

/** How a contact entered: stored as JSON on the contact. */
export interface ConsentRecord {
  source: "webhook" | "import" | "manual" | "api" | "inbound";
  formId?: string;
  at: string;
  ipAddress?: string;
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
