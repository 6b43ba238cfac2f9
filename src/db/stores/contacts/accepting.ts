/**
 * What accepting a webhook submission reads of contacts, prepared once on the main connection for
 * the hot path (stores/submissions.ts gathers it).
 */
import type { Database, Statement } from "bun:sqlite";
import type { contacts } from "../../schema/contacts";

/** The account's contact with a phone number, and its opt-out flag as stored (0 or 1). */
export type SubmissionContact = Pick<typeof contacts.$inferSelect, "id" | "timeZone"> & { optedOut: number };

export function acceptingContactStatements(sqlite: Database): { contactByPhone: Statement<SubmissionContact, [string, string]> } {
  return {
    contactByPhone: sqlite.prepare("SELECT id, opted_out AS optedOut, time_zone AS timeZone FROM contacts WHERE account_id = ? AND phone_number = ?"),
  };
}
