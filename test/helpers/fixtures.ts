/**
 * Row builders that arrange what the API cannot make (docs/development.md, "The code and the
 * tests"): forms, contacts, submissions and messages written straight into SQLite with the times,
 * statuses and histories a test needs — a text sent last week, a contact created on a set day, a
 * submission that made no contact — which requests stamp with the server's clock and reach only
 * through a phone's reports. Each writes what every writer writes (derived counts, search text);
 * messages inserted as `queued` are also put in the running server's in-memory queue. A test
 * reads the result back through the API, never through these rows.
 */
import type { Database } from "bun:sqlite";
import type { AppDeps } from "../../src/deps";
import { PRIORITY_RANK, type Priority } from "../../src/queue/priority-queue";
import { recordFormRows, recordMessageInsert } from "../../src/db/derived-counts";
import { contactSearchText } from "../../src/domain/contact-search";

export const iso = (ms: number) => new Date(ms).toISOString();

export function insertForm(deps: AppDeps, accountId: string, o: { name?: string; timezone?: string; createdAt?: string } = {}): string {
  const id = crypto.randomUUID();
  const name = o.name ?? `Form ${id.slice(0, 8)}`;
  const at = o.createdAt ?? iso(deps.clock());
  deps.sqlite
    .query(
      `INSERT INTO forms (id, account_id, name, name_key, description, message_template, is_active, fields, settings, created_at, updated_at)
       VALUES (?1, ?2, ?3, lower(?3), NULL, 'Hi {{firstName}}', 1, '[{"name":"firstName","type":"text"}]', ?4, ?5, ?5)`,
    )
    .run(id, accountId, name, JSON.stringify({ timezone: o.timezone ?? "UTC" }), at);
  return id;
}

export function insertContact(
  deps: AppDeps,
  accountId: string,
  o: { phone?: string; firstName?: string; formId?: string | null; status?: string; createdAt?: string; messageCount?: number } = {},
): string {
  const id = Bun.randomUUIDv7();
  const phone = o.phone ?? `+1415555${String(Math.floor(Math.random() * 10000)).padStart(4, "0")}`;
  const at = o.createdAt ?? iso(deps.clock());
  deps.sqlite
    .query(
      `INSERT INTO contacts (id, account_id, phone_number, first_name, status, form_id, message_count, search_text, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)`,
    )
    // search_text as every writer stores it: contact search (names, e-mail, phone digits) reads it.
    .run(id, accountId, phone, o.firstName ?? null, o.status ?? "new", o.formId ?? null, o.messageCount ?? 0, contactSearchText({ firstName: o.firstName, phoneNumber: phone }), at);
  // As every writer of a contact with a form does: the form's rollup rows (migration 0022).
  if (o.formId) recordFormRows(deps.sqlite, { accountId, formId: o.formId, createdAt: at, submissions: 0, newContacts: 1 });
  return id;
}

export function insertSubmission(deps: AppDeps, accountId: string, formId: string, contactId: string, messageId: string, createdAt: string, newContact = true) {
  deps.sqlite
    .query("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
    .run(crypto.randomUUID(), accountId, formId, contactId, messageId, newContact ? 1 : 0, createdAt);
  recordFormRows(deps.sqlite, { accountId, formId, createdAt, submissions: 1, newContacts: 0 });
}

export interface MessageFixture {
  formId?: string | null;
  formName?: string | null;
  contactId?: string | null;
  phone?: string;
  content?: string;
  status?: "queued" | "sent" | "failed" | "cancelled";
  priority?: Priority;
  createdAt?: string;
  scheduledFor?: string;
  sentAt?: string | null;
  failureReason?: string | null;
  webhookData?: Record<string, unknown>;
}

export function insertMessage(deps: AppDeps, accountId: string, o: MessageFixture = {}): string {
  const id = Bun.randomUUIDv7();
  const createdAt = o.createdAt ?? iso(deps.clock());
  const priority = o.priority ?? "normal";
  const status = o.status ?? "queued";
  const seq = deps.seq.next();
  const scheduledFor = o.scheduledFor ?? createdAt;
  const sentAt = o.sentAt ?? (status === "sent" ? createdAt : null);
  const failureReason = o.failureReason ?? (status === "failed" ? "network-error" : null);
  deps.sqlite
    .query(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name, status, priority,
         priority_rank, webhook_data, template_used, scheduled_for, sent_at, failure_reason, metadata, seq, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'Ann', ?8, ?9, ?10, ?11, 'Hi {{firstName}}', ?12, ?13, ?14, '{"source":"webhook"}', ?15, ?16, ?16)`,
    )
    .run(
      id,
      accountId,
      o.formId ?? null,
      o.formName ?? null,
      o.contactId ?? null,
      o.content ?? "Hello",
      o.phone ?? "+14155552671",
      status,
      priority,
      PRIORITY_RANK[priority],
      JSON.stringify(o.webhookData ?? { firstName: "Ann" }),
      scheduledFor,
      sentAt,
      failureReason,
      seq,
      createdAt,
    );
  // Every writer of a message records its derived counts (src/db/derived-counts.ts).
  recordMessageInsert(deps.sqlite, { accountId, formId: o.formId ?? null, contactId: o.contactId ?? null, status, priorityRank: PRIORITY_RANK[priority], createdAt, sentAt, failureReason });
  if (status === "queued") deps.queue.insert({ id, accountId, priority, scheduledFor: Date.parse(scheduledFor), seq });
  return id;
}

export function row(sqlite: Database, id: string): Record<string, any> {
  return sqlite.query("SELECT * FROM messages WHERE id = ?").get(id) as Record<string, any>;
}
