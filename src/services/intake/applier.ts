/**
 * The applier's work: an acknowledged webhook submission, read back from the
 * intake, becomes its derived rows — the contact (created, or merged exactly as the request path
 * used to), the submission, the queued message and its events. Runs on whatever connection it is
 * given: the applier Worker's own, or the main one when boot drains what a crash left.
 *
 * Exactly once: a batch applies rows in seq order and moves intake_applied.seq (and deletes the
 * rows) in the SAME transaction, so a crash anywhere leaves either all of a batch or none of it.
 */
import type { Database } from "bun:sqlite";
import { contactSearchText } from "../../domain/contact-search";
import { derivedCounts, recordFormRows, recordMessageInsert, type DerivedCounts } from "../../db/derived-counts";
import { intakeStore, type IntakeStore } from "../../db/stores/intake";
import { intakeApplierStore, mergeCustomFields, type ApplierContact, type IntakeApplierStore } from "../../db/stores/intake-applier";
import { emitContact, emitSubmission } from "../event-payloads";

/** What a request commits for the applier: ids assigned up front, the message already rendered. */
export interface IntakeEntry {
  /** queued: a message was queued; held: a duplicate (messageId = the first one) or over the recipient limit; suppressed: opted out / no consent. */
  kind: "queued" | "held" | "suppressed";
  accountId: string;
  formId: string;
  formName: string;
  /** The id the answer gave (used when the contact is new). */
  contactId: string;
  phone: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  custom: Record<string, string>;
  source: string | null;
  /** A form's `timezone` field: the contact's own zone from now on (docs/forms.md, "The customer's time zone"). */
  timeZone?: string;
  /** contacts.consent JSON for a new contact. */
  consent: string;
  submissionId: string;
  /** The queued message (queued), the first one (held duplicate), or null. */
  messageId: string | null;
  /** ISO instant of the request. */
  at: string;
  /** Why no text was queued (opted-out, no-consent, recipient-limit); absent otherwise. */
  suppressed?: string;
  message?: {
    content: string;
    priority: string;
    priorityRank: number;
    webhookData: string;
    template: string;
    scheduledFor: string;
    metadata: string;
    seq: number;
    /** The 200's body (the form.submission event carries it). */
    answer: string;
  };
}

/** Rows per applier transaction: large enough to amortise the commit, short enough not to hold the write lock long. */
export const APPLY_BATCH_MAX = 512;

/**
 * Rows applied together (one multi-row INSERT per table). A request that wants the write lock
 * waits for the chunk in progress (the main thread blocks meanwhile): a few ms at most.
 */
export const APPLY_CHUNK = 32;

/** The events an applied submission may emit (with a subscriber for any, rows are applied one by one). */
const SUBMISSION_EVENTS = ["contact.created", "contact.updated", "message.queued", "form.submission"] as const;

export interface BatchResult {
  /** Rows applied (0: the intake is empty). */
  applied: number;
  /** The high-water mark after the batch. */
  seq: number;
  /** Accounts that got a queued message (phones waiting for work are woken). */
  accounts: string[];
  /** Entries that could not be applied (their form or account was deleted meanwhile). */
  skipped: Array<{ seq: number; error: string }>;
}

/** A contact as a chunk leaves it: inserted (new) or updated (changed) once, at the chunk's end. */
interface ChunkContact extends ApplierContact {
  isNew: boolean;
  changed: boolean;
  /** The stored row as read (an existing contact): when only updated_at moved, only it is written. */
  stored: ApplierContact | null;
  accountId: string;
  phone: string;
  formId: string;
  consent: string;
  createdAt: string;
  updatedAt: string;
}

export class IntakeApplier {
  readonly store: IntakeStore<IntakeEntry>;
  /** Its statements, prepared once on its connection (src/db/stores/intake-applier.ts). */
  private readonly sql: IntakeApplierStore;
  /** Counts, usage and rollups of the batch's messages: summed, written once before COMMIT. */
  private readonly derived: DerivedCounts;
  /** Called inside the transaction before a batch (the applier Worker reloads event subscribers). */
  beforeBatch: () => void = () => {};
  /**
   * The highest intake seq on disk (the main thread's flush; unset: everything, as at boot). An
   * entry committed but not flushed yet waits: nothing derived from it — a message a phone could
   * send, an event — exists before its 200 could be given.
   */
  durableSeq: (() => number) | undefined;
  /** Whether an endpoint subscribes to one of the account's submission events (set with the outbox). */
  eventsWanted: (accountId: string, type: string) => boolean = () => false;
  /** Rows per chunk (the bench compares sizes). */
  chunkRows = APPLY_CHUNK;

  constructor(private readonly sqlite: Database) {
    this.store = intakeStore<IntakeEntry>(sqlite);
    this.derived = derivedCounts(sqlite);
    this.sql = intakeApplierStore(sqlite);
  }

  /** Applies the next batch of the intake in one transaction. */
  applyBatch(max = APPLY_BATCH_MAX, yieldNow?: () => boolean): BatchResult {
    this.sql.begin.run();
    this.derived.beginBatch();
    try {
      const r = this.applyRows(max, yieldNow);
      this.derived.flush();
      this.sql.commit.run();
      return r;
    } catch (err) {
      this.derived.discard();
      try {
        this.sql.rollback.run();
      } catch {}
      throw err;
    }
  }

  /** Applies everything the intake holds (boot, before the queue is rebuilt). */
  drain(onBatch?: (r: BatchResult) => void): number {
    let total = 0;
    for (;;) {
      const r = this.applyBatch();
      if (r.applied === 0) return total;
      total += r.applied;
      onBatch?.(r);
    }
  }

  /** Inside a transaction: applies up to `max` rows and moves the mark. */
  private applyRows(max: number, yieldNow?: () => boolean): BatchResult {
    const from = this.store.appliedSeq();
    const result: BatchResult = { applied: 0, seq: from, accounts: [], skipped: [] };
    const accounts = new Set<string>();
    let last = from;
    let applied = 0;
    // Read a chunk at a time (same transaction, so the same rows as one read of `max`): only one
    // chunk's entries are alive at once, which keeps the applier thread's heap small.
    while (applied < max) {
      // Requests come first: when one waits for the write lock, the batch ends here.
      if (applied > 0 && yieldNow?.()) break;
      const chunk = this.store.listAfter(last, Math.min(this.chunkRows, max - applied), this.durableSeq?.());
      if (chunk.length === 0) break;
      if (applied === 0) this.beforeBatch();
      applied += this.applyChunk(chunk, accounts, result);
      last = chunk[chunk.length - 1].seq;
    }
    if (applied === 0) return result;
    this.store.markApplied(last);
    result.applied = applied;
    result.seq = last;
    result.accounts = [...accounts];
    return result;
  }

  /**
   * A chunk at once (one multi-row INSERT per table), or row by row when an endpoint subscribes
   * to its events (each event reads its rows as that entry left them) or when the chunk fails
   * (then each row in its own savepoint: only the failing row is skipped).
   */
  private applyChunk(chunk: Array<{ seq: number; entry: IntakeEntry }>, accounts: Set<string>, result: BatchResult): number {
    const wanted = chunk.some(({ entry }) => SUBMISSION_EVENTS.some((t) => this.eventsWanted(entry.accountId, t)));
    if (!wanted) {
      this.sql.chunkSavepoint.run();
      const mark = this.derived.mark();
      try {
        this.applyEntries(chunk.map((c) => c.entry));
        this.sql.chunkRelease.run();
        for (const { entry } of chunk) if (entry.kind === "queued") accounts.add(entry.accountId);
        return chunk.length;
      } catch {
        this.derived.rollbackTo(mark);
        this.sql.chunkRollback.run();
        this.sql.chunkRelease.run();
      }
    }
    for (const { seq, entry } of chunk) {
      this.sql.savepoint.run();
      const mark = this.derived.mark();
      try {
        this.applyEntry(entry);
        this.sql.release.run();
        if (entry.kind === "queued") accounts.add(entry.accountId);
      } catch (err) {
        // Only a vanished parent (the form or account deleted by another process before the row
        // was applied) fails here; the row's data would have been deleted with it.
        this.derived.rollbackTo(mark);
        this.sql.rollbackTo.run();
        this.sql.release.run();
        result.skipped.push({ seq, error: String((err as Error)?.message ?? err) });
      }
    }
    return chunk.length;
  }

  /**
   * Entries in order, with the same result as `applyEntry` on each in turn: contacts are read in
   * one query per account, merged in memory and written once each (a new contact is inserted with
   * its last values, so its search text is indexed once); then messages and submissions.
   */
  private applyEntries(entries: IntakeEntry[]): void {
    const contacts = new Map<string, ChunkContact>();
    const phones = new Map<string, Set<string>>();
    for (const e of entries) {
      let set = phones.get(e.accountId);
      if (!set) phones.set(e.accountId, (set = new Set()));
      set.add(e.phone);
    }
    for (const [accountId, set] of phones) {
      for (const r of this.sql.contactsByPhones.all(accountId, JSON.stringify([...set]))) {
        contacts.set(`${accountId}\u0000${r.phoneNumber}`, {
          stored: r,
          id: r.id,
          firstName: r.firstName,
          lastName: r.lastName,
          email: r.email,
          customFields: r.customFields,
          source: r.source,
          isNew: false,
          changed: false,
          accountId,
          phone: r.phoneNumber,
          formId: "",
          consent: "",
          createdAt: "",
          updatedAt: "",
        });
      }
    }
    const messages: unknown[][] = [];
    const submissions: unknown[][] = [];
    for (const e of entries) {
      const key = `${e.accountId}\u0000${e.phone}`;
      const c = contacts.get(key);
      const newContact = c === undefined;
      let contact: ChunkContact;
      if (c) {
        c.firstName = e.firstName ?? c.firstName;
        c.lastName = e.lastName ?? c.lastName;
        c.email = e.email ?? c.email;
        // Custom fields merge: posted values win, the others stay.
        if (Object.keys(e.custom).length > 0) c.customFields = mergeCustomFields(c.customFields, e.custom);
        c.source = c.source ? c.source : e.source;
        c.updatedAt = e.at;
        c.changed = true;
        contact = c;
      } else {
        contact = {
          stored: null,
          id: e.contactId,
          firstName: e.firstName,
          lastName: e.lastName,
          email: e.email,
          customFields: JSON.stringify(e.custom),
          source: e.source,
          isNew: true,
          changed: false,
          accountId: e.accountId,
          phone: e.phone,
          formId: e.formId,
          consent: e.consent,
          createdAt: e.at,
          updatedAt: e.at,
        };
        contacts.set(key, contact);
      }
      const m = e.message;
      if (e.kind === "queued" && m !== undefined) {
        const recipientName = `${contact.firstName ?? ""} ${contact.lastName ?? ""}`.trim() || null;
        messages.push([
          e.messageId, e.accountId, e.formId, e.formName, contact.id, m.content, e.phone, recipientName, m.priority, m.priorityRank,
          m.webhookData, m.template, m.scheduledFor, m.metadata, m.seq, e.at, e.at,
        ]);
        recordMessageInsert(this.sqlite, { accountId: e.accountId, formId: e.formId, contactId: contact.id, status: "queued", priorityRank: m.priorityRank, createdAt: e.at, sentAt: null, failureReason: null });
      }
      submissions.push([e.submissionId, e.accountId, e.formId, contact.id, e.messageId, newContact ? 1 : 0, e.at, formValuesOf(e), e.suppressed ?? null]);
      // A new contact is inserted with this entry's form and time (its first in the chunk).
      recordFormRows(this.sqlite, { accountId: e.accountId, formId: e.formId, createdAt: e.at, submissions: 1, newContacts: newContact ? 1 : 0 });
    }
    const inserts: unknown[][] = [];
    const updates: unknown[][] = [];
    const touches: unknown[][] = [];
    for (const c of contacts.values()) {
      const o = c.stored;
      if (o !== null && c.changed && o.firstName === c.firstName && o.lastName === c.lastName && o.email === c.email && o.customFields === c.customFields && o.source === c.source) {
        // Same values, so the same search text: only updated_at moves.
        touches.push([c.id, c.updatedAt]);
        continue;
      }
      const search = contactSearchText({ firstName: c.firstName, lastName: c.lastName, email: c.email ?? undefined, phoneNumber: c.phone });
      if (c.isNew) {
        inserts.push([c.id, c.accountId, c.phone, c.firstName, c.lastName, c.email, c.formId, c.customFields, c.source, search, c.createdAt, c.updatedAt, c.consent]);
      } else if (c.changed) {
        updates.push([c.id, c.firstName, c.lastName, c.email, c.customFields, c.source, search, c.updatedAt]);
      }
    }
    this.sql.contactUpdates.run(updates);
    this.sql.contactTouches.run(touches);
    this.sql.contactInserts.run(inserts);
    // Rare (forms with a timezone field): one statement per entry that sets a zone, in order.
    for (const e of entries) if (e.timeZone) this.sql.contactTimeZone.run(e.timeZone, contacts.get(`${e.accountId}\u0000${e.phone}`)!.id);
    this.sql.messageInserts.run(messages);
    this.sql.submissionInserts.run(submissions);
  }

  /** One entry's derived rows (the request path's former write job, minus its rules). */
  applyEntry(e: IntakeEntry): void {
    const existing = this.sql.contactByPhone.get(e.accountId, e.phone);
    let contactId: string;
    let firstName: string | null;
    let lastName: string | null;
    if (existing) {
      contactId = existing.id;
      firstName = e.firstName ?? existing.firstName;
      lastName = e.lastName ?? existing.lastName;
      const email = e.email ?? existing.email;
      // Custom fields merge: posted values win, the others stay.
      const custom = Object.keys(e.custom).length > 0 ? mergeCustomFields(existing.customFields, e.custom) : existing.customFields;
      const source = existing.source ? existing.source : e.source;
      this.sql.contactUpdate.run(firstName, lastName, email, custom, source, contactSearchText({ firstName, lastName, email, phoneNumber: e.phone }), e.at, contactId);
    } else {
      contactId = e.contactId;
      firstName = e.firstName;
      lastName = e.lastName;
      this.sql.contactInsert.run(
        contactId,
        e.accountId,
        e.phone,
        firstName,
        lastName,
        e.email,
        e.formId,
        JSON.stringify(e.custom),
        e.source,
        contactSearchText({ firstName, lastName, email: e.email ?? undefined, phoneNumber: e.phone }),
        e.at,
        e.at,
        e.consent,
      );
    }
    if (e.timeZone) this.sql.contactTimeZone.run(e.timeZone, contactId);
    const newContact = existing ? 0 : 1;
    recordFormRows(this.sqlite, { accountId: e.accountId, formId: e.formId, createdAt: e.at, submissions: 1, newContacts: newContact });
    const m = e.message;
    if (e.kind !== "queued" || m === undefined) {
      this.sql.submissionInsert.run(e.submissionId, e.accountId, e.formId, contactId, e.messageId, newContact, e.at, formValuesOf(e), e.suppressed ?? null);
      // No text, but the contact was written all the same (a held or suppressed submission):
      // every change of a contact is announced (docs/api-decisions.md, "The phone path, round two").
      emitContact(this.sqlite, e.accountId, contactId, existing ? "contact.updated" : "contact.created", Date.parse(e.at));
      return;
    }
    const recipientName = `${firstName ?? ""} ${lastName ?? ""}`.trim() || null;
    this.sql.messageInsert.run(
      e.messageId,
      e.accountId,
      e.formId,
      e.formName,
      contactId,
      m.content,
      e.phone,
      recipientName,
      m.priority,
      m.priorityRank,
      m.webhookData,
      m.template,
      m.scheduledFor,
      m.metadata,
      m.seq,
      e.at,
      e.at,
    );
    // Outside an applier batch (the in-memory inline apply) the group commit's batch sums it.
    recordMessageInsert(this.sqlite, { accountId: e.accountId, formId: e.formId, contactId, status: "queued", priorityRank: m.priorityRank, createdAt: e.at, sentAt: null, failureReason: null });
    this.sql.submissionInsert.run(e.submissionId, e.accountId, e.formId, contactId, e.messageId, newContact, e.at, formValuesOf(e), null);
    emitSubmission(
      this.sqlite,
      { accountId: e.accountId, formId: e.formId, formName: e.formName, submissionId: e.submissionId, contactId, newContact: !existing, messageId: e.messageId!, answer: m.answer },
      Date.parse(e.at),
    );
  }
}

/**
 * What the visitor sent, by field name, as one compact JSON object: built from the entry's
 * values (nothing more travels in the intake row), labels left to the form at answer time
 * (docs/api-decisions.md, "The owner hears back", every request kept).
 */
export function formValuesOf(e: Pick<IntakeEntry, "phone" | "firstName" | "lastName" | "email" | "source" | "custom">): string {
  const v: Record<string, string> = { phoneNumber: e.phone };
  if (e.firstName !== null) v.firstName = e.firstName;
  if (e.lastName !== null) v.lastName = e.lastName;
  if (e.email !== null) v.email = e.email;
  if (e.source !== null) v.source = e.source;
  return JSON.stringify(Object.assign(v, e.custom));
}
