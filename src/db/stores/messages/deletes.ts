/**
 * A contact's or a form's messages: counting a contact's (its timeline's total) and deleting them
 * with their owner — a form's (its own texts and those of the contacts it created) or a
 * contact's. The caller holds the transaction and deletes the owner after.
 */
import type { Database } from "bun:sqlite";

/** Deletes the form's messages and those of the contacts it created; returns the ids of the queued ones among them. */
export function deleteFormMessages(sqlite: Database, accountId: string, formId: string): string[] {
  const removedQueued = (
    sqlite
      .query(
        `SELECT id FROM messages WHERE status = 'queued' AND account_id = ?1 AND (form_id = ?2
           OR contact_id IN (SELECT id FROM contacts WHERE form_id = ?2 AND account_id = ?1))`,
      )
      .all(accountId, formId) as Array<{ id: string }>
  ).map((r) => r.id);
  sqlite.query("DELETE FROM messages WHERE account_id = ?1 AND contact_id IN (SELECT id FROM contacts WHERE form_id = ?2 AND account_id = ?1)").run(accountId, formId);
  sqlite.query("DELETE FROM messages WHERE account_id = ? AND form_id = ?").run(accountId, formId);
  return removedQueued;
}

/** Deletes the contact's messages; returns the ids of those that were queued. */
export function deleteContactMessages(sqlite: Database, accountId: string, contactId: string): string[] {
  const removedQueued = (
    sqlite.query(`SELECT id FROM messages WHERE contact_id = ? AND account_id = ? AND status = 'queued'`).all(contactId, accountId) as Array<{ id: string }>
  ).map((r) => r.id);
  sqlite.query(`DELETE FROM messages WHERE contact_id = ? AND account_id = ?`).run(contactId, accountId);
  return removedQueued;
}

/** The contact's messages (its timeline's outbound total). */
export function countContactMessages(sqlite: Database, accountId: string, contactId: string): number {
  return (sqlite.query(`SELECT count(*) AS n FROM messages WHERE contact_id = ? AND account_id = ?`).get(contactId, accountId) as { n: number }).n;
}
