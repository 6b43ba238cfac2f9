import type { Db } from "../db/open";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import { newFormId, UUID_RE } from "../lib/ids";
import { DEFAULT_FORM_SETTINGS, validateFormFields, validateFormSettings, validateTemplate } from "../domain/form-definition";
import { valueAtPath } from "../domain/field-path";
import type { FieldDef } from "../domain/submission";
import type { Priority } from "../domain/statuses";
import { expandProtection, validateProtectionSettings } from "../domain/protection";
import { deleteFormCascade, findAccountForm, findFormById, formIdByNameKey, insertForm, listForms, updateForm, updateWebhookToken, type FormRow } from "../db/stores/forms";
import { findAccountDefaultCountry } from "../db/stores/accounts";

/** Form names: 1–100 characters. */
export const FORM_NAME_MAX = 100;
export const FORM_DESCRIPTION_MAX = 1_000;

export interface FormSettings {
  autoSend?: boolean;
  delayMinutes?: number;
  timezone?: string;
  rateLimitPerDay?: number | null;
  defaultPriority?: Priority;
  /** Public-form protections: see src/domain/protection.ts. */
  [protection: string]: unknown;
}

export interface Form {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  messageTemplate: string;
  isActive: boolean;
  fields: FieldDef[];
  settings: FormSettings;
  /** The webhook address's token: the id until the address is rotated. */
  webhookToken: string;
  createdAt: string;
  updatedAt: string;
}

export function toForm(row: FormRow): Form {
  return {
    id: row.id,
    accountId: row.accountId,
    name: row.name,
    description: row.description,
    messageTemplate: row.messageTemplate,
    isActive: row.isActive,
    fields: row.fields,
    settings: row.settings,
    webhookToken: row.webhookToken ?? row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export interface FormInput {
  name?: unknown;
  description?: unknown;
  messageTemplate?: unknown;
  isActive?: unknown;
  fields?: unknown;
  settings?: unknown;
}

const SPEC_SETTINGS_DEFAULTS = { delayMinutes: DEFAULT_FORM_SETTINGS.delayMinutes, timezone: DEFAULT_FORM_SETTINGS.timezone };

/** Each error shows the value its field path names in the request (unless it already shows one). */
function withProvided<E extends { field: string; provided?: unknown }>(errors: E[], input: FormInput): E[] {
  return errors.map((e) => ("provided" in e ? e : { ...e, provided: valueAtPath(input, e.field) }));
}

function checkName(name: unknown, errors: Array<{ field: string; message: string; provided?: unknown; requirement?: string }>) {
  if (typeof name !== "string" || name.trim().length === 0) {
    errors.push({ field: "name", message: "name is required", requirement: "1-100 characters", provided: name ?? null });
  } else if (name.length > FORM_NAME_MAX) {
    errors.push({ field: "name", message: `name must be at most ${FORM_NAME_MAX} characters`, requirement: "1-100 characters", provided: name.slice(0, 100) });
  }
}

function checkDescription(d: unknown, errors: Array<{ field: string; message: string }>) {
  if (d !== undefined && d !== null && (typeof d !== "string" || d.length > FORM_DESCRIPTION_MAX)) {
    errors.push({ field: "description", message: `description must be a string of at most ${FORM_DESCRIPTION_MAX} characters` });
  }
}

export class FormService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** After a commit that deleted queued messages: out of the in-memory queue, leases ended (LeaseService.withdraw). */
    private readonly withdraw: (ids: string[]) => void = () => {},
  ) {}

  list(accountId: string, q: { page: number; limit: number; isActive?: boolean; search?: string }) {
    const { rows, total } = listForms(this.db, accountId, q);
    return { forms: rows, total, page: q.page, limit: q.limit };
  }

  /** Another account's form is answered exactly like a form that does not exist. */
  get(accountId: string, id: string): Form {
    if (!UUID_RE.test(id)) throw new AppError("FORM_NOT_FOUND", { details: { formId: id } });
    const row = findAccountForm(this.db, accountId, id);
    if (!row) throw new AppError("FORM_NOT_FOUND", { details: { formId: id } });
    return toForm(row);
  }

  /** The webhook's lookup: by id alone (the id is the credential). */
  findById(id: string): Form | null {
    if (!UUID_RE.test(id)) return null;
    const row = findFormById(this.db, id);
    return row ? toForm(row) : null;
  }

  create(accountId: string, input: FormInput): Form {
    const errors: Array<{ field: string; message: string }> = [];
    checkName(input.name, errors);
    checkDescription(input.description, errors);
    errors.push(...validateTemplate(input.messageTemplate));
    errors.push(...validateFormFields(input.fields));
    if (input.settings !== undefined) errors.push(...validateFormSettings(input.settings, input.fields));
    if (input.isActive !== undefined && typeof input.isActive !== "boolean") errors.push({ field: "isActive", message: "isActive must be true or false" });
    if (errors.length) throw validationError(withProvided(errors, input));
    const name = (input.name as string).trim();
    const settings =
      input.settings === undefined || input.settings === null
        ? {}
        : expandProtection(input.settings as Record<string, unknown>, findAccountDefaultCountry(this.db.$client, accountId));
    const now = iso(this.clock());
    const row: FormRow = {
      id: newFormId(),
      accountId,
      name,
      nameKey: name.toLowerCase(),
      description: (input.description as string | undefined) ?? null,
      messageTemplate: input.messageTemplate as string,
      // A form created through the API is active (spec).
      isActive: true,
      fields: input.fields as FieldDef[],
      // The spec's defaults are written out, so the answer shows them (delayMinutes 0, UTC).
      settings: { ...SPEC_SETTINGS_DEFAULTS, ...settings },
      webhookToken: null,
      spamBlocked: 0,
      createdAt: now,
      updatedAt: now,
    };
    this.assertNameFree(accountId, row.nameKey, null, name);
    insertForm(this.db, row);
    return toForm(row);
  }

  update(accountId: string, id: string, input: FormInput): Form {
    const current = this.get(accountId, id);
    const errors: Array<{ field: string; message: string }> = [];
    if (input.name !== undefined) checkName(input.name, errors);
    checkDescription(input.description, errors);
    if (input.messageTemplate !== undefined) errors.push(...validateTemplate(input.messageTemplate));
    if (input.fields !== undefined) errors.push(...validateFormFields(input.fields));
    if (input.settings !== undefined) {
      errors.push(...validateFormSettings(input.settings, input.fields ?? current.fields, current.settings.captcha));
    } else if (input.fields !== undefined && typeof current.settings.honeypotField === "string") {
      // New fields must not take the honeypot's name (its submissions would be dropped as spam).
      errors.push(...validateProtectionSettings({ honeypotField: current.settings.honeypotField }, input.fields));
    }
    if (input.isActive !== undefined && typeof input.isActive !== "boolean") errors.push({ field: "isActive", message: "isActive must be true or false" });
    if (errors.length) throw validationError(withProvided(errors, input));

    const patch: Partial<FormRow> = { updatedAt: nextUpdatedAt(this.clock(), current.updatedAt) };
    if (input.name !== undefined) {
      patch.name = (input.name as string).trim();
      patch.nameKey = patch.name.toLowerCase();
      this.assertNameFree(accountId, patch.nameKey, id, patch.name);
    }
    if (input.description !== undefined) patch.description = input.description as string | null;
    if (input.messageTemplate !== undefined) patch.messageTemplate = input.messageTemplate as string;
    if (input.isActive !== undefined) patch.isActive = input.isActive as boolean;
    if (input.fields !== undefined) patch.fields = input.fields as FieldDef[];
    // Settings merge key by key; a null value clears that setting.
    if (input.settings !== undefined) {
      const merged: Record<string, unknown> = { ...current.settings };
      const posted = expandProtection(
        (input.settings ?? {}) as Record<string, unknown>,
        findAccountDefaultCountry(this.db.$client, accountId),
        current.settings.captcha,
      );
      for (const [k, v] of Object.entries(posted)) {
        // honeypotField: null is "off", not "back to the default" (the default is on).
        if (v === null && k !== "honeypotField") delete merged[k];
        else merged[k] = v;
      }
      patch.settings = merged;
    }
    updateForm(this.db, accountId, id, patch);
    return this.get(accountId, id);
  }

  /**
   * Gives the form a new webhook address (token): the old one answers 404 at once; the id and
   * everything recorded under it (contacts, messages, submissions, stats) stay.
   */
  rotateWebhook(accountId: string, id: string): Form {
    const current = this.get(accountId, id);
    updateWebhookToken(this.db.$client, accountId, id, newFormId(), nextUpdatedAt(this.clock(), current.updatedAt));
    return this.get(accountId, id);
  }

  private assertNameFree(accountId: string, nameKey: string, exceptId: string | null, name: string) {
    const clash = formIdByNameKey(this.db, accountId, nameKey);
    if (clash !== null && clash !== exceptId) {
      throw new AppError("DUPLICATE_FORM_NAME", { message: `A form named "${name}" already exists`, details: { name, existingFormId: clash } });
    }
  }

  /**
   * Deletes the form with its submissions, messages, and the contacts it created together with
   * their message history — one transaction. The queued messages that went with it leave the
   * in-memory queue after the commit.
   */
  delete(accountId: string, id: string): { deletedId: string } {
    this.get(accountId, id);
    const removedQueued = this.db.$client.transaction(() => deleteFormCascade(this.db, accountId, id))();
    this.withdraw(removedQueued);
    return { deletedId: id };
  }
}
