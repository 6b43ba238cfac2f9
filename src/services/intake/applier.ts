/**
 * The applier's work: an acknowledged webhook submission, read back from the
 * intake, becomes its derived rows — the contact (created, or merged exactly as the request path
 * used to), the submission, the queued message and its events. Runs on whatever connection it is
 * given: the applier Worker's own, or the main one when boot drains what a crash left.
 *
 * Exactly once: a batch applies rows in seq order and moves intake_applied.seq (and deletes the
 * rows) in the SAME transaction, so a crash anywhere leaves either all of a batch or none of it.
 */
import type { Database, Statement } from "bun:sqlite";
import { contactSearchText } from "../../domain/contact-search";
import { derivedCounts, recordFormRows, recordMessageInsert, type DerivedCounts } from "../../db/derived-counts";
import { intakeStore, type IntakeStore } from "../../db/stores/intake";
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
  /** contacts.consent JSON for a new contact. */
  consent: string;
  submissionId: string;
  /** The queued message (queued), the first one (held duplicate), or null. */
  messageId: string | null;
  /** ISO instant of the request. */
  at: string;
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

/** Rows per multi-row INSERT statement, largest first (what is left after the largest goes in smaller ones). */
const ROWS_PER_INSERT = [32, 8, 1];

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

interface ContactRow {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  custom_fields: string;
  source: string | null;
}

/** A contact as a chunk leaves it: inserted (new) or updated (changed) once, at the chunk's end. */
interface ChunkContact extends ContactRow {
  isNew: boolean;
  changed: boolean;
  /** The stored row as read (an existing contact): when only updated_at moved, only it is written. */
  stored: ContactRow | null;
  accountId: string;
  phone: string;
  formId: string;
  consent: string;
  createdAt: string;
  updatedAt: string;
}

/** INSERT statements over the same columns for each size in ROWS_PER_INSERT. */
class MultiInsert {
  private readonly statements: Array<[number, Statement<unknown, any[]>]>;
  /** `tail` follows the VALUES list (an UPDATE … FROM (VALUES …) AS v WHERE …). */
  constructor(sqlite: Database, head: string, row: string, tail = "") {
    this.statements = ROWS_PER_INSERT.map((n) => [n, sqlite.prepare(`${head} VALUES ${Array(n).fill(row).join(", ")}${tail}`)]);
  }
  run(rows: unknown[][]): void {
    let i = 0;
    for (const [n, statement] of this.statements) {
      for (; i + n <= rows.length; i += n) statement.run(...(n === 1 ? rows[i] : rows.slice(i, i + n).flat()));
    }
  }
}

export class IntakeApplier {
  readonly store: IntakeStore;
  private readonly contactByPhone: Statement<ContactRow, [string, string]>;
  private readonly contactInsert: Statement<unknown, any[]>;
  private readonly contactUpdate: Statement<unknown, any[]>;
  private readonly messageInsert: Statement<unknown, any[]>;
  private readonly submissionInsert: Statement<unknown, any[]>;
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly release: Statement;
  private readonly rollbackTo: Statement;
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
  private readonly contactsByPhones: Statement<ContactRow & { phone_number: string }, [string, string]>;
  private readonly contactInserts: MultiInsert;
  private readonly contactUpdates: MultiInsert;
  /** A resubmission that changes nothing but updated_at: the name, email and search indexes are left alone. */
  private readonly contactTouches: MultiInsert;
  private readonly messageInserts: MultiInsert;
  private readonly submissionInserts: MultiInsert;
  private readonly chunkSavepoint: Statement;
  private readonly chunkRelease: Statement;
  private readonly chunkRollback: Statement;

  constructor(private readonly sqlite: Database) {
    this.store = intakeStore(sqlite);
    this.derived = derivedCounts(sqlite);
    this.contactByPhone = sqlite.prepare(
      "SELECT id, first_name, last_name, email, custom_fields, source FROM contacts WHERE account_id = ? AND phone_number = ?",
    );
    this.contactInsert = sqlite.prepare(
      `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at, consent)
       VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?, ?)`,
    );
    this.contactUpdate = sqlite.prepare(
      `UPDATE contacts SET first_name = ?, last_name = ?, email = ?, custom_fields = ?, source = ?, search_text = ?, updated_at = ?
        WHERE id = ?`,
    );
    this.messageInsert = sqlite.prepare(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name,
         status, priority, priority_rank, webhook_data, template_used, scheduled_for, retry_count, metadata, seq,
         lease_expiries, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)`,
    );
    this.submissionInsert = sqlite.prepare(
      "INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.contactsByPhones = sqlite.prepare(
      `SELECT c.id, c.phone_number, c.first_name, c.last_name, c.email, c.custom_fields, c.source
         FROM json_each(?2) j CROSS JOIN contacts c ON c.account_id = ?1 AND c.phone_number = j.value`,
    );
    this.contactInserts = new MultiInsert(
      sqlite,
      `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at, consent)`,
      "(?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?, ?)",
    );
    this.contactUpdates = new MultiInsert(
      sqlite,
      `UPDATE contacts SET first_name = v.column2, last_name = v.column3, email = v.column4, custom_fields = v.column5,
         source = v.column6, search_text = v.column7, updated_at = v.column8 FROM (`,
      "(?, ?, ?, ?, ?, ?, ?, ?)",
      ") AS v WHERE contacts.id = v.column1",
    );
    this.contactTouches = new MultiInsert(
      sqlite,
      "UPDATE contacts SET updated_at = v.column2 FROM (",
      "(?, ?)",
      ") AS v WHERE contacts.id = v.column1",
    );
    this.messageInserts = new MultiInsert(
      sqlite,
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name,
         status, priority, priority_rank, webhook_data, template_used, scheduled_for, retry_count, metadata, seq,
         lease_expiries, created_at, updated_at)`,
      "(?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)",
    );
    this.submissionInserts = new MultiInsert(
      sqlite,
      "INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at)",
      "(?, ?, ?, ?, ?, ?, ?)",
    );
    this.chunkSavepoint = sqlite.prepare("SAVEPOINT chunk");
    this.chunkRelease = sqlite.prepare("RELEASE chunk");
    this.chunkRollback = sqlite.prepare("ROLLBACK TO chunk");
    this.begin = sqlite.prepare("BEGIN IMMEDIATE");
    this.commit = sqlite.prepare("COMMIT");
    this.rollback = sqlite.prepare("ROLLBACK");
    this.savepoint = sqlite.prepare("SAVEPOINT entry");
    this.release = sqlite.prepare("RELEASE entry");
    this.rollbackTo = sqlite.prepare("ROLLBACK TO entry");
  }

  /** Applies the next batch of the intake in one transaction. */
  applyBatch(max = APPLY_BATCH_MAX, yieldNow?: () => boolean): BatchResult {
    this.begin.run();
    this.derived.beginBatch();
    try {
      const r = this.applyRows(max, yieldNow);
      this.derived.flush();
      this.commit.run();
      return r;
    } catch (err) {
      this.derived.discard();
      try {
        this.rollback.run();
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
      const rows = this.store.listAfter(last, Math.min(this.chunkRows, max - applied), this.durableSeq?.());
      if (rows.length === 0) break;
      if (applied === 0) this.beforeBatch();
      const chunk = rows.map((row) => ({ seq: row.seq, entry: JSON.parse(row.entry) as IntakeEntry }));
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
      this.chunkSavepoint.run();
      const mark = this.derived.mark();
      try {
        this.applyEntries(chunk.map((c) => c.entry));
        this.chunkRelease.run();
        for (const { entry } of chunk) if (entry.kind === "queued") accounts.add(entry.accountId);
        return chunk.length;
      } catch {
        this.derived.rollbackTo(mark);
        this.chunkRollback.run();
        this.chunkRelease.run();
      }
    }
    for (const { seq, entry } of chunk) {
      this.savepoint.run();
      const mark = this.derived.mark();
      try {
        this.applyEntry(entry);
        this.release.run();
        if (entry.kind === "queued") accounts.add(entry.accountId);
      } catch (err) {
        // Only a vanished parent (the form or account deleted by another process before the row
        // was applied) fails here; the row's data would have been deleted with it.
        this.derived.rollbackTo(mark);
        this.rollbackTo.run();
        this.release.run();
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
      for (const r of this.contactsByPhones.all(accountId, JSON.stringify([...set]))) {
        contacts.set(`${accountId}\u0000${r.phone_number}`, {
          stored: r,
          id: r.id,
          first_name: r.first_name,
          last_name: r.last_name,
          email: r.email,
          custom_fields: r.custom_fields,
          source: r.source,
          isNew: false,
          changed: false,
          accountId,
          phone: r.phone_number,
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
        c.first_name = e.firstName ?? c.first_name;
        c.last_name = e.lastName ?? c.last_name;
        c.email = e.email ?? c.email;
        // Custom fields merge: posted values win, the others stay.
        if (Object.keys(e.custom).length > 0) c.custom_fields = JSON.stringify({ ...JSON.parse(c.custom_fields), ...e.custom });
        c.source = c.source ? c.source : e.source;
        c.updatedAt = e.at;
        c.changed = true;
        contact = c;
      } else {
        contact = {
          stored: null,
          id: e.contactId,
          first_name: e.firstName,
          last_name: e.lastName,
          email: e.email,
          custom_fields: JSON.stringify(e.custom),
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
        const recipientName = `${contact.first_name ?? ""} ${contact.last_name ?? ""}`.trim() || null;
        messages.push([
          e.messageId, e.accountId, e.formId, e.formName, contact.id, m.content, e.phone, recipientName, m.priority, m.priorityRank,
          m.webhookData, m.template, m.scheduledFor, m.metadata, m.seq, e.at, e.at,
        ]);
        recordMessageInsert(this.sqlite, { accountId: e.accountId, formId: e.formId, contactId: contact.id, status: "queued", priorityRank: m.priorityRank, createdAt: e.at, sentAt: null, failureReason: null });
      }
      submissions.push([e.submissionId, e.accountId, e.formId, contact.id, e.messageId, newContact ? 1 : 0, e.at]);
      // A new contact is inserted with this entry's form and time (its first in the chunk).
      recordFormRows(this.sqlite, { accountId: e.accountId, formId: e.formId, createdAt: e.at, submissions: 1, newContacts: newContact ? 1 : 0 });
    }
    const inserts: unknown[][] = [];
    const updates: unknown[][] = [];
    const touches: unknown[][] = [];
    for (const c of contacts.values()) {
      const o = c.stored;
      if (o !== null && c.changed && o.first_name === c.first_name && o.last_name === c.last_name && o.email === c.email && o.custom_fields === c.custom_fields && o.source === c.source) {
        // Same values, so the same search text: only updated_at moves.
        touches.push([c.id, c.updatedAt]);
        continue;
      }
      const search = contactSearchText({ firstName: c.first_name, lastName: c.last_name, email: c.email ?? undefined, phoneNumber: c.phone });
      if (c.isNew) {
        inserts.push([c.id, c.accountId, c.phone, c.first_name, c.last_name, c.email, c.formId, c.custom_fields, c.source, search, c.createdAt, c.updatedAt, c.consent]);
      } else if (c.changed) {
        updates.push([c.id, c.first_name, c.last_name, c.email, c.custom_fields, c.source, search, c.updatedAt]);
      }
    }
    this.contactUpdates.run(updates);
    this.contactTouches.run(touches);
    this.contactInserts.run(inserts);
    this.messageInserts.run(messages);
    this.submissionInserts.run(submissions);
  }

  /** One entry's derived rows (the request path's former write job, minus its rules). */
  applyEntry(e: IntakeEntry): void {
    const existing = this.contactByPhone.get(e.accountId, e.phone);
    let contactId: string;
    let firstName: string | null;
    let lastName: string | null;
    if (existing) {
      contactId = existing.id;
      firstName = e.firstName ?? existing.first_name;
      lastName = e.lastName ?? existing.last_name;
      const email = e.email ?? existing.email;
      // Custom fields merge: posted values win, the others stay.
      const custom = Object.keys(e.custom).length > 0 ? JSON.stringify({ ...JSON.parse(existing.custom_fields), ...e.custom }) : existing.custom_fields;
      const source = existing.source ? existing.source : e.source;
      this.contactUpdate.run(firstName, lastName, email, custom, source, contactSearchText({ firstName, lastName, email, phoneNumber: e.phone }), e.at, contactId);
    } else {
      contactId = e.contactId;
      firstName = e.firstName;
      lastName = e.lastName;
      this.contactInsert.run(
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
    const newContact = existing ? 0 : 1;
    recordFormRows(this.sqlite, { accountId: e.accountId, formId: e.formId, createdAt: e.at, submissions: 1, newContacts: newContact });
    const m = e.message;
    if (e.kind !== "queued" || m === undefined) {
      this.submissionInsert.run(e.submissionId, e.accountId, e.formId, contactId, e.messageId, newContact, e.at);
      // No text, but the contact was written all the same (a held or suppressed submission):
      // every change of a contact is announced (docs/api-decisions.md, "The phone path, round two").
      emitContact(this.sqlite, e.accountId, contactId, existing ? "contact.updated" : "contact.created", Date.parse(e.at));
      return;
    }
    const recipientName = `${firstName ?? ""} ${lastName ?? ""}`.trim() || null;
    this.messageInsert.run(
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
    this.submissionInsert.run(e.submissionId, e.accountId, e.formId, contactId, e.messageId, newContact, e.at);
    emitSubmission(
      this.sqlite,
      { accountId: e.accountId, formId: e.formId, formName: e.formName, submissionId: e.submissionId, contactId, newContact: !existing, messageId: e.messageId!, answer: m.answer },
      Date.parse(e.at),
    );
  }
}
