/**
 * Fixture builders that write forms, contacts and messages straight into SQLite, to arrange what
 * the contacts API cannot make (docs/development.md, "The code and the tests"): contacts created
 * or updated on set days, with counted texts or a reply time, texts already sent. A contact the
 * API can make is made with POST /contacts instead. Contacts are written the way every writer must: E.164 phone,
 * search_text from contactSearchText(), tags mirrored in contact_tags (by trigger, migration 0020).
 */
import type { Database } from "bun:sqlite";
import { contactSearchText } from "../../src/domain/contact-search";
import { recordFormRows, recordMessageInsert } from "../../src/db/derived-counts";

let counter = 0;

export function insertForm(db: Database, accountId: string, name = `Form ${++counter}`, createdAt = new Date().toISOString()): string {
  const id = crypto.randomUUID();
  db.query(
    `INSERT INTO forms (id, account_id, name, name_key, description, message_template, is_active, fields, settings, created_at, updated_at)
     VALUES (?, ?, ?, ?, NULL, 'Hi {{firstName}}', 1, '[{"name":"firstName","type":"text"}]', '{}', ?, ?)`,
  ).run(id, accountId, name, name.toLowerCase(), createdAt, createdAt);
  return id;
}

export interface ContactFixture {
  phoneNumber?: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  status?: "new" | "contacted" | "responded" | "converted";
  formId?: string | null;
  customFields?: Record<string, string>;
  tags?: string[];
  lastResponseAt?: string | null;
  lastContactedAt?: string | null;
  messageCount?: number;
  source?: string | null;
  notes?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

let phoneSeq = 0;
/** Distinct valid US numbers: +1 201 555 01xx and onwards. */
export function nextPhone(): string {
  const n = phoneSeq++;
  return `+1201${String(5550100 + n).padStart(7, "0")}`;
}

export function insertContact(db: Database, accountId: string, c: ContactFixture = {}): string {
  const id = Bun.randomUUIDv7();
  const phone = c.phoneNumber ?? nextPhone();
  const createdAt = c.createdAt ?? new Date().toISOString();
  const tags = c.tags ?? [];
  db.query(
    `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags,
       last_contacted_at, last_response_at, message_count, source, notes, search_text, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id, accountId, phone, c.firstName ?? null, c.lastName ?? null, c.email ?? null, c.status ?? "new", c.formId ?? null,
    JSON.stringify(c.customFields ?? {}), JSON.stringify(tags), c.lastContactedAt ?? null, c.lastResponseAt ?? null,
    c.messageCount ?? 0, c.source ?? null, c.notes ?? null,
    contactSearchText({ firstName: c.firstName, lastName: c.lastName, email: c.email, phoneNumber: phone }),
    createdAt, c.updatedAt ?? createdAt,
  );
  // As every writer of a contact with a form does: the form's rollup rows (migration 0022).
  if (c.formId) recordFormRows(db, { accountId, formId: c.formId, createdAt, submissions: 0, newContacts: 1 });
  return id;
}

let seq = 1_000_000;
export function insertMessage(
  db: Database,
  accountId: string,
  m: { contactId: string; formId?: string | null; status?: "queued" | "sent" | "failed" | "cancelled"; content?: string; createdAt?: string; sentAt?: string | null },
): { id: string; seq: number } {
  const id = Bun.randomUUIDv7();
  const createdAt = m.createdAt ?? new Date().toISOString();
  const s = ++seq;
  db.query(
    `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, status, priority, priority_rank,
       scheduled_for, sent_at, seq, created_at, updated_at)
     VALUES (?, ?, ?, NULL, ?, ?, '+12015550100', ?, 'normal', 2, ?, ?, ?, ?, ?)`,
  ).run(id, accountId, m.formId ?? null, m.contactId, m.content ?? "Hello", m.status ?? "queued", createdAt, m.sentAt ?? null, s, createdAt, createdAt);
  recordMessageInsert(db, { accountId, formId: m.formId ?? null, contactId: m.contactId, status: m.status ?? "queued", priorityRank: 2, createdAt, sentAt: m.sentAt ?? null, failureReason: null });
  return { id, seq: s };
}
