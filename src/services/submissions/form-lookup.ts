/**
 * The webhook's form lookup by the address's token (the credential): the form id of a form never
 * rotated, else its current webhook token. Whole lookups are cached per token
 * (src/db/webhook-form-cache.ts says how the cache stays true); the store parses a form's fields
 * and settings once per version, and its resolved settings and protections are cached here by id
 * while its updated_at is unchanged.
 */
import type { Database } from "bun:sqlite";
import { UUID_RE } from "../../lib/ids";
import type { FieldDef } from "../../domain/submission";
import { resolveFormSettings, type FormSettings } from "../../domain/form-definition";
import { resolveProtection, type ProtectionSettings } from "../../domain/protection";
import { templateVariables } from "../../domain/template";
import type { SubmissionStore } from "../../db/stores/submissions";
import { webhookFormCache, type WebhookFormCache } from "../../db/webhook-form-cache";

export interface WebhookForm {
  id: string;
  accountId: string;
  name: string;
  messageTemplate: string;
  isActive: boolean;
  fields: FieldDef[];
  settings: FormSettings;
  updatedAt: string;
  /** The owning account's monthly quota; null = none. */
  monthlyQuota: number | null;
  /** Public-form protections, defaults filled in. */
  protection: ProtectionSettings;
  /** The template's placeholder names (the values a message inserts). */
  variables: string[];
}

/** Resolved definitions kept before the cache starts over. */
const FORM_CACHE_MAX = 10_000;

export class WebhookFormLookup {
  /** Whole lookups by address token. */
  private readonly lookups: WebhookFormCache<WebhookForm>;
  /** Resolved settings, protections and variables per form, valid while updated_at is unchanged. */
  private readonly resolved = new Map<string, { updatedAt: string; settings: FormSettings; protection: ProtectionSettings; variables: string[] }>();

  constructor(sqlite: Database, private readonly store: SubmissionStore) {
    this.lookups = webhookFormCache<WebhookForm>(sqlite);
  }

  /** The form behind an address token; null when unknown or malformed. */
  find(token: string): WebhookForm | null {
    if (!UUID_RE.test(token)) return null;
    const hit = this.lookups.get(token.toLowerCase());
    if (hit !== undefined) return hit;
    const row = this.store.webhookForm(token.toLowerCase());
    if (!row) return null;
    let parsed = this.resolved.get(row.id);
    if (parsed === undefined || parsed.updatedAt !== row.updatedAt) {
      if (this.resolved.size >= FORM_CACHE_MAX) this.resolved.clear();
      parsed = {
        updatedAt: row.updatedAt,
        settings: resolveFormSettings(row.settings),
        protection: resolveProtection(row.settings ?? {}),
        variables: templateVariables(row.messageTemplate),
      };
      this.resolved.set(row.id, parsed);
    }
    const form: WebhookForm = {
      id: row.id,
      accountId: row.accountId,
      name: row.name,
      messageTemplate: row.messageTemplate,
      isActive: row.isActive,
      fields: row.fields,
      settings: parsed.settings,
      updatedAt: row.updatedAt,
      monthlyQuota: row.monthlyQuota,
      protection: parsed.protection,
      variables: parsed.variables,
    };
    this.lookups.set(token.toLowerCase(), form);
    return form;
  }
}
