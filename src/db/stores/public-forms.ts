/**
 * Storage of what public forms add to forms: the rotatable webhook token, the honeypot counter, and
 * the account's default country (the recommended allowedCountries). Plain functions over the db;
 * none is on the webhook's hot path (the honeypot count is added every few seconds in one job).
 */
import type { Database } from "bun:sqlite";
import { DEFAULT_PHONE_COUNTRY } from "../../domain/phone";
import { invalidateWebhookForms } from "../webhook-form-cache";
import type { forms } from "../schema/forms";

type Form = typeof forms.$inferSelect;

const hasColumn = new WeakMap<Database, boolean>();

/**
 * The account's default country (accounts.default_country, set with `accounts update
 * --default-country`), else US. The column comes with another change; until it exists every
 * account's default is US.
 */
export function findAccountDefaultCountry(sqlite: Database, accountId: string): string {
  let known = hasColumn.get(sqlite);
  if (known === undefined) {
    known = (sqlite.query("PRAGMA table_info(accounts)").all() as Array<{ name: string }>).some((c) => c.name === "default_country");
    hasColumn.set(sqlite, known);
  }
  if (!known) return DEFAULT_PHONE_COUNTRY;
  const row = sqlite.query("SELECT default_country AS c FROM accounts WHERE id = ?").get(accountId) as { c: string | null } | null;
  return typeof row?.c === "string" && /^[A-Za-z]{2}$/.test(row.c) ? row.c.toUpperCase() : DEFAULT_PHONE_COUNTRY;
}

/** Gives the form a new webhook token; false when the form is not the account's. */
export function updateWebhookToken(sqlite: Database, accountId: string, formId: string, token: string, updatedAt: string): boolean {
  const changed = sqlite.query("UPDATE forms SET webhook_token = ?, updated_at = ? WHERE id = ? AND account_id = ?").run(token, updatedAt, formId, accountId).changes === 1;
  invalidateWebhookForms(sqlite); // the old address must answer 404 at once
  return changed;
}

/** The form's id and name by webhook address token (rotated token, or the id of a never-rotated form). */
export function findFormByWebhookToken(sqlite: Database, token: string): Pick<Form, "id" | "name"> | null {
  return (
    (sqlite.query("SELECT id, name FROM forms WHERE webhook_token = ?1 OR (webhook_token IS NULL AND id = ?1)").get(token.toLowerCase()) as Pick<
      Form,
      "id" | "name"
    > | null) ?? null
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
