import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Changes } from "../lib/changes";
import type { WriteGate } from "../db/write-gate";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import { contactSearchText } from "../domain/contact-search";
import {
  applyContactPatch,
  newContactState,
  validateContactInput,
  customFieldsWithinLimit,
  MAX_CUSTOM_FIELDS,
  CONTACT_STATUSES,
  type ContactPatch,
  type ContactState,
  type ContactStatus,
} from "../domain/contact-update";
import type { ContactFilter, ContactListQuery, AnalyticsQuery } from "../domain/contact-query";
import { parseImportHeader, importRowBody, type ImportHeader } from "../domain/contact-export";
import { parseIsoTimestamp } from "../domain/message-transitions";
import { periodWindow } from "../domain/time-series";
import { humanDuration } from "../domain/duration";
import type { FormService } from "./forms";
import { emitContact, emitMessageStatus } from "./event-payloads";
import { setContactOptOut, type ConsentRecord } from "../db/contacts";
import { cancelQueuedTo } from "../db/message-suppression";
import { CONTACT_BATCH_ROWS, CONTACT_INSERT_COLUMNS, CONTACT_INSERT_ROW, ContactInsertBatch, recordContactInsert, type PendingContact } from "../db/contact-batch";
import { derivedCounts } from "../db/derived-counts";
import { ContactUpserts, type StoredContactRow } from "../db/contact-upsert";
import { CONTACT_FROM, CONTACT_SELECT, toContact, type Contact, type ContactRow } from "../db/contact-rows";
import { filterSql, TAG_ROWIDS, TAG_STATUS_ROWIDS, type TagMode } from "../db/contact-filter";

export const MAX_BULK_IDS = 1_000;
/** CSV text parsed and written per transaction; the event loop gets a turn between slices. */
/**
 * Whether a filter holds nothing but tags and perhaps a status (its total can then be counted in
 * contact_tags alone, which carries each contact's status).
 */
function onlyTags(f: ContactFilter): boolean {
  return !f.formId && !f.createdAfter && !f.createdBefore && !f.search && !f.customFields && f.optedOut === undefined && !!f.tags?.length;
}

/** A tag held by at least this share of the account's contacts is "common" (see filterSql). */
const COMMON_TAG_SHARE = 0.01;
/**
 * A tag on at least this many contacts is common whatever the account's size (below 500,000
 * contacts the share says the same): its contacts are counted no further than this, and the
 * account's contacts are not counted at all. The choice only picks a plan; answers are the same.
 */
const COMMON_TAG_MIN = 5_000;
/**
 * Common tags with a status are paged by probing the tags per entry of the status index while the
 * page ends within the first 1/MEMBER_PAGE_SHARE of the matches (a dense match stops early),
 * beyond that from the tags' status ranges as a set (see list()).
 */
const MEMBER_PAGE_SHARE = 10;
const CACHE_MAX_ENTRIES = 500;
/** Longest list of matching rowids kept between requests (8 bytes each). */
const CACHE_MAX_IDS = 20_000;

const SORT_COLUMNS: Record<ContactListQuery["sortBy"], string> = {
  createdAt: "c.created_at",
  updatedAt: "c.updated_at",
  firstName: "c.first_name",
  lastName: "c.last_name",
};

export interface ImportResult {
  created: number;
  updated: number;
  /** The first MAX_IMPORT_ERRORS problems, in file order. */
  errors: Array<{ row: number; field: string; message: string }>;
  /** Only when the list was cut: how many problems there were in all. */
  errorCount?: number;
  errorsTruncated?: true;
  /** Rows skipped for a problem (not part of the response body; the route's message uses it). */
  refusedRows?: number;
}

/** One row of an import file: its cells, its row number when the format knows it, or why it cannot be read. */
export interface ImportSourceRow {
  cells: string[];
  row?: number;
  error?: string;
}

/** An import's report lists this many problems; the rest are counted (errorCount). */
export const MAX_IMPORT_ERRORS = 1_000;
/** An import writes rows for this long (ms) per transaction, then lets other requests run. */
export const IMPORT_SLICE_MS = 10;

export class ContactService {
  private readonly stmts;
  /** The import's statements for contacts that exist (db/contact-upsert.ts). */
  private readonly upserts: ContactUpserts;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly forms: FormService,
    /** After a commit that cancelled queued messages (an opt-out): out of the queue and leases. */
    private readonly withdraw: (ids: string[]) => void = () => {},
    /** Import slices wait here while the checkpoint thread catches up (src/db/write-gate.ts). */
    private readonly gate?: WriteGate,
    /** Contact changes are announced after commit (the dashboard's live feed listens). */
    private readonly changes?: Changes,
  ) {
    const q = (s: string) => sqlite.query(s);
    this.stmts = {
      byId: q(`SELECT ${CONTACT_SELECT} FROM ${CONTACT_FROM} WHERE c.id = ? AND c.account_id = ?`),
      byPhone: q(`SELECT id FROM contacts WHERE account_id = ? AND phone_number = ?`),
      insert: q(`INSERT INTO contacts ${CONTACT_INSERT_COLUMNS} VALUES ${CONTACT_INSERT_ROW}`),
      update: q(`UPDATE contacts SET phone_number = ?, first_name = ?, last_name = ?, email = ?, status = ?, custom_fields = ?, tags = ?,
          last_response_at = ?, source = ?, notes = ?, search_text = ?, updated_at = ? WHERE id = ? AND account_id = ?`),
      formOfAccount: q(`SELECT id FROM forms WHERE id = ? AND account_id = ?`),
      version: q(`SELECT total_changes() AS c`),
      dataVersion: q(`PRAGMA data_version`),
    };
    this.upserts = new ContactUpserts(sqlite);
  }

  private now(after?: string): string {
    return nextUpdatedAt(this.clock(), after);
  }

  /**
   * Totals (and, for filters that must read every row, the ordered matching rowids) of recent
   * queries, valid while the database is unchanged: paging through a search scans once. The
   * version is this connection's total_changes() (every write of the process goes through it)
   * plus data_version (writes from any other connection).
   */
  private cache = new Map<string, { total: number; ids?: number[] }>();
  private cacheVersion = "";

  private cached(key: string, compute: () => { total: number; ids?: number[] }): { total: number; ids?: number[] } {
    const v = this.stmts.version.get() as { c: number };
    const d = this.stmts.dataVersion.get() as { data_version: number };
    const version = `${v.c}:${d.data_version}`;
    if (version !== this.cacheVersion) {
      this.cache.clear();
      this.cacheVersion = version;
    }
    let e = this.cache.get(key);
    if (e === undefined) {
      e = compute();
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      // Long id lists are not kept: such filters match often, so a LIMIT query stops early.
      this.cache.set(key, e.ids && e.ids.length > CACHE_MAX_IDS ? { total: e.total } : e);
    }
    return e;
  }

  private cachedCount(sql: string, params: SQLQueryBindings[]): number {
    return this.cached(sql + "\u0000" + JSON.stringify(params), () => ({ total: (this.sqlite.query(sql).get(...params) as { n: number }).n })).total;
  }

  list(accountId: string, q: ContactListQuery) {
    const dir = q.order === "asc" ? "ASC" : "DESC";
    const order = `${SORT_COLUMNS[q.sortBy]} ${dir}, c.rowid ${dir}`;
    let f: ContactFilter = q;
    let tagMode: TagMode = "in";
    let total: number | undefined;
    let ids: number[] | undefined;
    if (q.tags?.length) {
      // Rarest tag first; common tags are probed while walking the sort index instead. Tags and
      // the account's contacts are counted only as far as the choice needs (a first request
      // after a start or a write counts them again).
      const counted = q.tags.map((tag) => ({
        tag,
        n: this.cachedCount("SELECT count(*) AS n FROM (SELECT 1 FROM contact_tags WHERE account_id = ? AND tag = ? LIMIT ?)", [accountId, tag, COMMON_TAG_MIN]),
      }));
      counted.sort((a, b) => a.n - b.n);
      f = { ...q, tags: counted.map((c) => c.tag) };
      const rarest = counted[0].n;
      if (rarest === 0) total = 0;
      else if (rarest >= COMMON_TAG_MIN) tagMode = "exists";
      else {
        // Common iff all ≤ rarest / share: count the account's contacts up to one past that.
        const upTo = Math.round(rarest / COMMON_TAG_SHARE) + 1;
        const all = this.cachedCount("SELECT count(*) AS n FROM (SELECT 1 FROM contacts WHERE account_id = ? LIMIT ?)", [accountId, upTo]);
        if (all < upTo) tagMode = "exists";
      }
      if (total === undefined && onlyTags(f)) {
        if (f.status) {
          // Each tag's contacts with the status are one range of contact_tags' status index
          // (migration 0025), in rowid order: merge them (or count the one).
          const lists = counted.map(() => TAG_STATUS_ROWIDS).join(" INTERSECT ");
          total = this.cachedCount(`SELECT count(*) AS n FROM (${lists})`, counted.flatMap((c) => [accountId, c.tag, f.status!]));
        } else if (tagMode === "exists" && counted.length > 1) {
          // Common tags: merge their contact lists (see filterSql's "intersect").
          const lists = counted.map(() => TAG_ROWIDS).join(" INTERSECT ");
          total = this.cachedCount(`SELECT count(*) AS n FROM (${lists})`, counted.flatMap((c) => [accountId, c.tag]));
        } else {
          const rest = counted.slice(1).map(() => " AND EXISTS (SELECT 1 FROM contact_tags t WHERE t.account_id = t0.account_id AND t.tag = ? AND t.contact_rowid = t0.contact_rowid)").join("");
          total = this.cachedCount(`SELECT count(*) AS n FROM contact_tags t0 WHERE t0.account_id = ? AND t0.tag = ?${rest}`, [accountId, ...counted.map((c) => c.tag)]);
        }
      }
    }
    let { where, params } = filterSql(accountId, f, tagMode);
    if (total === undefined && (f.search || f.customFields)) {
      // Text, phone-digit and custom-field filters read every row (or every phone) whatever we
      // do: read them once, in order, keeping the matching rowids — the total and every page
      // come from that one pass.
      const e = this.cached(`ids\u0000${where}\u0000${order}\u0000${JSON.stringify(params)}`, () => {
        const all = (this.sqlite.query(`SELECT c.rowid FROM contacts c WHERE ${where} ORDER BY ${order}`).values(...params) as number[][]).map((r) => r[0]);
        return { total: all.length, ids: all };
      });
      total = e.total;
      ids = e.ids;
      // Too many matches to keep their ids: the filter is common, so a page read off the sort
      // index with the exact tests alone stops after a few rows, where the index pre-filter would
      // read every match again for each page.
      if (!ids) ({ where, params } = filterSql(accountId, f, tagMode, false));
    }
    if (total === undefined) {
      // Several common tags are counted by merging their lists; a rare first tag drives probes;
      // common tags with a status are a set looked up while counting the status index.
      const counting = filterSql(accountId, f, tagMode === "exists" ? (f.status ? "member" : "intersect") : "in");
      total = this.cachedCount(`SELECT count(*) AS n FROM contacts c WHERE ${counting.where}`, counting.params);
    }
    const offset = (q.page - 1) * q.limit;
    if (tagMode === "exists" && f.status && !f.search && !f.customFields && (offset + q.limit) * MEMBER_PAGE_SHARE > total) {
      // Common tags with a status, past the first tenth of the matches: probing the tags per entry
      // of the status index costs ~1.5 µs per entry walked, and a sparse match walks most of the
      // status; the tags' status ranges as a set cost ~0.15 µs per entry once, then ~0.1 per entry
      // walked (100k contacts, 798 matches, page 10: 20–45 → 3–5 ms).
      ({ where, params } = filterSql(accountId, f, "member"));
    }
    let rows: Array<{ tags: string } & Record<string, unknown>> = [];
    if (total > 0 && offset < total) {
      const columns = `c.id, c.first_name AS firstName, c.last_name AS lastName, c.phone_number AS phoneNumber, c.email, c.status,
             c.form_id AS formId, f.name AS formName, c.tags, c.message_count AS messageCount, c.opted_out AS optedOut, c.created_at AS createdAt, c.updated_at AS updatedAt`;
      if (ids) {
        const page = ids.slice(offset, offset + q.limit);
        const got = this.sqlite
          .query(`SELECT c.rowid AS rid, ${columns} FROM contacts c LEFT JOIN forms f ON f.id = c.form_id WHERE c.rowid IN (${page.map(() => "?").join(",")})`)
          .all(...page) as Array<{ rid: number; tags: string } & Record<string, unknown>>;
        const byRid = new Map(got.map((r) => [r.rid, r]));
        rows = page.map((rid) => byRid.get(rid)).filter((r) => r !== undefined).map(({ rid: _rid, ...r }) => r);
      } else {
        // Page over rowids first (index only where possible), then read the page's rows: an
        // offset skips index entries, not joined rows.
        rows = this.sqlite
          .query(
            `SELECT ${columns}
             FROM (SELECT c.rowid AS rid FROM contacts c WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?) p
             JOIN contacts c ON c.rowid = p.rid LEFT JOIN forms f ON f.id = c.form_id
             ORDER BY ${order}`,
          )
          .all(...params, q.limit, offset) as Array<{ tags: string } & Record<string, unknown>>;
      }
    }
    return {
      contacts: rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], optedOut: r.optedOut === 1 })),
      pagination: { total, page: q.page, limit: q.limit, totalPages: Math.ceil(total / q.limit) },
    };
  }

  /** Another account's contact is answered exactly like a contact that does not exist. */
  get(accountId: string, id: string): Contact {
    const row = UUID_RE.test(id) ? (this.stmts.byId.get(id, accountId) as ContactRow | null) : null;
    if (!row) throw new AppError("CONTACT_NOT_FOUND", { message: `Contact ${id.slice(0, 64)} not found`, details: { contactId: id.slice(0, 64) } });
    return toContact(row);
  }

  /**
   * Both directions, newest first: texts sent (`direction: "outbound"`, by createdAt) and texts
   * received (`"inbound"`, by receivedAt; `status: "received"`).
   */
  messages(accountId: string, id: string, paging: { page: number; limit: number }) {
    this.get(accountId, id);
    const messages = (
      this.sqlite
        .query(
          `SELECT * FROM (
             SELECT m.id, 'outbound' AS direction, m.content, m.status, m.sent_at AS sentAt, coalesce(f.name, m.form_name) AS formName,
               m.created_at AS createdAt, NULL AS receivedAt, m.created_at AS at, m.rowid AS rid
             FROM messages m LEFT JOIN forms f ON f.id = m.form_id WHERE m.contact_id = ?1 AND m.account_id = ?2
             UNION ALL
             SELECT i.id, 'inbound', i.body, 'received', NULL, NULL, i.created_at, i.received_at, i.received_at, i.rowid
             FROM inbound_messages i WHERE i.contact_id = ?1 AND i.account_id = ?2)
           ORDER BY at DESC, rid DESC LIMIT ?3 OFFSET ?4`,
        )
        .all(id, accountId, paging.limit, (paging.page - 1) * paging.limit) as Array<Record<string, unknown>>
    ).map(({ at: _at, rid: _rid, receivedAt, ...m }) => (m.direction === "inbound" ? { ...m, receivedAt } : m));
    const total =
      (this.sqlite.query(`SELECT count(*) AS n FROM messages WHERE contact_id = ? AND account_id = ?`).get(id, accountId) as { n: number }).n +
      (this.sqlite.query(`SELECT count(*) AS n FROM inbound_messages WHERE contact_id = ? AND account_id = ?`).get(id, accountId) as { n: number }).n;
    return { messages, total };
  }

  private duplicate(existingContactId: string, phone: string): AppError {
    return new AppError("DUPLICATE_PHONE_NUMBER", {
      message: `A contact with phone number ${phone} already exists`,
      details: { phoneNumber: phone, existingContactId },
      extra: { existingContactId },
    });
  }

  private assertPhoneFree(accountId: string, phone: string, exceptId: string | null) {
    const clash = this.stmts.byPhone.get(accountId, phone) as { id: string } | null;
    if (clash && clash.id !== exceptId) throw this.duplicate(clash.id, phone);
  }

  /** Inserts a contact (no validation, no transaction: callers own both). */
  /** A new contact's id and insert values (CONTACT_INSERT_ROW), not yet written. */
  private newContactRow(accountId: string, s: ContactState, opts: { formId?: string | null; createdAt?: string; consent?: ConsentRecord } = {}): PendingContact {
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

  /** `announce: false`: the caller emits contact.created itself, once the contact is complete (an opt-out follows). */
  private insertState(accountId: string, s: ContactState, opts: { formId?: string | null; createdAt?: string; consent?: ConsentRecord } = {}, announce = true): string {
    const row = this.newContactRow(accountId, s, opts);
    this.stmts.insert.run(...row.values);
    recordContactInsert(this.sqlite, row.values);
    if (announce) emitContact(this.sqlite, accountId, row.id, "contact.created", this.clock());
    return row.id;
  }

  /** Writes the import's waiting new contacts, then their contact.created events, in file order. */
  private flushCreated(accountId: string, batch: ContactInsertBatch): void {
    for (const id of batch.flush()) emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
  }

  /**
   * Applies a validated patch to a stored contact (no transaction: callers own it).
   * `announce: false`: the caller emits the one contact.updated after its other changes.
   */
  private applyPatch(accountId: string, current: Contact, patch: ContactPatch, announce = true) {
    const next = applyContactPatch(current, patch);
    assertCustomFieldLimit(next);
    if (patch.phoneNumber !== undefined && patch.phoneNumber !== current.phoneNumber) this.assertPhoneFree(accountId, patch.phoneNumber, current.id);
    this.stmts.update.run(
      next.phoneNumber, next.firstName, next.lastName, next.email, next.status, JSON.stringify(next.customFields), JSON.stringify(next.tags),
      next.lastResponseAt, next.source, next.notes, contactSearchText(next), this.now(current.updatedAt), current.id, accountId,
    );
    if (announce) emitContact(this.sqlite, accountId, current.id, "contact.updated", this.clock());
  }

  create(accountId: string, body: unknown, ctx: { ipAddress?: string } = {}): Contact {
    const extra = splitOptOutFields(body, "create");
    const r = validateContactInput(extra.body, "create");
    if (!r.ok || extra.errors.length) throw validationError([...(r.ok ? [] : r.errors), ...extra.errors]);
    const state = newContactState(r.patch);
    const nowIso = iso(this.clock());
    const consent: ConsentRecord = { source: extra.consentSource ?? "api", at: nowIso, ...(ctx.ipAddress ? { ipAddress: ctx.ipAddress } : {}) };
    const { id, cancelled } = this.sqlite.transaction(() => {
      this.assertPhoneFree(accountId, state.phoneNumber, null);
      // contact.created carries the contact as it ends up (opted out included), then contact.opted_out.
      const id = this.insertState(accountId, state, { consent }, false);
      const cancelled = extra.optedOut === true ? this.applyOptOut(accountId, id, state.phoneNumber, true, nowIso, false).cancelled : [];
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
    const extra = splitOptOutFields(body, "update");
    // A body of optedOut (or consent) alone changes no other field.
    const onlyExtra = extra.split && Object.keys(extra.body as object).length === 0;
    const r: ReturnType<typeof validateContactInput> = onlyExtra ? { ok: true, patch: {} } : validateContactInput(extra.body, "update");
    if (!r.ok || extra.errors.length) throw validationError([...(r.ok ? [] : r.errors), ...extra.errors]);
    const cancelled = this.sqlite.transaction(() => {
      if (!onlyExtra) this.applyPatch(accountId, current, r.patch, false);
      const opt = extra.optedOut === undefined ? { cancelled: [], changed: false } : this.applyOptOut(accountId, current.id, r.patch.phoneNumber ?? current.phoneNumber, extra.optedOut, iso(this.clock()));
      // One contact.updated for the request, after all its changes (docs/api-decisions.md, "The phone path, round two").
      if (!onlyExtra || opt.changed) emitContact(this.sqlite, accountId, current.id, "contact.updated", this.clock());
      return opt.cancelled;
    })();
    if (cancelled.length) this.withdraw(cancelled);
    this.changes?.contact(accountId, "updated");
    return this.get(accountId, current.id);
  }

  /**
   * Opts a contact out (cancelling what is queued to its number; no confirmation text: the
   * customer did not ask) or back in, emitting contact.opted_out / opted_in (`announce: false`:
   * the caller does, after the contact.created it owes first). Returns the cancelled message ids
   * and whether the contact changed (the caller then owes one contact.updated); no transaction.
   */
  private applyOptOut(accountId: string, id: string, phone: string, optedOut: boolean, at: string, announce = true): { cancelled: string[]; changed: boolean } {
    const row = this.sqlite.query("SELECT opted_out AS o, updated_at AS u FROM contacts WHERE id = ?1").get(id) as { o: number; u: string };
    const now = this.clock();
    const changed = (row.o === 1) !== optedOut;
    if (changed) {
      setContactOptOut(this.sqlite, id, optedOut, at, this.now(row.u));
      if (announce) emitContact(this.sqlite, accountId, id, optedOut ? "contact.opted_out" : "contact.opted_in", now);
    }
    const cancelled = optedOut ? cancelQueuedTo(this.sqlite, accountId, phone, iso(now)) : [];
    for (const m of cancelled) emitMessageStatus(this.sqlite, accountId, m, "cancelled", now);
    return { cancelled, changed };
  }

  /**
   * Deletes the contact and its message history in one transaction; returns the ids of its
   * queued messages so the caller can take them out of the in-memory queue after the commit.
   */
  delete(accountId: string, id: string): { deletedId: string; removedQueued: string[] } {
    this.get(accountId, id);
    const out = this.sqlite.transaction(() => {
      const removedQueued = (
        this.sqlite.query(`SELECT id FROM messages WHERE contact_id = ? AND account_id = ? AND status = 'queued'`).all(id, accountId) as Array<{ id: string }>
      ).map((r) => r.id);
      this.sqlite.query(`DELETE FROM messages WHERE contact_id = ? AND account_id = ?`).run(id, accountId);
      this.sqlite.query(`DELETE FROM contacts WHERE id = ? AND account_id = ?`).run(id, accountId);
      return { deletedId: id, removedQueued };
    })();
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
        this.sqlite.exec("SAVEPOINT contact");
        try {
          this.applyPatch(accountId, this.get(accountId, id), r.patch);
          this.sqlite.exec("RELEASE contact");
          updated++;
        } catch (err) {
          this.sqlite.exec("ROLLBACK TO contact");
          this.sqlite.exec("RELEASE contact");
          if (!(err instanceof AppError)) throw err;
          errors.push({ id, code: err.code, message: err.message });
        }
      }
    })();
    if (updated > 0) this.changes?.contact(accountId, "updated");
    return { updated, errors };
  }

  /**
   * Upserts contacts by phone from rows of cells (the first row is the header; see
   * contact-import.ts for CSV and XLSX). Rows are written in transactions of about IMPORT_SLICE_MS
   * each, and the event loop gets a turn between them, so other requests keep being answered during a long import.
   * A row with any problem is skipped whole and reported; the report keeps the first
   * MAX_IMPORT_ERRORS problems and counts the rest.
   */
  async importRows(accountId: string, batches: AsyncIterable<ImportSourceRow[]>): Promise<ImportResult> {
    const result: ImportResult = { created: 0, updated: 0, errors: [] };
    const tally = { errors: 0, refusedRows: 0 };
    const report = (row: number, field: string, message: string) => {
      tally.errors++;
      if (result.errors.length < MAX_IMPORT_ERRORS) result.errors.push({ row, field, message });
    };
    const formOk = new Map<string, boolean>();
    let header: ImportHeader | null = null;
    let width = 0;
    let rowNo = 0; // as a spreadsheet shows it: the header is row 1
    const sync = (this.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
    // New contacts are written many per statement (db/contact-batch.ts), within each slice.
    const waiting = new ContactInsertBatch(this.sqlite);
    for await (const batch of batches) {
      let at = 0;
      while (at < batch.length) {
        // One transaction per time slice, then a turn for the event loop: other requests wait
        // at most about IMPORT_SLICE_MS behind an import, whatever the rows cost.
        // A slice commits without waiting for the disk (synchronous=NORMAL, still atomic in WAL
        // mode); the import's last commit below waits for it and so covers every slice before it.
        // The setting goes back before anything else can run, so other writes stay FULL.
        if (this.gate?.closed) await this.gate.wait();
        this.sqlite.exec("PRAGMA synchronous = NORMAL");
        const cancelled: string[] = [];
        try {
          // The slice's new contacts of a form: one rollup upsert per form and quarter hour at its end.
          this.sqlite.transaction(() => derivedCounts(this.sqlite).batch(() => {
            const until = performance.now() + IMPORT_SLICE_MS;
            while (at < batch.length && performance.now() < until) {
              const r = batch[at++];
              rowNo = r.row ?? rowNo + 1;
              if (!header) {
                if (r.error) throw validationError([{ field: "header", message: `the header row cannot be read: ${r.error}`, requirement: "a header row of column names", provided: null }]);
                const h = parseImportHeader(r.cells);
                if (!h.ok) throw validationError(h.errors);
                header = h.header;
                width = r.cells.length;
                continue;
              }
              if (r.error) {
                // e.g. an unterminated quote or an over-long cell: the row's cells cannot be trusted.
                tally.refusedRows++;
                report(rowNo, "row", r.error);
                continue;
              }
              const before = tally.errors;
              this.importRow(accountId, header, width, r.cells, rowNo, report, result, formOk, cancelled, waiting);
              if (tally.errors > before) tally.refusedRows++;
            }
            this.flushCreated(accountId, waiting);
          }))();
        } finally {
          this.sqlite.exec(`PRAGMA synchronous = ${sync}`);
        }
        // An import that opts contacts out cancels their queued messages: out of the queue too.
        if (cancelled.length) this.withdraw(cancelled);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (!header) throw validationError([{ field: "body", message: "the file is empty; send a header row and data rows", requirement: "a header row and data rows", provided: null }]);
    if (result.created + result.updated > 0) {
      // The durable point before the 200: a commit that writes a page, at the connection's own
      // setting, syncs the WAL and with it every slice before (a no-op rewrite of the account row).
      this.sqlite.transaction(() => this.sqlite.query("UPDATE accounts SET name = name WHERE id = ?").run(accountId))();
    }
    if (tally.errors > result.errors.length) {
      result.errorCount = tally.errors;
      result.errorsTruncated = true;
    }
    result.refusedRows = tally.refusedRows;
    if (result.created + result.updated > 0) this.changes?.contact(accountId, "updated");
    return result;
  }

  private importRow(
    accountId: string,
    header: ImportHeader,
    width: number,
    cells: string[],
    rowNo: number,
    report: (row: number, field: string, message: string) => void,
    result: ImportResult,
    formOk: Map<string, boolean>,
    cancelled: string[],
    batch: ContactInsertBatch,
  ) {
    if (cells.length !== width) {
      report(rowNo, "row", `row has ${cells.length} cells; the header has ${width}`);
      return;
    }
    const { body, createdAt, formId, optedOut, optedOutAt } = importRowBody(header, cells);
    const v = validateContactInput(body, "create");
    const rowErrors = v.ok ? [] : v.errors;
    if (optedOut !== undefined && optedOut !== "true" && optedOut !== "false") {
      rowErrors.push({ field: "optedOut", message: "optedOut must be true or false (empty leaves it as it is)" });
    }
    let optedOutMs: number | null = null;
    if (optedOutAt !== undefined) {
      optedOutMs = parseIsoTimestamp(optedOutAt);
      if (optedOutMs === null) rowErrors.push({ field: "optedOutAt", message: "optedOutAt must be an ISO 8601 timestamp" });
    }
    let createdMs: number | null = null;
    if (createdAt !== undefined) {
      createdMs = parseIsoTimestamp(createdAt);
      if (createdMs === null) rowErrors.push({ field: "createdAt", message: "createdAt must be an ISO 8601 timestamp" });
    }
    if (!v.ok || rowErrors.length) {
      for (const e of rowErrors) report(rowNo, e.field, e.message);
      return;
    }
    const patch = v.patch;
    // The same number earlier in this slice: write it first, so this row finds and updates it.
    if (batch.hasPhone(patch.phoneNumber!)) this.flushCreated(accountId, batch);
    const existing = this.upserts.findByPhone(accountId, patch.phoneNumber!);
    const optOutAt = optedOutMs === null ? iso(this.clock()) : iso(optedOutMs);
    try {
      if (existing) {
        // Effects stay in file order: the waiting creations go first.
        this.flushCreated(accountId, batch);
        this.importUpdate(accountId, existing, patch);
        // "false" on a contact that is not opted out changes nothing (applyOptOut would only read).
        if (optedOut !== undefined && !(optedOut === "false" && existing.optedOut === 0)) {
          cancelled.push(...this.applyOptOut(accountId, existing.id, patch.phoneNumber!, optedOut === "true", optOutAt).cancelled);
        }
        // One contact.updated per row, after its opt-out too (docs/api-decisions.md, "The phone path, round two").
        emitContact(this.sqlite, accountId, existing.id, "contact.updated", this.clock());
        result.updated++;
        return;
      }
      let form: string | null = null;
      if (formId !== undefined) {
        if (!formOk.has(formId)) formOk.set(formId, this.stmts.formOfAccount.get(formId, accountId) !== null);
        if (formOk.get(formId)) form = formId;
      }
      // A create patch holds at most MAX_CUSTOM_FIELDS fields (validateContactInput) and a new
      // contact starts with none, so only an update can go over the limit (applyPatch checks).
      const opts = { formId: form, createdAt: createdMs === null ? undefined : iso(createdMs), consent: { source: "import", at: iso(this.clock()) } satisfies ConsentRecord };
      if (optedOut === "true") {
        // An opt-out cancels queued messages at once: written now, after the waiting rows.
        this.flushCreated(accountId, batch);
        const id = this.insertState(accountId, newContactState(patch), opts, false);
        cancelled.push(...this.applyOptOut(accountId, id, patch.phoneNumber!, true, optOutAt, false).cancelled);
        emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
        emitContact(this.sqlite, accountId, id, "contact.opted_out", this.clock());
      } else {
        batch.add(this.newContactRow(accountId, newContactState(patch), opts));
        if (batch.size >= CONTACT_BATCH_ROWS) this.flushCreated(accountId, batch);
      }
      result.created++;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const first = err.errors?.[0];
      report(rowNo, first?.field ?? "row", first?.message ?? err.message);
    }
  }

  /**
   * applyPatch for an import row: the same contact afterwards, from the row the phone lookup read
   * (no second read) and writing only the columns that change (db/contact-upsert.ts); tags are
   * rewritten only when they change.
   */
  private importUpdate(accountId: string, stored: StoredContactRow, patch: ContactPatch) {
    const current: ContactState = {
      firstName: stored.firstName,
      lastName: stored.lastName,
      email: stored.email,
      phoneNumber: stored.phoneNumber,
      status: stored.status as ContactStatus,
      tags: JSON.parse(stored.tags),
      customFields: JSON.parse(stored.customFields),
      notes: stored.notes,
      source: stored.source,
      lastResponseAt: stored.lastResponseAt,
    };
    const next = applyContactPatch(current, patch);
    assertCustomFieldLimit(next);
    const columns = {
      firstName: next.firstName,
      lastName: next.lastName,
      email: next.email,
      status: next.status,
      customFields: JSON.stringify(next.customFields),
      tags: JSON.stringify(next.tags),
      lastResponseAt: next.lastResponseAt,
      source: next.source,
      notes: next.notes,
      searchText: contactSearchText(next),
    };
    // contact_tags follows the tags column by trigger (migration 0020).
    // contact.updated: the caller, once the row's opt-out is applied too.
    this.upserts.update(accountId, stored, columns, this.now(stored.updatedAt));
  }

  /**
   * Contacts created in the period (days in `timezone`, today included), optionally of one form.
   * conversionRate = converted ÷ contacts × 100 (one decimal); averageTimeToResponse = mean of
   * lastResponseAt − createdAt over those with a lastResponseAt; topPerformingForms: the 10 forms
   * with the most converted contacts (then the best rate, then the most contacts).
   */
  analytics(accountId: string, q: AnalyticsQuery) {
    if (q.formId) this.forms.get(accountId, q.formId);
    const now = this.clock();
    const w = periodWindow(q.period, now, q.timezone);
    const conds = ["c.account_id = ?", "c.created_at >= ?", "c.created_at <= ?"];
    const params: SQLQueryBindings[] = [accountId, iso(w.from), iso(now)];
    if (q.formId) conds.push("c.form_id = ?"), params.push(q.formId);
    const where = conds.join(" AND ");
    const statusDistribution = Object.fromEntries(CONTACT_STATUSES.map((s) => [s, 0])) as Record<ContactStatus, number>;
    for (const r of this.sqlite.query(`SELECT c.status AS status, count(*) AS n FROM contacts c WHERE ${where} GROUP BY c.status`).all(...params) as Array<{ status: ContactStatus; n: number }>) {
      statusDistribution[r.status] = r.n;
    }
    const total = Object.values(statusDistribution).reduce((a, b) => a + b, 0);
    const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10);
    const avg = this.sqlite
      .query(`SELECT avg((julianday(c.last_response_at) - julianday(c.created_at)) * 86400.0) AS s, count(*) AS n FROM contacts c WHERE ${where} AND c.last_response_at IS NOT NULL`)
      .get(...params) as { s: number | null; n: number };
    const seconds = avg.s === null ? null : Math.round(avg.s);
    const top = this.sqlite
      .query(
        `SELECT c.form_id AS formId, f.name AS formName, count(*) AS contacts, sum(c.status = 'converted') AS converted
         FROM contacts c JOIN forms f ON f.id = c.form_id WHERE ${where} GROUP BY c.form_id`,
      )
      .all(...params) as Array<{ formId: string; formName: string; contacts: number; converted: number }>;
    const topPerformingForms = top
      .map((t) => ({ ...t, conversionRate: rate(t.converted, t.contacts) }))
      .sort((a, b) => b.converted - a.converted || b.conversionRate - a.conversionRate || b.contacts - a.contacts || a.formName.localeCompare(b.formName))
      .slice(0, 10);
    return {
      period: q.period,
      timezone: q.timezone,
      from: iso(w.from),
      to: iso(now),
      totalContacts: total,
      statusDistribution,
      conversionRate: rate(statusDistribution.converted, total),
      averageTimeToResponse: humanDuration(seconds),
      averageTimeToResponseSeconds: seconds,
      respondedContacts: avg.n,
      topPerformingForms,
    };
  }
}

/** A patch may add custom fields past the per-contact limit: refused like a bad field. */
function assertCustomFieldLimit(next: ContactState): void {
  if (!customFieldsWithinLimit(next.customFields)) {
    throw validationError([{ field: "customFields", message: `a contact holds at most ${MAX_CUSTOM_FIELDS} custom fields`, requirement: `at most ${MAX_CUSTOM_FIELDS} fields`, provided: Object.keys(next.customFields).length }]);
  }
}

/**
 * `optedOut` and `consent` are set apart from the contact patch (validateContactInput refuses
 * keys it does not know): optedOut a boolean; consent on create only, `{source: "manual"|"api"}`
 * (how the owner got the number; default api).
 */
function splitOptOutFields(
  body: unknown,
  mode: "create" | "update",
): {
  body: unknown;
  /** The body held optedOut or consent. */
  split: boolean;
  optedOut?: boolean;
  consentSource?: "manual" | "api";
  errors: Array<{ field: string; message: string; requirement?: string; provided?: unknown }>;
} {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { body, split: false, errors: [] };
  const { optedOut, consent, ...rest } = body as Record<string, unknown>;
  const errors: Array<{ field: string; message: string; requirement?: string; provided?: unknown }> = [];
  const out: ReturnType<typeof splitOptOutFields> = { body: rest, split: optedOut !== undefined || consent !== undefined, errors };
  if (optedOut !== undefined) {
    if (typeof optedOut === "boolean") out.optedOut = optedOut;
    else errors.push({ field: "optedOut", message: "optedOut must be true or false", requirement: "boolean", provided: optedOut });
  }
  if (consent !== undefined) {
    const src = typeof consent === "object" && consent !== null && !Array.isArray(consent) ? (consent as Record<string, unknown>).source : undefined;
    const keys = typeof consent === "object" && consent !== null ? Object.keys(consent) : [];
    if (mode !== "create") errors.push({ field: "consent", message: "consent is recorded when a contact is created and cannot be changed", requirement: "no consent on update", provided: null });
    else if ((src !== "manual" && src !== "api") || keys.some((k) => k !== "source")) {
      errors.push({ field: "consent", message: 'consent must be {"source": "manual"} or {"source": "api"}', requirement: "{source: manual | api}", provided: null });
    } else out.consentSource = src;
  }
  return out;
}
