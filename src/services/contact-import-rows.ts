/**
 * Writing an import's rows: contacts upserted by phone from rows of cells (the first row is the
 * header; contact-import.ts reads CSV and XLSX into rows), in time slices so other requests keep
 * being answered. A row's opt-out goes through opt-outs.ts like any other.
 */
import type { Database } from "bun:sqlite";
import type { WriteGate } from "../db/write-gate";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import { contactSearchText } from "../domain/contact-search";
import { applyContactPatch, customFieldsWithinLimit, MAX_CUSTOM_FIELDS, newContactState, validateContactInput, type ContactPatch, type ContactState } from "../domain/contact-update";
import { parseImportHeader, importRowBody, type ImportHeader } from "../domain/contact-export";
import { parseIsoTimestamp } from "../domain/message-transitions";
import { derivedCounts } from "../db/derived-counts";
import { CONTACT_BATCH_ROWS, ContactInsertBatch } from "../db/stores/contacts/batch";
import { ContactUpserts, type StoredContactRow } from "../db/stores/contacts/upsert";
import { relaxedSync, syncImportCommit, type ConsentRecord } from "../db/stores/contacts";
import { formBelongsTo } from "../db/stores/forms";
import { emitContact } from "./event-payloads";
import { importOptOut, parseImportOptOut, setOptOut } from "./opt-outs";
import type { ContactService } from "./contacts";

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
export interface ImportLine {
  cells: string[];
  row?: number;
  error?: string;
}

/** An import's report lists this many problems; the rest are counted (errorCount). */
export const MAX_IMPORT_ERRORS = 1_000;
/** An import writes rows for this long (ms) per transaction, then lets other requests run. */
export const IMPORT_SLICE_MS = 10;

export class ContactImporter {
  /** The import's statements for contacts that exist (db/stores/contacts/upsert.ts). */
  private readonly upserts: ContactUpserts;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    /** New contacts are made as the API makes them (newContactRow, insertState). */
    private readonly contacts: ContactService,
    /** After a commit that cancelled queued messages (an opt-out): out of the queue and leases. */
    private readonly withdraw: (ids: string[]) => void,
    /** Import slices wait here while the checkpoint thread catches up (src/db/write-gate.ts). */
    private readonly gate?: WriteGate,
  ) {
    this.upserts = new ContactUpserts(sqlite);
  }

  /** Writes the import's waiting new contacts, then their contact.created events, in file order. */
  private flushCreated(accountId: string, batch: ContactInsertBatch): void {
    for (const id of batch.flush()) emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
  }

  /**
   * Upserts contacts by phone from rows of cells (the first row is the header; see
   * contact-import.ts for CSV and XLSX). Rows are written in transactions of about IMPORT_SLICE_MS
   * each, and the event loop gets a turn between them, so other requests keep being answered during a long import.
   * A row with any problem is skipped whole and reported; the report keeps the first
   * MAX_IMPORT_ERRORS problems and counts the rest.
   */
  async importRows(accountId: string, batches: AsyncIterable<ImportLine[]>, opts: { dryRun?: boolean } = {}): Promise<ImportResult> {
    const dryRun = opts.dryRun === true;
    /** A dry run's contacts as the rows before would have left them, by phone (null: not known). */
    const seen = new Map<string, ContactState>();
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
    // New contacts are written many per statement (db/stores/contacts/batch.ts), within each slice.
    const waiting = new ContactInsertBatch(this.sqlite);
    for await (const batch of batches) {
      let at = 0;
      while (at < batch.length) {
        // One transaction per time slice, then a turn for the event loop: other requests wait
        // at most about IMPORT_SLICE_MS behind an import, whatever the rows cost.
        // A slice commits without waiting for the disk (synchronous=NORMAL, still atomic in WAL
        // mode); the import's last commit below waits for it and so covers every slice before it.
        // The setting goes back before anything else can run, so other writes stay FULL.
        if (this.gate?.closed && !dryRun) await this.gate.wait();
        const cancelled: string[] = [];
        // A dry run reads and writes nothing but its report: no transaction, the same checks.
        const slice = (fn: () => void) => (dryRun ? fn() : relaxedSync(this.sqlite, () => this.sqlite.transaction(() => derivedCounts(this.sqlite).batch(fn))()));
        // The slice's new contacts of a form: one rollup upsert per form and quarter hour at its end.
        slice(() => {
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
            if (dryRun) this.checkRow(accountId, header, width, r.cells, rowNo, report, result, seen);
            else this.importRow(accountId, header, width, r.cells, rowNo, report, result, formOk, cancelled, waiting);
            if (tally.errors > before) tally.refusedRows++;
          }
          if (!dryRun) this.flushCreated(accountId, waiting);
        });
        // An import that opts contacts out cancels their queued messages: out of the queue too.
        if (cancelled.length) this.withdraw(cancelled);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (!header) throw validationError([{ field: "body", message: "the file is empty; send a header row and data rows", requirement: "a header row and data rows", provided: null }]);
    if (!dryRun && result.created + result.updated > 0) {
      // The durable point before the 200 (syncImportCommit).
      syncImportCommit(this.sqlite, accountId);
    }
    if (tally.errors > result.errors.length) {
      result.errorCount = tally.errors;
      result.errorsTruncated = true;
    }
    result.refusedRows = tally.refusedRows;
    return result;
  }

  /**
   * A dry run's row: every check importRow makes (the cells, the contact's fields, the opt-out
   * columns, createdAt, the custom field limit against the contact as the file's earlier rows
   * would have left it), counted as it would be written, nothing written (docs/api-decisions.md,
   * "The owner hears back", the import preview).
   */
  private checkRow(
    accountId: string,
    header: ImportHeader,
    width: number,
    cells: string[],
    rowNo: number,
    report: (row: number, field: string, message: string) => void,
    result: ImportResult,
    seen: Map<string, ContactState>,
  ) {
    const checked = this.rowPatch(header, width, cells, rowNo, report);
    if (!checked) return;
    const patch = checked.patch;
    const phone = patch.phoneNumber!;
    let current = seen.get(phone);
    if (!current) {
      const stored = this.upserts.findByPhone(accountId, phone);
      if (stored) current = stateOf(stored);
    }
    if (!current) {
      seen.set(phone, newContactState(patch));
      result.created++;
      return;
    }
    const next = applyContactPatch(current, patch);
    try {
      assertCustomFieldLimit(next);
    } catch (err) {
      // The import's own refusal, word for word (importRow reports it from the same throw).
      const first = (err as AppError).errors?.[0];
      report(rowNo, first?.field ?? "customFields", first?.message ?? (err as Error).message);
      return;
    }
    seen.set(phone, next);
    result.updated++;
  }

  /** A row's cells read and checked (the import and its dry run alike); null (problems reported) when refused. */
  private rowPatch(header: ImportHeader, width: number, cells: string[], rowNo: number, report: (row: number, field: string, message: string) => void) {
    if (cells.length !== width) {
      report(rowNo, "row", `row has ${cells.length} cells; the header has ${width}`);
      return null;
    }
    const { body, createdAt, formId, optedOut, optedOutAt } = importRowBody(header, cells);
    const v = validateContactInput(body, "create");
    const rowErrors = v.ok ? [] : v.errors;
    const optOut = parseImportOptOut(optedOut, optedOutAt, this.clock(), rowErrors);
    let createdMs: number | null = null;
    if (createdAt !== undefined) {
      createdMs = parseIsoTimestamp(createdAt);
      if (createdMs === null) rowErrors.push({ field: "createdAt", message: "createdAt must be an ISO 8601 timestamp" });
    }
    if (!v.ok || rowErrors.length) {
      for (const e of rowErrors) report(rowNo, e.field, e.message);
      return null;
    }
    return { patch: v.patch, createdMs, formId, optOut };
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
    const checked = this.rowPatch(header, width, cells, rowNo, report);
    if (!checked) return;
    const { patch, createdMs, formId, optOut } = checked;
    // The same number earlier in this slice: write it first, so this row finds and updates it.
    if (batch.hasPhone(patch.phoneNumber!)) this.flushCreated(accountId, batch);
    const existing = this.upserts.findByPhone(accountId, patch.phoneNumber!);
    try {
      if (existing) {
        // Effects stay in file order: the waiting creations go first.
        this.flushCreated(accountId, batch);
        this.importUpdate(accountId, existing, patch);
        cancelled.push(...importOptOut(this.sqlite, this.clock, accountId, { id: existing.id, optedOut: existing.optedOut }, patch.phoneNumber!, optOut));
        // One contact.updated per row, after its opt-out too (docs/api-decisions.md, "The phone path, round two").
        emitContact(this.sqlite, accountId, existing.id, "contact.updated", this.clock());
        result.updated++;
        return;
      }
      let form: string | null = null;
      if (formId !== undefined) {
        if (!formOk.has(formId)) formOk.set(formId, formBelongsTo(this.sqlite, formId, accountId));
        if (formOk.get(formId)) form = formId;
      }
      // A create patch holds at most MAX_CUSTOM_FIELDS fields (validateContactInput) and a new
      // contact starts with none, so only an update can go over the limit (applyPatch checks).
      const opts = { formId: form, createdAt: createdMs === null ? undefined : iso(createdMs), consent: { source: "import", at: iso(this.clock()) } satisfies ConsentRecord };
      if (optOut.optedOut === true) {
        // An opt-out cancels queued messages at once: written now, after the waiting rows.
        this.flushCreated(accountId, batch);
        const id = this.contacts.insertState(accountId, newContactState(patch), opts, false);
        cancelled.push(...setOptOut(this.sqlite, this.clock, accountId, id, patch.phoneNumber!, true, optOut.at, false).cancelled);
        emitContact(this.sqlite, accountId, id, "contact.created", this.clock());
        emitContact(this.sqlite, accountId, id, "contact.opted_out", this.clock());
      } else {
        batch.add(this.contacts.newContactRow(accountId, newContactState(patch), opts));
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
   * (no second read) and writing only the columns that change (db/stores/contacts/upsert.ts); tags are
   * rewritten only when they change.
   */
  private importUpdate(accountId: string, stored: StoredContactRow, patch: ContactPatch) {
    const next = applyContactPatch(stateOf(stored), patch);
    assertCustomFieldLimit(next);
    const columns = {
      firstName: next.firstName,
      lastName: next.lastName,
      email: next.email,
      status: next.status,
      customFields: next.customFields,
      tags: next.tags,
      lastResponseAt: next.lastResponseAt,
      source: next.source,
      notes: next.notes,
      timeZone: next.timeZone,
      searchText: contactSearchText(next),
    };
    // contact_tags follows the tags column by trigger (migration 0020).
    // contact.updated: the caller, once the row's opt-out is applied too.
    this.upserts.update(accountId, stored, columns, nextUpdatedAt(this.clock(), stored.updatedAt));
  }

}

/** A stored contact as the patch rules take it. */
function stateOf(stored: StoredContactRow): ContactState {
  return {
    firstName: stored.firstName,
    lastName: stored.lastName,
    email: stored.email,
    phoneNumber: stored.phoneNumber,
    status: stored.status,
    tags: stored.tags,
    customFields: stored.customFields,
    notes: stored.notes,
    source: stored.source,
    lastResponseAt: stored.lastResponseAt,
    timeZone: stored.timeZone,
  };
}

/** A patch may add custom fields past the per-contact limit: refused like a bad field. */
export function assertCustomFieldLimit(next: ContactState): void {
  if (!customFieldsWithinLimit(next.customFields)) {
    throw validationError([{ field: "customFields", message: `a contact holds at most ${MAX_CUSTOM_FIELDS} custom fields`, requirement: `at most ${MAX_CUSTOM_FIELDS} fields`, provided: Object.keys(next.customFields).length }]);
  }
}
