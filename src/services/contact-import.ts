/**
 * Contact import files → batches of rows for ContactService.importRows, read as a stream: a CSV
 * through the incremental reader of domain/csv-rows.ts, an XLSX workbook through exceljs's
 * streaming reader (its first worksheet). Neither holds the whole file: a CSV costs one network
 * chunk plus one row; an XLSX keeps its shared strings. A cell over MAX_IMPORT_CELL_CHARS makes
 * its row an error instead of being kept.
 */
import { Readable } from "node:stream";
import { validationError } from "../errors";
import { CsvRowReader } from "../domain/csv-rows";
import type { ImportLine } from "./contact-import-rows";

export const IMPORT_FORMATS = ["csv", "xlsx"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Longest cell an import reads (characters); a longer one refuses its row. */
export const MAX_IMPORT_CELL_CHARS = 10_240;
/** Rows handed over at a time from an XLSX sheet. */
const XLSX_BATCH_ROWS = 500;

export function importBatches(format: ImportFormat, body: ReadableStream<Uint8Array> | null): AsyncIterable<ImportLine[]> {
  const stream = body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  return format === "csv" ? csvBatches(stream) : xlsxBatches(stream);
}

export async function* csvBatches(stream: ReadableStream<Uint8Array>): AsyncGenerator<ImportLine[]> {
  const csv = new CsvRowReader(MAX_IMPORT_CELL_CHARS);
  const decoder = new TextDecoder("utf-8");
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const rows = csv.push(decoder.decode(value, { stream: true }));
      if (rows.length) yield rows.map(asSourceRow);
    }
    const rows = [...csv.push(decoder.decode()), ...csv.end()];
    if (rows.length) yield rows.map(asSourceRow);
  } finally {
    reader.releaseLock();
  }
}

const asSourceRow = (r: { cells: string[]; error?: string }): ImportLine => (r.error ? { cells: r.cells, error: `malformed CSV: ${r.error}` } : { cells: r.cells });

export async function* xlsxBatches(stream: ReadableStream<Uint8Array>): AsyncGenerator<ImportLine[]> {
  const input = Readable.fromWeb(stream as Parameters<typeof Readable.fromWeb>[0]);
  // Loaded on first use: evaluating exceljs takes ~0.5 s, which every start would pay.
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, { worksheets: "emit", sharedStrings: "cache", hyperlinks: "ignore", styles: "ignore", entries: "ignore" });
  let width = -1; // the header's width, once seen
  let sheets = 0;
  let batch: ImportLine[] = [];
  let lastRow = 0;
  try {
    for await (const sheet of workbook) {
      // Only the first worksheet is imported; the others are read past (the zip is one stream).
      if (sheets++ > 0) {
        for await (const _ of sheet) void _;
        continue;
      }
      for await (const row of sheet) {
        lastRow = row.number;
        const values = row.values as unknown[];
        const cells: string[] = [];
        let error: string | undefined;
        for (let i = 1; i < values.length; i++) {
          const text = cellText(values[i]);
          if (text.length > MAX_IMPORT_CELL_CHARS) {
            error ??= `a cell is longer than ${MAX_IMPORT_CELL_CHARS} characters`;
            cells.push("");
          } else cells.push(text);
        }
        if (!error && cells.every((c) => c.trim() === "")) continue;
        if (width < 0) width = cells.length;
        else {
          // A sheet leaves out empty cells at a row's end: pad to the header, drop empty extras.
          while (cells.length < width) cells.push("");
          while (cells.length > width && cells[cells.length - 1] === "") cells.pop();
        }
        batch.push(error ? { cells, row: row.number, error } : { cells, row: row.number });
        if (batch.length >= XLSX_BATCH_ROWS) {
          yield batch;
          batch = [];
        }
      }
    }
  } catch (err) {
    if (width < 0) {
      throw validationError([{ field: "file", message: `the file is not a readable XLSX workbook (${(err as Error).message})`, requirement: "an .xlsx workbook", provided: null }]);
    }
    // Rows read so far stand; the report says where the file stopped being readable.
    batch.push({ cells: [], row: lastRow + 1, error: `the workbook cannot be read past row ${lastRow} (${(err as Error).message})` });
  } finally {
    input.destroy();
  }
  if (batch.length) yield batch;
}

/** A cell as the text the export wrote (or a person typed): numbers as digits, dates as ISO 8601. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? "" : v.toISOString();
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.richText)) return (o.richText as Array<{ text?: string }>).map((t) => t.text ?? "").join("");
    if (typeof o.text === "string") return o.text; // a hyperlink
    if ("result" in o) return cellText(o.result); // a formula: its last computed value
    if ("error" in o) return "";
  }
  return String(v);
}
