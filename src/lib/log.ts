/** Minimal structured logger: JSON lines (default off a TTY) or a short human line. */
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
// Idempotent: an already redacted "txwire_sk_…abcd" is left as it is.
const KEY_IN_TEXT = /txwire_sk_(?!…)[A-Za-z0-9]*/g;
export function redactKeys(text: string): string {
  return text.replace(KEY_IN_TEXT, (k) => (k.length >= 10 + 8 ? `txwire_sk_…${k.slice(-4)}` : "txwire_sk_…"));
}

export function createLogger(format: LogFormat, write: (line: string) => void = (l) => process.stderr.write(l + "\n")): Logger {
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
