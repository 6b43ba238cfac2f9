/**
 * Reads the first sheet of an .xlsx workbook in the browser, as rows of text, for the import's
 * column-mapping step and preview (Contacts → Import). A workbook is a zip of XML files: the zip is
 * read here (stored or deflated entries, inflated by the browser's own DecompressionStream) and
 * the XML by DOMParser, so the dashboard needs no spreadsheet library (exceljs alone would be
 * several times the whole dashboard's JavaScript). Values are the cells' text as stored: numbers
 * as written, shared and inline strings, booleans as TRUE/FALSE; formulas give their cached value.
 */

/** Rows read for the mapping step; the server's own import limits still apply to what is sent. */
export const XLSX_MAX_ROWS = 100_000;

export class XlsxError extends Error {}

interface Entry {
  method: number;
  compressedSize: number;
  localOffset: number;
}

const EOCD_SIG = 0x06054b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;

function centralDirectory(buf: ArrayBuffer): Map<string, Entry> {
  const v = new DataView(buf);
  // The end-of-central-directory record sits in the last 22 bytes + up to 64 KiB of comment.
  let eocd = -1;
  for (let i = buf.byteLength - 22; i >= Math.max(0, buf.byteLength - 22 - 65_535); i--) {
    if (v.getUint32(i, true) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new XlsxError("This file is not an Excel workbook (.xlsx). Save it as .xlsx or CSV and try again.");
  const count = v.getUint16(eocd + 10, true);
  let p = v.getUint32(eocd + 16, true);
  const names = new TextDecoder();
  const out = new Map<string, Entry>();
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.byteLength || v.getUint32(p, true) !== CENTRAL_SIG) throw new XlsxError("This workbook is damaged: its list of parts cannot be read.");
    const method = v.getUint16(p + 10, true);
    const compressedSize = v.getUint32(p + 20, true);
    const nameLen = v.getUint16(p + 28, true);
    const extraLen = v.getUint16(p + 30, true);
    const commentLen = v.getUint16(p + 32, true);
    const localOffset = v.getUint32(p + 42, true);
    out.set(names.decode(new Uint8Array(buf, p + 46, nameLen)), { method, compressedSize, localOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

async function readEntry(buf: ArrayBuffer, e: Entry): Promise<string> {
  const v = new DataView(buf);
  if (v.getUint32(e.localOffset, true) !== LOCAL_SIG) throw new XlsxError("This workbook is damaged: a part cannot be read.");
  const start = e.localOffset + 30 + v.getUint16(e.localOffset + 26, true) + v.getUint16(e.localOffset + 28, true);
  const data = new Uint8Array(buf, start, e.compressedSize);
  if (e.method === 0) return new TextDecoder().decode(data);
  if (e.method !== 8) throw new XlsxError("This workbook uses a compression the dashboard cannot read; save it again as .xlsx or CSV.");
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

const xml = (text: string) => new DOMParser().parseFromString(text, "application/xml");
const all = (node: Document | Element, name: string) => Array.from(node.getElementsByTagNameNS("*", name));
/** A shared or inline string: its text runs, without phonetic guides (<rPh>). */
const stringOf = (si: Element) =>
  all(si, "t")
    .filter((t) => t.parentElement?.localName !== "rPh")
    .map((t) => t.textContent ?? "")
    .join("");

/** "BC12" → 54 (0-based column). */
function columnOf(ref: string | null, fallback: number): number {
  const m = ref ? /^([A-Z]+)/.exec(ref) : null;
  if (!m) return fallback;
  let n = 0;
  for (const ch of m[1]) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** The first worksheet's path, as the workbook lists its sheets. */
async function firstSheetPath(buf: ArrayBuffer, dir: Map<string, Entry>): Promise<string> {
  const wb = dir.get("xl/workbook.xml");
  const rels = dir.get("xl/_rels/workbook.xml.rels");
  if (wb && rels) {
    const sheet = all(xml(await readEntry(buf, wb)), "sheet")[0];
    const rid = sheet ? (sheet.getAttributeNS("http://schemas.openxmlformats.org/officeDocument/2006/relationships", "id") ?? sheet.getAttribute("r:id")) : null;
    const rel = all(xml(await readEntry(buf, rels)), "Relationship").find((r) => r.getAttribute("Id") === rid);
    const target = rel?.getAttribute("Target");
    if (target) return target.startsWith("/") ? target.slice(1) : `xl/${target}`;
  }
  const any = [...dir.keys()].filter((k) => /^xl\/worksheets\/[^/]+\.xml$/.test(k)).sort()[0];
  if (!any) throw new XlsxError("This workbook has no sheet to read.");
  return any;
}

/** The first sheet's rows (header first), each cell as text; empty rows left out. */
export async function readXlsxRows(file: Blob): Promise<string[][]> {
  const buf = await file.arrayBuffer();
  const dir = centralDirectory(buf);
  const sst = dir.get("xl/sharedStrings.xml");
  const shared = sst ? all(xml(await readEntry(buf, sst)), "si").map(stringOf) : [];
  const path = await firstSheetPath(buf, dir);
  const entry = dir.get(path);
  if (!entry) throw new XlsxError("This workbook's first sheet is missing.");
  const doc = xml(await readEntry(buf, entry));
  if (doc.getElementsByTagName("parsererror").length) throw new XlsxError("This workbook's first sheet cannot be read.");
  const rows: string[][] = [];
  for (const row of all(doc, "row")) {
    if (rows.length >= XLSX_MAX_ROWS) break;
    const out: string[] = [];
    all(row, "c").forEach((c, i) => {
      const t = c.getAttribute("t");
      const raw = all(c, "v")[0]?.textContent ?? "";
      const value =
        t === "s" ? (shared[Number(raw)] ?? "") : t === "inlineStr" ? stringOf(all(c, "is")[0] ?? c) : t === "b" ? (raw === "1" ? "TRUE" : "FALSE") : raw;
      const col = columnOf(c.getAttribute("r"), out.length || i);
      while (out.length < col) out.push("");
      out[col] = value;
    });
    if (out.some((x) => x.trim() !== "")) rows.push(out);
  }
  return rows;
}
