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
import { parseManualReason, parseOptOutFields, setOptOut } from "./opt-outs";
import { listConsentHistory } from "../db/stores/consent-history";
import type { Actor } from "../domain/people";
import { MAX_TAGS, validateTags } from "../domain/contact-update";
import type { FieldError } from "../domain/submission";
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
      contactSearchText(s), createdAt, updatedAt < createdAt ? createdAt : updatedAt, opts.consent ? JSON.stringify(opts.consent) : null, s.timeZone,
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

  create(accountId: string, body: unknown, ctx: { ipAddress?: string; actor?: Actor } = {}): Contact {
    const extra = parseOptOutFields(body, "create");
    const r = validateContactInput(extra.body, "create");
    if (!r.ok || extra.errors.length) throw validationError([...(r.ok ? [] : r.errors), ...extra.errors]);
    const state = newContactState(r.patch);
    const nowIso = iso(this.clock());
    const consent: ConsentRecord = { source: extra.consentSource ?? "api", at: nowIso, ...(ctx.ipAddress ? { ipAddress: ctx.ipAddress } : {}), ...(ctx.actor ? { by: ctx.actor } : {}) };
    const { id, cancelled } = this.sqlite.transaction(() => {
      this.assertPhoneFree(accountId, state.phoneNumber, null);
      // contact.created carries the contact as it ends up (opted out included), then contact.opted_out.
      const id = this.insertState(accountId, state, { consent }, false);
      const cancelled = extra.optedOut === true ? setOptOut(this.sqlite, this.clock, accountId, id, state.phoneNumber, true, nowIso, false, { source: "api", by: ctx.actor }).cancelled : [];
      emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
      if (extra.optedOut === true) emitContact(this.sqlite, accountId, id, "contact.opted_out", this.clock());
      return { id, cancelled };
    })();
    if (cancelled.length) this.withdraw(cancelled);
    this.changes?.contact(accountId, "created");
    return this.get(accountId, id);
  }

  update(accountId: string, id: string, body: unknown, actor?: Actor): Contact {
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
          : setOptOut(this.sqlite, this.clock, accountId, current.id, r.patch.phoneNumber ?? current.phoneNumber, extra.optedOut, iso(this.clock()), true, { source: "api", by: actor });
      // One contact.updated for the request, after all its changes (docs/api-decisions.md, "The phone path, round two").
      if (!onlyExtra || opt.changed) emitContact(this.sqlite, accountId, current.id, "contact.updated", this.clock());
      return opt.cancelled;
    })();
    if (cancelled.length) this.withdraw(cancelled);
    this.changes?.contact(accountId, "updated");
    return this.get(accountId, current.id);
  }

  /**
   * Deletes the contact and its message history in one transaction; its queued messages leave
   * the in-memory queue (and any lease on them ends) after the commit.
   */
  delete(accountId: string, id: string): { deletedId: string } {
    this.get(accountId, id);
    const removedQueued = this.sqlite.transaction(() => this.store.deleteWithMessages(accountId, id))();
    this.changes?.contact(accountId, "deleted");
    this.withdraw(removedQueued);
    return { deletedId: id };
  }

  /** `contactIds` of a bulk body: 1 to MAX_BULK_IDS ids (an error in `errs` otherwise). */
  private bulkIds(ids: unknown, errs: FieldError[]): string[] {
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_IDS || !ids.every((x) => typeof x === "string" && x.length > 0 && x.length <= 200)) {
      errs.push({ field: "contactIds", message: `contactIds must be an array of 1 to ${MAX_BULK_IDS} contact ids`, requirement: `1-${MAX_BULK_IDS} ids`, provided: Array.isArray(ids) ? ids.length : null });
      return [];
    }
    return [...new Set(ids as string[])];
  }

  /**
   * Runs `fn` on each contact in one transaction, each in its own savepoint: a contact that
   * cannot be changed (not found, a rule) is listed in `errors` without stopping the others.
   */
  private eachContact(accountId: string, ids: string[], fn: (c: Contact) => void): { done: number; errors: Array<{ id: string; code: string; message: string }> } {
    const errors: Array<{ id: string; code: string; message: string }> = [];
    let done = 0;
    this.sqlite.transaction(() => {
      for (const id of ids) {
        try {
          this.store.inSavepoint(() => fn(this.get(accountId, id)));
          done++;
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          errors.push({ id: id.slice(0, 200), code: err.code, message: err.message });
        }
      }
    })();
    return { done, errors };
  }

  /**
   * The same update on many contacts. `updates` is validated once (a bad body is a 400 for the
   * whole request); each contact is then changed on its own, all or nothing, and a contact that
   * cannot be changed is listed in `errors` without stopping the others. `updates.addTags` adds
   * tags to those each contact has (`tags` replaces them): tagging a selection keeps its tags.
   */
  bulk(accountId: string, body: unknown): { updated: number; errors: Array<{ id: string; code: string; message: string }> } {
    const b = (typeof body === "object" && body !== null ? body : {}) as { contactIds?: unknown; updates?: unknown };
    const errs: FieldError[] = [];
    const ids = this.bulkIds(b.contactIds, errs);
    let updates = b.updates;
    let addTags: string[] | undefined;
    if (typeof updates === "object" && updates !== null && !Array.isArray(updates) && Object.hasOwn(updates, "addTags")) {
      const { addTags: raw, ...rest } = updates as Record<string, unknown>;
      addTags = validateTags(raw, errs, "updates.addTags");
      if (addTags && addTags.length === 0) errs.push({ field: "updates.addTags", message: "updates.addTags must name at least one tag", requirement: "1 or more tags", provided: 0 });
      if (Object.hasOwn(rest, "tags")) errs.push({ field: "updates.addTags", message: "give either tags (replace) or addTags (add), not both", requirement: "tags or addTags", provided: null });
      updates = rest;
    }
    const r: ReturnType<typeof validateContactInput> = addTags !== undefined && Object.keys(updates as object).length === 0 ? { ok: true, patch: {} } : validateContactInput(updates, "bulk");
    if (!r.ok) errs.push(...r.errors.map((e) => ({ ...e, field: e.field === "updates" ? "updates" : `updates.${e.field}` })));
    if (errs.length || !r.ok) throw validationError(errs);
    const { done, errors } = this.eachContact(accountId, ids, (c) => {
      let patch = r.patch;
      if (addTags) {
        const tags = [...new Set([...c.tags, ...addTags])];
        if (tags.length > MAX_TAGS) throw validationError([{ field: "updates.addTags", message: `A contact may hold at most ${MAX_TAGS} tags`, requirement: `at most ${MAX_TAGS} tags`, provided: tags.length }]);
        patch = { ...patch, tags };
      }
      this.applyPatch(accountId, c, patch);
    });
    if (done > 0) this.changes?.contact(accountId, "updated");
    return { updated: done, errors };
  }

  /**
   * Opts a contact out or back in by hand (POST /v1/contacts/<id>/opt-out | opt-in): the same
   * change and events as a STOP or START text (no text is sent: the customer did not ask), with
   * the reason and who made it in the consent history. A contact already so is left as it is
   * (`changed: false`, nothing recorded).
   */
  setOptOutByHand(accountId: string, id: string, optedOut: boolean, body: unknown, actor: Actor): { contact: Contact; changed: boolean } {
    const current = this.get(accountId, id);
    const { reason, errors } = parseManualReason(body, optedOut);
    if (errors.length) throw validationError(errors);
    const { cancelled, changed } = this.sqlite.transaction(() =>
      setOptOut(this.sqlite, this.clock, accountId, current.id, current.phoneNumber, optedOut, iso(this.clock()), true, { source: "manual", reason, by: actor }),
    )();
    if (cancelled.length) this.withdraw(cancelled);
    if (changed) this.changes?.contact(accountId, "updated");
    return { contact: this.get(accountId, current.id), changed };
  }

  /** Opts many contacts out by hand, with one reason (bulk actions on a selection). */
  bulkOptOut(accountId: string, body: unknown, actor: Actor): { optedOut: number; errors: Array<{ id: string; code: string; message: string }> } {
    const b = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as { contactIds?: unknown; reason?: unknown };
    const errs: FieldError[] = [];
    const ids = this.bulkIds(b.contactIds, errs);
    const { contactIds: _ids, ...rest } = b;
    const { reason, errors: reasonErrors } = parseManualReason(rest, true);
    errs.push(...reasonErrors);
    if (errs.length) throw validationError(errs);
    const cancelled: string[] = [];
    let changedAny = false;
    const { done, errors } = this.eachContact(accountId, ids, (c) => {
      const out = setOptOut(this.sqlite, this.clock, accountId, c.id, c.phoneNumber, true, iso(this.clock()), true, { source: "manual", reason, by: actor });
      cancelled.push(...out.cancelled);
      changedAny ||= out.changed;
    });
    if (cancelled.length) this.withdraw(cancelled);
    if (changedAny) this.changes?.contact(accountId, "updated");
    return { optedOut: done, errors };
  }

  /** Deletes many contacts with their message history; their queued messages leave the queue after the commit. */
  bulkDelete(accountId: string, body: unknown): { deleted: number; errors: Array<{ id: string; code: string; message: string }> } {
    const b = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    const errs: FieldError[] = [];
    const ids = this.bulkIds(b.contactIds, errs);
    const extra = Object.keys(b).find((k) => k !== "contactIds");
    if (extra !== undefined) errs.push({ field: extra.slice(0, 64), message: `Only contactIds can be given here, not ${extra.slice(0, 64)}`, requirement: "contactIds only", provided: null });
    if (errs.length) throw validationError(errs);
    const removedQueued: string[] = [];
    const { done, errors } = this.eachContact(accountId, ids, (c) => removedQueued.push(...this.store.deleteWithMessages(accountId, c.id)));
    if (done > 0) this.changes?.contact(accountId, "deleted");
    this.withdraw(removedQueued);
    return { deleted: done, errors };
  }

  /** A contact's consent history, newest first (GET /v1/contacts/<id>/consent-history). */
  consentHistory(accountId: string, id: string, paging: { page: number; limit: number }) {
    this.get(accountId, id);
    return listConsentHistory(this.sqlite, accountId, id, paging.limit, (paging.page - 1) * paging.limit);
  }

  /** Upserts contacts by phone from rows of cells (contact-import-rows.ts); announced once at the end. */
  async importRows(accountId: string, batches: AsyncIterable<ImportLine[]>, opts: { dryRun?: boolean } = {}): Promise<ImportResult> {
    const result = await this.importer.importRows(accountId, batches, opts);
    if (!opts.dryRun && result.created + result.updated > 0) this.changes?.contact(accountId, "updated");
    return result;
  }

  /** GET /v1/contacts/analytics (contact-analytics.ts). */
  analytics(accountId: string, q: AnalyticsQuery) {
    return contactAnalytics(this.sqlite, this.clock, this.forms, accountId, q);
  }
}
