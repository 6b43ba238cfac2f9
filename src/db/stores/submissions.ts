/**
 * What accepting a webhook submission reads (services/submissions.ts): the form and its
 * account by the address's token, whether the form still exists, the account's contact by phone,
 * and the counts its limits need (duplicate window, per-recipient and daily limits). These reads
 * touch forms, accounts, contacts and messages (those on contacts and messages live in their
 * tables' folders, stores/contacts/accepting.ts and stores/messages/accepting.ts, and are gathered
 * here): prepared once on the main connection for the hot path, and read inside the group-commit job together with the
 * intake's applied mark (docs/api-decisions.md, "One home per rule: accepting a submission").
 */
import type { Database, Statement } from "bun:sqlite";
import type { forms } from "../schema/forms";
import type { accounts } from "../schema/accounts";
import type { FieldDef } from "../../domain/submission";
import { acceptingContactStatements, type SubmissionContact } from "./contacts/accepting";
import { acceptingMessageStatements, type LatestMessage } from "./messages/accepting";

export type { LatestMessage, SubmissionContact };

type Form = typeof forms.$inferSelect;

/** A form as the webhook's lookup reads it (is_active as stored: 0 or 1; JSON columns as text). */
type StoredWebhookForm = Pick<Form, "id" | "accountId" | "name" | "messageTemplate" | "fields" | "settings" | "updatedAt"> & {
  isActive: number;
  monthlyQuota: (typeof accounts.$inferSelect)["monthlyQuota"];
};

/** A form as the webhook's lookup uses it, with its account's quota: flags as booleans, JSON columns parsed. */
export type WebhookFormRow = Omit<StoredWebhookForm, "isActive" | "fields" | "settings"> & {
  isActive: boolean;
  fields: FieldDef[];
  /** The settings as stored (null when stored as null). */
  settings: Record<string, unknown> | null;
};

/** Parsed definitions kept before the memo starts over (a few KiB each). */
const PARSED_FORMS_MAX = 10_000;

const FORM_COLUMNS = `f.id, f.account_id AS accountId, f.name, f.message_template AS messageTemplate, f.is_active AS isActive, f.fields,
         f.settings, f.updated_at AS updatedAt, a.monthly_quota AS monthlyQuota`;

export interface SubmissionStore {
  /**
   * The form behind a webhook address token (a never-rotated form's id, else its current token),
   * with its account's quota. Its fields and settings are parsed once per version of the form
   * (its updated_at): the same objects come back until the form changes.
   */
  webhookForm(token: string): WebhookFormRow | null;
  formExists: Statement<{ id: string }, [string]>;
  /** A form with a live automation (its submissions start runs: migration 0030's trigger). */
  formHasAutomation: Statement<{ x: number }, [string]>;
  contactByPhone(accountId: string, phone: string): SubmissionContact | null;
  /** (account, phone, form, since ISO): the newest queued or sent message. */
  lastMessageTo: Statement<LatestMessage, [string, string, string, string]>;
  /** (account, phone, since ISO): queued or sent messages to the number. */
  countRecentTo: Statement<{ n: number }, [string, string, string]>;
  /** (form, from ISO, to ISO): the form's messages scheduled in [from, to). */
  countScheduled: Statement<{ n: number }, [string, string, string]>;
}

export function submissionStore(sqlite: Database): SubmissionStore {
  const formById = sqlite.prepare<StoredWebhookForm, [string]>(`SELECT ${FORM_COLUMNS} FROM forms f JOIN accounts a ON a.id = f.account_id WHERE f.id = ? AND f.webhook_token IS NULL`);
  const formByToken = sqlite.prepare<StoredWebhookForm, [string]>(`SELECT ${FORM_COLUMNS} FROM forms f JOIN accounts a ON a.id = f.account_id WHERE f.webhook_token = ?`);
  const parsed = new Map<string, { updatedAt: string; fields: FieldDef[]; settings: Record<string, unknown> | null }>();
  return {
    webhookForm(token) {
      const row = formById.get(token) ?? formByToken.get(token);
      if (!row) return null;
      let def = parsed.get(row.id);
      if (def === undefined || def.updatedAt !== row.updatedAt) {
        if (parsed.size >= PARSED_FORMS_MAX) parsed.clear();
        def = { updatedAt: row.updatedAt, fields: JSON.parse(row.fields) as FieldDef[], settings: JSON.parse(row.settings) as Record<string, unknown> | null };
        parsed.set(row.id, def);
      }
      return { ...row, isActive: row.isActive === 1, fields: def.fields, settings: def.settings };
    },
    formExists: sqlite.prepare("SELECT id FROM forms WHERE id = ?"),
    formHasAutomation: sqlite.prepare("SELECT 1 AS x FROM automations WHERE form_id = ? AND is_active = 1 AND deleted_at IS NULL LIMIT 1"),
    ...acceptingContactStatements(sqlite),
    ...acceptingMessageStatements(sqlite),
  };
}
