/**
 * Streaming contact exports: JSON, CSV (papaparse) or XLSX (exceljs's
 * streaming workbook writer), read from a SQLite cursor (iterateContacts in src/db/stores/contacts/index.ts) a chunk at a time as
 * the client reads, so memory stays flat whatever the row count.
 *
 * The cursor runs on its own read-only connection inside one read transaction: the export is a
 * consistent snapshot, and the main connection's writes are neither blocked (WAL) nor held back
 * by a statement that stays open as long as a slow client takes to download.
 */
import type { Database } from "bun:sqlite";
import { PassThrough } from "node:stream";
import Papa from "papaparse";
import { openSqlite } from "../db/open";
import { validationError } from "../errors";
import type { FieldError } from "../domain/submission";
import { parseFilter } from "../domain/contact-query";
import { enumError } from "../domain/query-params";
import { EXPORT_FORMATS, contactCells, contactJson, expandColumns, parseFieldSelection, type ColumnSelection, type ExportFormat } from "../domain/contact-export";
import { beginRead, customFieldNames, endRead, iterateContacts, type Contact } from "../db/stores/contacts";
import { localDate } from "../domain/time-series";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";

/** Rows turned into one chunk of the response. */
export const EXPORT_CHUNK_ROWS = 500;
/** XLSX: how much zipped output may wait for the client before the writer pauses. */
const XLSX_BUFFER_BYTES = 1_048_576;
const XLSX_GC_ROWS = 10_000;

const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

/** Bytes of sheet XML exceljs has produced that the zip has not yet taken (its internals, read defensively). */
function sheetBacklog(ws: unknown): number {
  type Pipe = { writableLength?: number; _writableState?: { length?: number } };
  const sb = (ws as { stream?: { buffers?: Array<{ length?: number }>; pipes?: Pipe[] } }).stream;
  if (!sb) return 0;
  let n = 0;
  for (const b of sb.buffers ?? []) n += b.length ?? 0;
  // archiver's entry stream is a readable-stream Writable: its queue length is in _writableState.
  for (const p of sb.pipes ?? []) n += p.writableLength ?? p._writableState?.length ?? 0;
  return n;
}

export interface PreparedExport {
  format: ExportFormat;
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

export class ExportService {
  constructor(
    private readonly mainDb: Database,
    private readonly dbPath: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Validates the query (400 naming the parameter) and opens the stream. */
  open(accountId: string, raw: Record<string, unknown>): PreparedExport {
    const errors: FieldError[] = [];
    const fmt = raw.format === undefined || raw.format === "" ? "json" : String(raw.format);
    if (!(EXPORT_FORMATS as readonly string[]).includes(fmt)) {
      errors.push(enumError("format", EXPORT_FORMATS, fmt.slice(0, 100)));
    }
    for (const k of Object.keys(raw)) {
      if (!["format", "status", "tags", "fields", "formId", "search", "createdAfter", "createdBefore", "optedOut"].includes(k)) {
        errors.push({ field: k, message: `${k} is not an export parameter; allowed: format, status, tags, fields, formId, search, createdAfter, createdBefore, optedOut`, requirement: "a known parameter", provided: k });
      }
    }
    const filter = parseFilter(raw, errors);
    const sel = parseFieldSelection(raw.fields === undefined ? undefined : String(raw.fields), errors);
    if (errors.length) throw validationError(errors);
    const format = fmt as ExportFormat;

    // A file database gets its own read-only connection; ":memory:" (unit use) shares the main one.
    const own = this.dbPath !== ":memory:";
    const db = own ? openSqlite(this.dbPath, { readonly: true }) : this.mainDb;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      try {
        if (own) {
          endRead(db);
          db.close(false);
        }
      } catch (err) {
        this.logger.warn("export cleanup", { error: String(err) });
      }
    };
    try {
      if (own) beginRead(db);
      let customNames: string[] = [];
      if (format !== "json" && sel.needsAllCustom) {
        customNames = customFieldNames(db, accountId, filter);
      }
      const { rows, finalize } = iterateContacts(db, accountId, filter);
      const columns = expandColumns(sel, customNames);
      const body =
        format === "xlsx" ? this.xlsxStream(rows, finalize, columns, close) : this.textStream(format, rows, finalize, sel, columns, close);
      const date = localDate(this.clock(), "UTC");
      return { format, filename: `contacts-${date}.${format}`, contentType: CONTENT_TYPES[format], body };
    } catch (err) {
      close();
      throw err;
    }
  }

  private textStream(
    format: "json" | "csv",
    rows: IterableIterator<Contact>,
    finalize: () => void,
    sel: ColumnSelection,
    columns: string[],
    close: () => void,
  ): ReadableStream<Uint8Array> {
    const enc = new TextEncoder();
    let first = true;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      try {
        finalize();
      } catch {}
      close();
    };
    return new ReadableStream<Uint8Array>(
      {
        pull: (controller) => {
          try {
            let out = "";
            if (first) out = format === "json" ? "[" : Papa.unparse([columns]) + "\r\n";
            const batch: Array<Array<string | number>> = [];
            let n = 0;
            let end = false;
            while (n < EXPORT_CHUNK_ROWS) {
              const next = rows.next();
              if (next.done) {
                end = true;
                break;
              }
              const c = next.value;
              if (format === "json") out += (first && n === 0 ? "\n" : ",\n") + JSON.stringify(contactJson(c, sel));
              else batch.push(contactCells(c, columns));
              n++;
            }
            if (format === "csv" && batch.length) out += Papa.unparse(batch, { header: false }) + "\r\n";
            first = false;
            if (end) out += format === "json" ? "\n]\n" : "";
            if (out) controller.enqueue(enc.encode(out));
            if (end) {
              finish();
              controller.close();
            }
          } catch (err) {
            finish();
            controller.error(err);
          }
        },
        cancel: () => finish(),
      },
      { highWaterMark: 1 },
    );
  }

  /**
   * exceljs writes the zip into a PassThrough; the producer adds rows a chunk at a time and
   * pauses while more than XLSX_BUFFER_BYTES of output wait for the client.
   */
  private xlsxStream(rows: IterableIterator<Contact>, finalize: () => void, columns: string[], close: () => void): ReadableStream<Uint8Array> {
    const pass = new PassThrough({ highWaterMark: 1_048_576 });
    let cancelled = false;
    const finish = () => {
      try {
        finalize();
      } catch {}
      close();
    };
    const produce = async () => {
      // Loaded on first use: evaluating exceljs takes ~0.5 s, which every start would pay.
      const { default: ExcelJS } = await import("exceljs");
      const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: pass, useStyles: false, useSharedStrings: false });
      const ws = wb.addWorksheet("Contacts");
      ws.addRow(columns).commit();
      let n = 0;
      for (const r of rows) {
        if (cancelled) break;
        ws.addRow(contactCells(r, columns)).commit();
        if (++n % EXPORT_CHUNK_ROWS === 0) {
          // exceljs leaves a lot of short-lived garbage per row that the collector is slow to take
          // back; a full collection every XLSX_GC_ROWS rows (a few ms) keeps the peak RSS flat.
          if (n % XLSX_GC_ROWS === 0) Bun.gc(true);
          await new Promise((res) => setImmediate(res));
          // exceljs hands sheet XML to the zip without waiting for it (StreamBuf ignores
          // backpressure), so the producer waits here: for the zip to compress what it was given,
          // and for the client to take the compressed output.
          while (!cancelled && (sheetBacklog(ws) > XLSX_BUFFER_BYTES || pass.readableLength > XLSX_BUFFER_BYTES)) {
            await new Promise((res) => setTimeout(res, 1));
          }
        }
      }
      finish();
      if (cancelled) return;
      ws.commit();
      await wb.commit();
    };
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        pass.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) pass.pause();
        });
        pass.on("end", () => {
          if (!cancelled) controller.close();
        });
        pass.on("error", (err) => controller.error(err));
        produce().catch((err) => {
          finish();
          this.logger.error("xlsx export failed", { error: String((err as Error)?.stack ?? err) });
          if (!cancelled) controller.error(err);
        });
      },
      pull: () => {
        pass.resume();
      },
      cancel: () => {
        cancelled = true;
        pass.destroy();
      },
    });
  }
}

