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
  // A form upload is read whole (up to the import limit) to reach its file part.
  const bytes = await readLimitedBody(request, limit);
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(bytes, { headers: { "Content-Type": ct } }).formData();
  } catch (err) {
    throw validationError([{ field: "body", message: `the form upload cannot be read (${(err as Error).message})`, requirement: "a multipart/form-data body", provided: null }]);
  }
  const file = form.get(IMPORT_FILE_FIELD);
  if (!(file instanceof Blob)) {
    const fields = [...new Set(form.keys())];
    throw validationError([
      {
        field: IMPORT_FILE_FIELD,
        message: `send the file in a form field named "${IMPORT_FILE_FIELD}"${fields.length ? `; the fields found are: ${fields.join(", ").slice(0, 200)}` : ""}`,
        requirement: `a file in the "${IMPORT_FILE_FIELD}" field`,
        provided: file === null ? null : "text",
      },
    ]);
  }
  const name = file instanceof File ? file.name : "";
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
  return { format, body: file.size === 0 ? null : file.stream() };
}

/** The file name's extension decides (a .csv from Windows often comes as application/vnd.ms-excel); else its type. */
export function formatOfFile(name: string, type: string): ImportFormat | null {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  if (ext === "csv" || ext === "txt") return "csv";
  if (ext === "xlsx") return "xlsx";
  if (ext) return null;
  if (CSV_TYPE.test(type)) return "csv";
  if (XLSX_TYPE.test(type)) return "xlsx";
  return null;
}
