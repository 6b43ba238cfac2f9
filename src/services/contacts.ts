/**
 * Contacts: reading, creating, changing and deleting them through the API. Listing is planned
 * in src/db/stores/contact-list.ts, imports are written by contact-import-rows.ts, analytics are
 * counted by contact-analytics.ts, and every opt-out goes through opt-outs.ts.
 */
import type { Database } from "bun:sqlite";
import type { Changes } from "../lib/changes";
import type { WriteGate } from "../db/write-gate";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import { contactSearchText } from "../domain/contact-search";
import { applyContactPatch, newContactState, validateContactInput, type ContactPatch, type ContactState } from "../domain/contact-update";
import type { ContactListQuery, AnalyticsQuery } from "../domain/contact-query";
import type { PendingContact } from "../db/stores/contact-batch";
import { ContactLists } from "../db/stores/contact-list";
import { ContactStore, type ConsentRecord, type Contact } from "../db/stores/contacts";
import type { FormService } from "./forms";
import { emitContact } from "./event-payloads";
import { parseOptOutFields, setOptOut } from "./opt-outs";
import { assertCustomFieldLimit, ContactImporter, type ImportResult, type ImportLine } from "./contact-import-rows";
import { contactAnalytics } from "./contact-analytics";

export type { Contact } from "../db/stores/contacts";
export type { ImportResult, ImportLine } from "./contact-import-rows";
export { IMPORT_SLICE_MS, MAX_IMPORT_ERRORS } from "./contact-import-rows";

export const MAX_BULK_IDS = 1_000;

/** How a new contact is made: its form, creation time (an import's createdAt) and consent record. */
export interface NewContactOptions {
  formId?: string | null;
  createdAt?: string;
  consent?: ConsentRecord;
}

export class ContactService {
  private readonly store: ContactStore;
  private readonly lists: ContactLists;
  private readonly importer: ContactImporter;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly forms: FormService,
    /** After a commit that cancelled queued messages (an opt-out): out of the queue and leases. */
    private readonly withdraw: (ids: string[]) => void = () => {},
    /** Import slices wait here while the checkpoint thread catches up (src/db/write-gate.ts). */
    gate?: WriteGate,
    /** Contact changes are announced after commit (the dashboard's live feed listens). */
    private readonly changes?: Changes,
  ) {
    this.store = new ContactStore(sqlite);
    this.lists = new ContactLists(sqlite);
    this.importer = new ContactImporter(sqlite, clock, this.store, this, withdraw, gate);
  }

  private now(after?: string): string {
    return nextUpdatedAt(this.clock(), after);
  }

  /** GET /v1/contacts: a page of the filtered, sorted list and its total. */
  list(accountId: string, q: ContactListQuery) {
    return this.lists.list(accountId, q);
  }

  /** Another account's contact is answered exactly like a contact that does not exist. */
  get(accountId: string, id: string): Contact {
    const contact = UUID_RE.test(id) ? this.store.find(accountId, id) : null;
    if (!contact) throw new AppError("CONTACT_NOT_FOUND", { message: `Contact ${id.slice(0, 64)} not found`, details: { contactId: id.slice(0, 64) } });
    return contact;
  }

  /**
   * Both directions, newest first: texts sent (`direction: "outbound"`, by createdAt) and texts
   * received (`"inbound"`, by receivedAt; `status: "received"`).
   */
  messages(accountId: string, id: string, paging: { page: number; limit: number }) {
    this.get(accountId, id);
    return this.store.timeline(accountId, id, paging.limit, (paging.page - 1) * paging.limit);
  }

  private duplicate(existingContactId: string, phone: string): AppError {
    return new AppError("DUPLICATE_PHONE_NUMBER", {
      message: `A contact with phone number ${phone} already exists`,
      details: { phoneNumber: phone, existingContactId },
      extra: { existingContactId },
    });
  }

  private assertPhoneFree(accountId: string, phone: string, exceptId: string | null) {
    const clash = this.store.idByPhone(accountId, phone);
    if (clash !== null && clash !== exceptId) throw this.duplicate(clash, phone);
  }

  /** A new contact's id and insert values (CONTACT_INSERT_ROW), not yet written (the import's batches too). */
  newContactRow(accountId: string, s: ContactState, opts: NewContactOptions = {}): PendingContact {
    const id = newId();
    const createdAt = opts.createdAt ?? this.now();
    const updatedAt = opts.createdAt ? this.now() : createdAt;
    const values = [
      id, accountId, s.phoneNumber, s.firstName, s.lastName, s.email, s.status, opts.formId ?? null,
      JSON.stringify(s.customFields), JSON.stringify(s.tags), s.lastResponseAt, s.source, s.notes,
      contactSearchText(s), createdAt, updatedAt < createdAt ? createdAt : updatedAt, opts.consent ? JSON.stringify(opts.consent) : null,
    ];
    return { id, phoneNumber: s.phoneNumber, values };
  }

  /**
   * Inserts a contact (no validation, no transaction: callers own both). `announce: false`: the
   * caller emits contact.created itself, once the contact is complete (an opt-out follows).
   */
  insertState(accountId: string, s: ContactState, opts: NewContactOptions = {}, announce = true): string {
    const row = this.newContactRow(accountId, s, opts);
    this.store.insert(row.values);
    if (announce) emitContact(this.sqlite, accountId, row.id, "contact.created", this.clock());
    return row.id;
  }

  /**
   * Applies a validated patch to a stored contact (no transaction: callers own it).
   * `announce: false`: the caller emits the one contact.updated after its other changes.
   */
  private applyPatch(accountId: string, current: Contact, patch: ContactPatch, announce = true) {
    const next = applyContactPatch(current, patch);
    assertCustomFieldLimit(next);
    if (patch.phoneNumber !== undefined && patch.phoneNumber !== current.phoneNumber) this.assertPhoneFree(accountId, patch.phoneNumber, current.id);
    this.store.update(accountId, current.id, next, this.now(current.updatedAt));
    if (announce) emitContact(this.sqlite, accountId, current.id, "contact.updated", this.clock());
  }

  create(accountId: string, body: unknown, ctx: { ipAddress?: string } = {}): Contact {
    const extra = parseOptOutFields(body, "create");
    const r = validateContactInput(extra.body, "create");
    if (!r.ok || extra.errors.length) throw validationError([...(r.ok ? [] : r.errors), ...extra.errors]);
    const state = newContactState(r.patch);
    const nowIso = iso(this.clock());
    const consent: ConsentRecord = { source: extra.consentSource ?? "api", at: nowIso, ...(ctx.ipAddress ? { ipAddress: ctx.ipAddress } : {}) };
    const { id, cancelled } = this.sqlite.transaction(() => {
      this.assertPhoneFree(accountId, state.phoneNumber, null);
      // contact.created carries the contact as it ends up (opted out included), then contact.opted_out.
      const id = this.insertState(accountId, state, { consent }, false);
      const cancelled = extra.optedOut === true ? setOptOut(this.sqlite, this.clock, accountId, id, state.phoneNumber, true, nowIso, false).cancelled : [];
      emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
      if (extra.optedOut === true) emitContact(this.sqlite, accountId, id, "contact.opted_out", this.clock());
      return { id, cancelled };
    })();
    if (cancelled.length) this.withdraw(cancelled);
    this.changes?.contact(accountId, "created");
    return this.get(accountId, id);
  }

  update(accountId: string, id: string, body: unknown): Contact {
    const current = this.get(accountId, id);
    const extra = parseOptOutFields(body, "update");
    // A body of optedOut (or consent) alone changes no other field.
    const onlyExtra = extra.split && Object.keys(extra.body as object).length === 0;
    const r: ReturnType<typeof validateContactInput> = onlyExtra ? { ok: true, patch: {} } : validateContactInput(extra.body, "update");
    if (!r.ok || extra.errors.length) throw validationError([...(r.ok ? [] : r.errors), ...extra.errors]);
    const cancelled = this.sqlite.transaction(() => {
      if (!onlyExtra) this.applyPatch(accountId, current, r.patch, false);
      const opt =
        extra.optedOut === undefined
          ? { cancelled: [], changed: false }
          : setOptOut(this.sqlite, this.clock, accountId, current.id, r.patch.phoneNumber ?? current.phoneNumber, extra.optedOut, iso(this.clock()));
      // One contact.updated for the request, after all its changes (docs/api-decisions.md, "The phone path, round two").
      if (!onlyExtra || opt.changed) emitContact(this.sqlite, accountId, current.id, "contact.updated", this.clock());
      return opt.cancelled;
    })();
    if (cancelled.length) this.withdraw(cancelled);
    this.changes?.contact(accountId, "updated");
    return this.get(accountId, current.id);
  }

  /**
   * Deletes the contact and its message history in one transaction; returns the ids of its
   * queued messages so the caller can take them out of the in-memory queue after the commit.
   */
  delete(accountId: string, id: string): { deletedId: string; removedQueued: string[] } {
    this.get(accountId, id);
    const out = this.sqlite.transaction(() => ({ deletedId: id, removedQueued: this.store.deleteWithMessages(accountId, id) }))();
    this.changes?.contact(accountId, "deleted");
    return out;
  }

  /**
   * The same update on many contacts. `updates` is validated once (a bad body is a 400 for the
   * whole request); each contact is then changed on its own, all or nothing, and a contact that
   * cannot be changed is listed in `errors` without stopping the others.
   */
  bulk(accountId: string, body: unknown): { updated: number; errors: Array<{ id: string; code: string; message: string }> } {
    const b = (typeof body === "object" && body !== null ? body : {}) as { contactIds?: unknown; updates?: unknown };
    const errs: Array<{ field: string; message: string; requirement?: string; provided?: unknown }> = [];
    const ids = b.contactIds;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_IDS || !ids.every((x) => typeof x === "string" && x.length > 0 && x.length <= 200)) {
      errs.push({ field: "contactIds", message: `contactIds must be an array of 1 to ${MAX_BULK_IDS} contact ids`, requirement: `1-${MAX_BULK_IDS} ids`, provided: Array.isArray(ids) ? ids.length : null });
    }
    const r = validateContactInput(b.updates, "bulk");
    if (!r.ok) errs.push(...r.errors.map((e) => ({ ...e, field: e.field === "updates" ? "updates" : `updates.${e.field}` })));
    if (errs.length || !r.ok) throw validationError(errs);
    const errors: Array<{ id: string; code: string; message: string }> = [];
    let updated = 0;
    this.sqlite.transaction(() => {
      for (const id of new Set(ids as string[])) {
        try {
          this.store.inSavepoint(() => this.applyPatch(accountId, this.get(accountId, id), r.patch));
          updated++;
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          errors.push({ id, code: err.code, message: err.message });
        }
      }
    })();
    if (updated > 0) this.changes?.contact(accountId, "updated");
    return { updated, errors };
  }

  /** Upserts contacts by phone from rows of cells (contact-import-rows.ts); announced once at the end. */
  async importRows(accountId: string, batches: AsyncIterable<ImportLine[]>): Promise<ImportResult> {
    const result = await this.importer.importRows(accountId, batches);
    if (result.created + result.updated > 0) this.changes?.contact(accountId, "updated");
    return result;
  }

  /** GET /v1/contacts/analytics (contact-analytics.ts). */
  analytics(accountId: string, q: AnalyticsQuery) {
    return contactAnalytics(this.sqlite, this.clock, this.forms, accountId, q);
  }
}
