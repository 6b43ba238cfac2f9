/**
 * What a contacts import request carries: a CSV or XLSX body sent as it is (Content-Type says
 * which), or a browser's file upload (multipart/form-data, the file in a field named `file`, its
 * format taken from the file name, then its type). The body limit has already been applied by the
 * outer handler (Content-Length, or a chunked body read up to the limit).
 */
import { AppError, validationError } from "../errors";
import type { ImportFormat } from "../services/contact-import";
import { readLimitedBody } from "./body";

export const CSV_TYPE = /^(text\/csv|application\/csv|text\/plain)\b/i;
export const XLSX_TYPE = /^application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet\b/i;
const MULTIPART_TYPE = /^multipart\/form-data\b/i;
export const IMPORT_FILE_FIELD = "file";

const ACCEPTED_TYPES = "text/csv, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet (XLSX) or multipart/form-data with a `file` field";

export interface ImportUpload {
  format: ImportFormat;
  body: ReadableStream<Uint8Array> | null;
}

export async function readImportUpload(request: Request, limit: number): Promise<ImportUpload> {
  const ct = request.headers.get("content-type");
  if (ct && CSV_TYPE.test(ct)) return { format: "csv", body: request.body };
  if (ct && XLSX_TYPE.test(ct)) return { format: "xlsx", body: request.body };
  if (!ct || !MULTIPART_TYPE.test(ct)) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", {
      message: "Send the file as CSV (Content-Type: text/csv), as an XLSX workbook, or as a form upload (multipart/form-data, field `file`)",
      details: { provided: ct ?? "none", expected: ACCEPTED_TYPES },
    });
  }
  // A form upload is read whole (up to the import limit) to reach its file part; the part is a
  // view of that buffer, not a copy.
  const bytes = await readLimitedBody(request, limit);
  let parts: FormPart[];
  try {
    parts = parseMultipart(bytes, ct);
  } catch (err) {
    throw validationError([{ field: "body", message: `the form upload cannot be read (${(err as Error).message})`, requirement: "a multipart/form-data body", provided: null }]);
  }
  const file = parts.find((p) => p.name === IMPORT_FILE_FIELD && p.filename !== undefined);
  if (!file) {
    const fields = [...new Set(parts.map((p) => p.name))];
    throw validationError([
      {
        field: IMPORT_FILE_FIELD,
        message: `send the file in a form field named "${IMPORT_FILE_FIELD}"${fields.length ? `; the fields found are: ${fields.join(", ").slice(0, 200)}` : ""}`,
        requirement: `a file in the "${IMPORT_FILE_FIELD}" field`,
        provided: fields.join(",").slice(0, 100) || null,
      },
    ]);
  }
  const name = file.filename ?? "";
  if (name === "" && file.body.byteLength === 0) {
    throw validationError([{ field: IMPORT_FILE_FIELD, message: "no file was chosen: pick a .csv or .xlsx file", requirement: "a .csv or .xlsx file", provided: null }]);
  }
  const format = formatOfFile(name, file.type);
  if (!format) {
    throw validationError([
      {
        field: IMPORT_FILE_FIELD,
        message: `unknown file format${name ? ` of "${name.slice(0, 100)}"` : ""}${file.type ? ` (${file.type})` : ""}: send a .csv or .xlsx file${/\.(xls|numbers|ods)$/i.test(name) ? "; save the spreadsheet as .xlsx or .csv first" : ""}`,
        requirement: ".csv or .xlsx",
        provided: name || file.type || null,
      },
    ]);
  }
  const body = file.body;
  return { format, body: body.byteLength === 0 ? null : new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(body), c.close()) }) };
}

/** The file name's extension decides (a .csv from Windows often comes as application/vnd.ms-excel); else its type. */
export function formatOfFile(name: string, type: string): ImportFormat | null {
  const ext = name.match(/\.([A-Za-z0-9]+)$/)?.[1]?.toLowerCase();
  if (ext === "csv" || ext === "txt") return "csv";
  if (ext === "xlsx") return "xlsx";
  if (ext) return null;
  if (CSV_TYPE.test(type)) return "csv";
  if (XLSX_TYPE.test(type)) return "xlsx";
  return null;
}

export interface FormPart {
  name: string;
  filename?: string;
  type: string;
  body: Uint8Array;
}

/**
 * The parts of a multipart/form-data body (RFC 7578). Written here rather than with
 * Response.formData(), which in this Bun drops each part's Content-Type (and copies the file).
 */
export function parseMultipart(bytes: Uint8Array, contentType: string): FormPart[] {
  const m = contentType.match(/;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw new Error("no boundary in its Content-Type");
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const delimiter = `--${boundary}`;
  let at = buf.indexOf(delimiter);
  if (at < 0) throw new Error("its boundary never appears");
  const parts: FormPart[] = [];
  for (;;) {
    at += delimiter.length;
    if (buf.toString("latin1", at, at + 2) === "--") return parts;
    const headStart = buf.indexOf("\r\n", at) + 2;
    const headEnd = buf.indexOf("\r\n\r\n", headStart);
    if (headStart < 2 || headEnd < 0) throw new Error("a part has no header end");
    const headers = buf.toString("utf8", headStart, headEnd);
    const bodyStart = headEnd + 4;
    const next = buf.indexOf(`\r\n${delimiter}`, bodyStart);
    if (next < 0) throw new Error("the body ends before its closing boundary");
    const disposition = headers.match(/^content-disposition:(.*)$/im)?.[1] ?? "";
    const name = disposition.match(/\bname="([^"]*)"/i)?.[1];
    if (name === undefined) throw new Error("a part has no name");
    const filename = disposition.match(/\bfilename="([^"]*)"/i)?.[1];
    const type = headers.match(/^content-type:\s*(.*?)\s*$/im)?.[1] ?? "";
    parts.push({ name, filename, type, body: bytes.subarray(bodyStart, next) });
    at = next + 2;
  }
}
