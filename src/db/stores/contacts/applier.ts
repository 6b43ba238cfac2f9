/**
 * The intake applier's statements on contacts (one-row and multi-row forms): finding a
 * submission's contact by number, creating it, merging a resubmission into it. Prepared once per
 * connection when the applier starts (stores/intake-applier.ts gathers them).
 */
import type { Database, Statement } from "bun:sqlite";
import type { contacts } from "../../schema/contacts";
import { MultiInsert } from "../../multi-insert";

type Contact = typeof contacts.$inferSelect;

/** What the applier reads of a stored contact to merge a resubmission into it. */
export type ApplierContact = Pick<Contact, "id" | "firstName" | "lastName" | "email" | "customFields" | "source">;

const CONTACT_COLUMNS = "id, first_name AS firstName, last_name AS lastName, email, custom_fields AS customFields, source";
const CONTACT_INSERT = `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at, consent)`;
const CONTACT_VALUES = "(?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?, ?)";

/**
 * A stored contact's custom fields (the column's JSON text) with posted values merged in: posted
 * values win, the others stay. The applier carries the column as text and parses it only for a
 * merge, so a resubmission without custom fields costs no parse on the webhook's path.
 */
export function mergeCustomFields(stored: string, posted: Record<string, unknown>): string {
  return JSON.stringify({ ...(JSON.parse(stored) as Record<string, unknown>), ...posted });
}

export function applierContactStatements(sqlite: Database) {
  return {
    contactByPhone: sqlite.prepare(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = ? AND phone_number = ?`) as Statement<ApplierContact, [string, string]>,
    /** A chunk's contacts of one account at once (`?2`: a JSON array of phone numbers). */
    contactsByPhones: sqlite.prepare(
      `SELECT c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName, c.email,
              c.custom_fields AS customFields, c.source
         FROM json_each(?2) j CROSS JOIN contacts c ON c.account_id = ?1 AND c.phone_number = j.value`,
    ) as Statement<ApplierContact & { phoneNumber: string }, [string, string]>,
    contactInsert: sqlite.prepare(`${CONTACT_INSERT} VALUES ${CONTACT_VALUES}`) as Statement<unknown, any[]>,
    contactUpdate: sqlite.prepare(
      `UPDATE contacts SET first_name = ?, last_name = ?, email = ?, custom_fields = ?, source = ?, search_text = ?, updated_at = ?
        WHERE id = ?`,
    ) as Statement<unknown, any[]>,
    /** A form's timezone field sets the contact's own zone (docs/forms.md, "The customer's time zone"). */
    contactTimeZone: sqlite.prepare("UPDATE contacts SET time_zone = ? WHERE id = ?") as Statement<unknown, [string, string]>,
    contactInserts: new MultiInsert(sqlite, CONTACT_INSERT, CONTACT_VALUES),
    contactUpdates: new MultiInsert(
      sqlite,
      `UPDATE contacts SET first_name = v.column2, last_name = v.column3, email = v.column4, custom_fields = v.column5,
         source = v.column6, search_text = v.column7, updated_at = v.column8 FROM (`,
      "(?, ?, ?, ?, ?, ?, ?, ?)",
      ") AS v WHERE contacts.id = v.column1",
    ),
    /** A resubmission that changes nothing but updated_at: the name, email and search indexes are left alone. */
    contactTouches: new MultiInsert(sqlite, "UPDATE contacts SET updated_at = v.column2 FROM (", "(?, ?)", ") AS v WHERE contacts.id = v.column1"),
  };
}
