/**
 * What accepting a webhook submission reads of contacts, prepared once on the main connection for
 * the hot path (stores/submissions.ts gathers it).
 */
import type { Database } from "bun:sqlite";
import type { contacts } from "../../schema/contacts";

/** The account's contact with a phone number, and whether it opted out. */
export type SubmissionContact = Pick<typeof contacts.$inferSelect, "id" | "timeZone"> & { optedOut: boolean };

export function acceptingContactStatements(sqlite: Database): { contactByPhone(accountId: string, phone: string): SubmissionContact | null } {
  const byPhone = sqlite.prepare<Omit<SubmissionContact, "optedOut"> & { optedOut: number }, [string, string]>(
    "SELECT id, opted_out AS optedOut, time_zone AS timeZone FROM contacts WHERE account_id = ? AND phone_number = ?",
  );
  return {
    contactByPhone(accountId, phone) {
      const row = byPhone.get(accountId, phone);
      return row ? { ...row, optedOut: row.optedOut === 1 } : null;
    },
  };
}
