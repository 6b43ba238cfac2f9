/**
 * Storage of forms (table forms), through drizzle's query builder, and the form-wide statements
 * that reach into its dependants: deleting a form with what it created, and the per-form counts
 * of the forms list, the rotatable webhook address token and the honeypot counter.
 */
import { and, count, desc, eq, or, sql } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import type { Db } from "../open";
import { forms } from "../schema";
import type { FieldDef } from "../../domain/submission";
import { invalidateWebhookForms } from "../webhook-form-cache";
import { LEVEL_DAY } from "../../domain/rollup-buckets";
import { deleteFormMessages } from "./messages/deletes";
import { contactCountsByForm, deleteFormContacts } from "./contacts";

type StoredForm = Omit<typeof forms.$inferSelect, "plainHttpPostAt">;

/** A form as stored, its JSON columns parsed: the field definitions and the settings object. */
export type FormRow = Omit<StoredForm, "fields" | "settings"> & { fields: FieldDef[]; settings: Record<string, unknown> };

const toFormRow = (row: StoredForm): FormRow => ({ ...row, fields: JSON.parse(row.fields) as FieldDef[], settings: JSON.parse(row.settings) as Record<string, unknown> });

/** The columns of a form (or of a patch) as stored: JSON columns as text. */
function toStored<T extends Partial<FormRow>>(row: T): Omit<T, "fields" | "settings"> & Partial<Pick<StoredForm, "fields" | "settings">> {
  const { fields, settings, ...rest } = row;
  return { ...rest, ...(fields !== undefined && { fields: JSON.stringify(fields) }), ...(settings !== undefined && { settings: JSON.stringify(settings) }) };
}

/** A row of the forms list. */
export type FormListRow = Pick<FormRow, "id" | "name" | "description" | "isActive" | "createdAt" | "updatedAt"> & { webhookToken: string };

/** Escapes LIKE wildcards so a search for "50%" means the text "50%". */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

/** A page of the account's forms, newest first, with the total matching. */
export function listForms(db: Db, accountId: string, q: { page: number; limit: number; isActive?: boolean; search?: string }): { rows: FormListRow[]; total: number } {
  const conds = [eq(forms.accountId, accountId)];
  if (q.isActive !== undefined) conds.push(eq(forms.isActive, q.isActive));
  if (q.search) {
    const pattern = `%${likeEscape(q.search.toLowerCase())}%`;
    conds.push(
      or(
        sql`lower(${forms.name}) LIKE ${pattern} ESCAPE '\\'`,
        sql`lower(coalesce(${forms.description}, '')) LIKE ${pattern} ESCAPE '\\'`,
      )!,
    );
  }
  const where = and(...conds);
  const rows = db
    .select({
      id: forms.id,
      name: forms.name,
      description: forms.description,
      isActive: forms.isActive,
      webhookToken: sql<string>`coalesce(${forms.webhookToken}, ${forms.id})`,
      createdAt: forms.createdAt,
      updatedAt: forms.updatedAt,
    })
    .from(forms)
    .where(where)
    .orderBy(desc(forms.createdAt), desc(forms.id))
    .limit(q.limit)
    .offset((q.page - 1) * q.limit)
    .all();
  const total = db.select({ n: count() }).from(forms).where(where).get()!.n;
  return { rows, total };
}

/** The account's form by id (another account's form is not found). */
export function findAccountForm(db: Db, accountId: string, id: string): FormRow | null {
  const row = db.select().from(forms).where(and(eq(forms.id, id), eq(forms.accountId, accountId))).get();
  return row ? toFormRow(row) : null;
}

/** A form by id alone. */
export function findFormById(db: Db, id: string): FormRow | null {
  const row = db.select().from(forms).where(eq(forms.id, id)).get();
  return row ? toFormRow(row) : null;
}

/** The id of the account's form with this lower-cased name, if any. */
export function formIdByNameKey(db: Db, accountId: string, nameKey: string): string | null {
  return db.select({ id: forms.id }).from(forms).where(and(eq(forms.accountId, accountId), eq(forms.nameKey, nameKey))).get()?.id ?? null;
}

export function insertForm(db: Db, row: FormRow): void {
  db.insert(forms).values(toStored(row) as StoredForm).run();
}

/** Writes the changed columns; the webhook's cached lookups are dropped (they carry the definition). */
export function updateForm(db: Db, accountId: string, id: string, patch: Partial<FormRow>): void {
  db.update(forms).set(toStored(patch)).where(and(eq(forms.id, id), eq(forms.accountId, accountId))).run();
  invalidateWebhookForms(db.$client);
}

/**
 * Deletes the form with its submissions, messages, and the contacts it created together with
 * their message history. The caller holds the transaction. Returns the ids of the queued
 * messages that went with it.
 */
export function deleteFormCascade(db: Db, accountId: string, id: string): string[] {
  const sqlite = db.$client;
  const removedQueued = deleteFormMessages(sqlite, accountId, id);
  sqlite.query("DELETE FROM submissions WHERE form_id = ?").run(id);
  deleteFormContacts(sqlite, accountId, id);
  sqlite.query("DELETE FROM forms WHERE account_id = ? AND id = ?").run(accountId, id);
  invalidateWebhookForms(sqlite);
  return removedQueued;
}

/** The account's forms' ids and names (one form's when formId is given), for analytics. */
export function formNames(sqlite: Database, accountId: string, formId: string | null): Array<{ formId: string; formName: string }> {
  return sqlite
    .query("SELECT id AS formId, name AS formName FROM forms WHERE account_id = ?1 AND (?2 IS NULL OR id = ?2)")
    .all(accountId, formId) as Array<{ formId: string; formName: string }>;
}

/** The settings of the account's form (as stored, parsed; `{}` for a stored null), or null when it is not the account's. */
export function findFormSettings(sqlite: Database, accountId: string, formId: string): Record<string, unknown> | null {
  const row = sqlite.query("SELECT settings FROM forms WHERE id = ?1 AND account_id = ?2").get(formId, accountId) as { settings: string } | null;
  return row ? ((JSON.parse(row.settings) as Record<string, unknown> | null) ?? {}) : null;
}

/**
 * Per form: messages created and sent, contacts and converted contacts (two grouped queries for a
 * page of forms). The messages come from the form's daily rollup rows — the sums the Messages
 * page's per-form summary reads too — not from the messages themselves (a year of a busy form is
 * hundreds of thousands of rows: seconds, against a few hundred small rows); the contacts from
 * the (form_id, status) index alone (migration 0035; `formIds` are the account's forms, listed
 * for it). docs/api-decisions.md, "Pages with years of data".
 */
export function formTallies(
  db: Db,
  accountId: string,
  formIds: string[],
): { messages: Array<{ formId: string; n: number; sent: number }>; contacts: Array<{ formId: string; n: number; converted: number }> } {
  if (formIds.length === 0) return { messages: [], contacts: [] };
  const marks = formIds.map((_, i) => `?${i + 2}`).join(", ");
  const sqlite = db.$client;
  const messages = sqlite
    .query(
      `SELECT form_id AS formId, sum(queued + sent + failed + cancelled) AS n, sum(sent) AS sent FROM message_rollups
       WHERE account_id = ?1 AND form_id IN (${marks}) AND level = ${LEVEL_DAY} AND reason = '' GROUP BY form_id`,
    )
    .all(accountId, ...formIds) as Array<{ formId: string; n: number; sent: number }>;
  const contacts = contactCountsByForm(sqlite, formIds);
  return { messages, contacts };
}

/** The form is the account's (an import row's formId). */
export function formBelongsTo(sqlite: Database, formId: string, accountId: string): boolean {
  return sqlite.query("SELECT id FROM forms WHERE id = ? AND account_id = ?").get(formId, accountId) !== null;
}

/** Gives the form a new webhook token; false when the form is not the account's. */
export function updateWebhookToken(sqlite: Database, accountId: string, formId: string, token: string, updatedAt: string): boolean {
  const changed = sqlite.query("UPDATE forms SET webhook_token = ?, updated_at = ? WHERE id = ? AND account_id = ?").run(token, updatedAt, formId, accountId).changes === 1;
  invalidateWebhookForms(sqlite); // the old address must answer 404 at once
  return changed;
}

/** The form's id and name by webhook address token (rotated token, or the id of a never-rotated form). */
export function findFormByWebhookToken(sqlite: Database, token: string): { id: string; name: string } | null {
  return (
    (sqlite.query("SELECT id, name FROM forms WHERE webhook_token = ?1 OR (webhook_token IS NULL AND id = ?1)").get(token.toLowerCase()) as {
      id: string;
      name: string;
    } | null) ?? null
  );
}

export function findSpamBlocked(sqlite: Database, formId: string): number {
  return (sqlite.query("SELECT spam_blocked AS n FROM forms WHERE id = ?").get(formId) as { n: number } | null)?.n ?? 0;
}

/** Adds pending honeypot counts (run inside the writer's transaction; deleted forms are skipped). */
export function addSpamBlocked(sqlite: Database, counts: Map<string, number>): void {
  const add = sqlite.query("UPDATE forms SET spam_blocked = spam_blocked + ? WHERE id = ?");
  for (const [formId, n] of counts) add.run(n, formId);
}

/** Records the last plain-HTTP post per webhook token (a token of no form changes nothing). */
export function recordPlainHttpPosts(sqlite: Database, posts: Map<string, string>): void {
  const set = sqlite.query("UPDATE forms SET plain_http_post_at = max(coalesce(plain_http_post_at, ''), ?2) WHERE webhook_token = ?1 OR (webhook_token IS NULL AND id = ?1)");
  sqlite.transaction(() => {
    for (const [token, at] of posts) set.run(token.toLowerCase(), at);
  })();
}

/** The account's forms posted to over plain HTTP since `since`, most recent first. */
export function listPlainHttpForms(sqlite: Database, accountId: string, since: string): Array<{ id: string; name: string; lastPlainHttpPostAt: string }> {
  return sqlite
    .query("SELECT id, name, plain_http_post_at AS lastPlainHttpPostAt FROM forms WHERE account_id = ?1 AND plain_http_post_at >= ?2 ORDER BY plain_http_post_at DESC LIMIT 100")
    .all(accountId, since) as Array<{ id: string; name: string; lastPlainHttpPostAt: string }>;
}
