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
  updatedAt: string;
}

export function findContactByPhone(sqlite: Database, accountId: string, phone: string): ContactLink | null {
  return sqlite
    .query("SELECT id, status, updated_at AS updatedAt FROM contacts WHERE account_id = ?1 AND phone_number = ?2")
    .get(accountId, phone) as ContactLink | null;
}

/** A contact known only by its number (first heard from by a text): status `responded`. */
export function insertRespondedContact(sqlite: Database, c: { id: string; accountId: string; phone: string; lastResponseAt: string; createdAt: string }): void {
  sqlite
    .query(
      `INSERT INTO contacts (id, account_id, phone_number, status, custom_fields, tags, last_response_at, message_count, search_text, created_at, updated_at)
       VALUES (?1, ?2, ?3, 'responded', '{}', '[]', ?4, 0, ?5, ?6, ?6)`,
    )
    .run(c.id, c.accountId, c.phone, c.lastResponseAt, contactSearchText({ phoneNumber: c.phone }), c.createdAt);
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
