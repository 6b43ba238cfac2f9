/** Minimal structured logger: JSON lines (default off a TTY) or a short human line. */
import { writeSync } from "node:fs";

export type LogFormat = "json" | "pretty";
export type LogLevel = "info" | "warn" | "error";

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * API keys (txwire_sk_ + 40 alphanumerics) are never logged whole: keep the prefix and the last 4
 * characters of anything that starts like a key (nothing of a short one).
 */
// Idempotent: an already redacted "txwire_sk_…abcd" is left as it is. Any case: an upper-cased
// key is refused, but it is still the key.
const KEY_IN_TEXT = /txwire_sk_(?!…)[A-Za-z0-9]*/gi;
/** A run of word characters with at least one %XX in it: where an encoded key would hide. */
const ENCODED_RUN = /(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})*%[0-9A-Fa-f]{2}(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})*/g;
/** Percent-decoding repeated until stable (at most 3 times). */
function decodeRun(run: string): string {
  let out = run;
  for (let i = 0; i < 3 && out.includes("%"); i++) {
    let next: string;
    try {
      next = decodeURIComponent(out);
    } catch {
      // Not valid UTF-8 as a whole: decode the ASCII escapes (all a key is made of) one by one.
      next = out.replace(/%([0-7][0-9A-Fa-f])/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
    if (next === out) break;
    out = next;
  }
  return out;
}
const redactOne = (k: string) => (k.length >= 10 + 8 ? `txwire_sk_…${k.slice(-4)}` : "txwire_sk_…");
export function redactKeys(text: string): string {
  // A key with some characters percent-encoded (/v1/messages/%74xwire_sk_…) is a key too: such a
  // run is replaced by the redacted key alone (nothing decoded is written, so JSON stays valid).
  if (text.includes("%")) {
    text = text.replace(ENCODED_RUN, (run) => {
      const m = /txwire_sk_[A-Za-z0-9]*/i.exec(decodeRun(run));
      return m ? redactOne(m[0]) : run;
    });
  }
  return text.replace(KEY_IN_TEXT, redactOne);
}

/**
 * Lines are gathered and written once per event-loop turn: a commit batch answers tens of requests
 * in one turn, and their access lines go out in one write instead of one each. Anything still
 * gathered when the process exits is written synchronously then, so a clean stop loses nothing.
 */
export class LineBatcher {
  private lines: string[] = [];
  private scheduled = false;
  constructor(private readonly out: (text: string) => void) {}

  write(line: string) {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush() {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const text = this.lines.join("\n") + "\n";
    this.lines = [];
    this.out(text);
  }

  /** At exit: no more turns, so write what is left directly to the file descriptor. */
  flushSync(fd: number) {
    if (this.lines.length === 0) return;
    const text = this.lines.join("\n") + "\n";
    this.lines = [];
    try {
      writeSync(fd, text);
    } catch {}
  }
}

let stderrBatch: LineBatcher | undefined;
/** The process-wide batch of lines for stderr (flushed at exit). */
function stderrLines(): LineBatcher {
  if (!stderrBatch) {
    const batch = new LineBatcher((text) => process.stderr.write(text));
    process.on("exit", () => batch.flushSync(2));
    stderrBatch = batch;
  }
  return stderrBatch;
}

export function createLogger(format: LogFormat, write: (line: string) => void = (l) => stderrLines().write(l)): Logger {
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (format === "json") {
      write(redactKeys(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })));
    } else {
      const extra = fields ? " " + Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ") : "";
      write(redactKeys(`${new Date().toISOString()} ${level.toUpperCase()} ${msg}${extra}`));
    }
  };
  return {
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
