/**
 * A contact as the API shows it, and how it is read: the columns (alias `c` = contacts, `f` =
 * forms) and the mapper from the row. Shared by the contacts service, exports and outbound event
 * payloads, which read contacts the same way.
 */
import type { Database } from "bun:sqlite";
import type { ContactState } from "../domain/contact-update";
import type { ConsentRecord } from "./contacts";

/** The API's Contact (spec "Contact"). */
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
export const CONTACT_SELECT = `c.id, c.phone_number AS phoneNumber, c.first_name AS firstName, c.last_name AS lastName,
  c.email, c.status, c.form_id AS formId, f.name AS formName, c.custom_fields AS customFields, c.tags,
  c.last_contacted_at AS lastContactedAt, c.last_response_at AS lastResponseAt, c.message_count AS messageCount,
  c.source, c.notes, c.opted_out AS optedOut, c.opted_out_at AS optedOutAt, c.consent, c.created_at AS createdAt, c.updated_at AS updatedAt`;
export const CONTACT_FROM = `contacts c LEFT JOIN forms f ON f.id = c.form_id`;

export type ContactRow = Omit<Contact, "customFields" | "tags" | "optedOut" | "consent"> & { customFields: string; tags: string; optedOut: number; consent: string | null };

export function toContact(r: ContactRow): Contact {
  return { ...r, customFields: JSON.parse(r.customFields), tags: JSON.parse(r.tags), optedOut: r.optedOut === 1, consent: r.consent ? JSON.parse(r.consent) : null };
}

/** Any account's contact as the API shows it (outbound event payloads), or null. */
export function findContactView(sqlite: Database, id: string): Contact | null {
  const row = sqlite.query(`SELECT ${CONTACT_SELECT} FROM ${CONTACT_FROM} WHERE c.id = ?1`).get(id) as ContactRow | null;
  return row ? toContact(row) : null;
}
