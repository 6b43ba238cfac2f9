/**
 * A streaming CSV reader for imports: text goes in a piece at a time (`push`), complete rows come
 * out; memory stays bounded by the piece plus one row, whatever the file holds. A cell longer
 * than `maxCell` characters is not kept: its row comes out with `error` set (the rest of the file
 * goes on), so a single 50 MB cell costs nothing but the time to skip it.
 *
 * RFC 4180 as spreadsheets write it: `"` quotes a cell, `""` inside quotes is one `"`, line ends
 * are \r\n, \n or \r. The delimiter is the one of `,` `;` tab `|` the header line uses most
 * (European Excel writes `;`), `,` when it has none. Rows whose cells are all blank are skipped,
 * as papaparse's `skipEmptyLines: "greedy"` did. A leading byte-order mark is dropped.
 *
 * Pure: no I/O, no clock.
 */

export interface CsvRecord {
  cells: string[];
  /** Why the row cannot be trusted (malformed quoting, an over-long cell); its cells are partial. */
  error?: string;
}

const DELIMITERS = [",", ";", "\t", "|"] as const;
/** How much of the file may pass without a line end before the delimiter is settled on `,`. */
const HEADER_SCAN_CHARS = 65_536;

const QUOTE = 34;
const LF = 10;
const CR = 13;

export class CsvRowReader {
  private delimiter: number | null = null;
  private pending = ""; // text held back until the delimiter is known
  private started = false;
  private cells: string[] = [];
  private cell = "";
  private cellLen = 0;
  private cellDropped = false;
  private rowError: string | undefined;
  private inQuotes = false;
  private afterQuote = false; // just read the closing quote of a quoted cell
  private cellQuoted = false;
  private skipLf = false; // a \r ended the row: a \n right after it belongs to the same line end
  private out: CsvRecord[] = [];

  constructor(private readonly maxCell: number) {}

  /** Feeds the next piece of text; returns the rows it completed. */
  push(text: string): CsvRecord[] {
    if (!this.started) {
      this.pending += text;
      if (this.pending.length > 0 && this.pending.charCodeAt(0) === 0xfeff) this.pending = this.pending.slice(1);
      if (this.delimiter === null) {
        const nl = this.pending.search(/[\r\n]/);
        if (nl < 0 && this.pending.length < HEADER_SCAN_CHARS) return [];
        this.delimiter = guessDelimiter(nl < 0 ? this.pending : this.pending.slice(0, nl));
      }
      this.started = true;
      text = this.pending;
      this.pending = "";
    }
    this.scan(text);
    return this.take();
  }

  /** The end of the text: returns the last rows (an open quote makes its row an error). */
  end(): CsvRecord[] {
    if (!this.started) {
      this.started = true;
      this.delimiter ??= guessDelimiter(this.pending);
      const rest = this.pending;
      this.pending = "";
      this.scan(rest);
    }
    if (this.inQuotes) {
      this.rowError ??= "a quoted cell is never closed (unterminated quote)";
      this.inQuotes = false;
    }
    if (this.cells.length > 0 || this.cellLen > 0 || this.cellQuoted || this.rowError) this.endRow();
    return this.take();
  }

  private take(): CsvRecord[] {
    const rows = this.out;
    this.out = [];
    return rows;
  }

  private append(text: string, from: number, to: number) {
    if (to <= from) return;
    this.cellLen += to - from;
    if (this.cellDropped) return;
    if (this.cellLen > this.maxCell) {
      this.cellDropped = true;
      this.cell = "";
      this.rowError ??= `a cell is longer than ${this.maxCell} characters`;
      return;
    }
    this.cell += text.slice(from, to);
  }

  private endCell() {
    this.cells.push(this.cell);
    this.cell = "";
    this.cellLen = 0;
    this.cellDropped = false;
    this.cellQuoted = false;
    this.afterQuote = false;
  }

  private endRow() {
    this.endCell();
    const cells = this.cells;
    this.cells = [];
    const error = this.rowError;
    this.rowError = undefined;
    if (!error && cells.every((c) => c.trim() === "")) return;
    this.out.push(error ? { cells, error } : { cells });
  }

  private scan(text: string) {
    const delim = this.delimiter!;
    const n = text.length;
    let i = 0;
    if (this.skipLf && n > 0) {
      if (text.charCodeAt(0) === LF) i = 1;
      this.skipLf = false;
    }
    let segStart = i; // start of the cell text not yet appended
    while (i < n) {
      const c = text.charCodeAt(i);
      if (this.inQuotes) {
        // Fast path: jump to the next quote.
        const q = text.indexOf('"', i);
        if (q < 0) {
          this.append(text, segStart, n);
          return;
        }
        this.append(text, segStart, q);
        this.inQuotes = false;
        this.afterQuote = true;
        i = q + 1;
        segStart = i;
        continue;
      }
      if (this.afterQuote) {
        if (c === QUOTE) {
          // "" inside a quoted cell: one literal quote, still quoted.
          this.append(text, i, i + 1);
          this.inQuotes = true;
          this.afterQuote = false;
          i++;
          segStart = i;
          continue;
        }
        if (c !== delim && c !== LF && c !== CR) {
          this.rowError ??= "a quoted cell has text after its closing quote";
          this.afterQuote = false;
          // Keep the stray text as part of the cell, as it was written.
        }
      }
      if (c === delim) {
        this.append(text, segStart, i);
        this.endCell();
        i++;
        segStart = i;
        continue;
      }
      if (c === LF || c === CR) {
        this.append(text, segStart, i);
        this.endRow();
        i++;
        if (c === CR) {
          if (i < n) {
            if (text.charCodeAt(i) === LF) i++;
          } else this.skipLf = true;
        }
        segStart = i;
        continue;
      }
      if (c === QUOTE && this.cellLen === 0 && segStart === i && !this.cellQuoted && !this.afterQuote) {
        this.inQuotes = true;
        this.cellQuoted = true;
        i++;
        segStart = i;
        continue;
      }
      if (this.afterQuote) this.afterQuote = false;
      i++;
    }
    this.append(text, segStart, n);
  }
}

/** The delimiter the header line uses most, outside quotes; `,` when none appears. */
export function guessDelimiter(line: string): number {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (DELIMITERS as readonly string[]).includes(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  let best: string = ",";
  let most = 0;
  for (const d of DELIMITERS) {
    const k = counts.get(d) ?? 0;
    if (k > most) (best = d), (most = k);
  }
  return best.charCodeAt(0);
}
