import type { Database } from "bun:sqlite";
import { ConfigError, OPTIONS, resolveOptions, type Env, type ParsedArgs } from "../config";
export { withDb } from "../db/open";

export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Env;
  isTTY: boolean;
}

export class UsageError extends ConfigError {}

/** --db (flag > TEXTWIRE_DB > ./data/textwire.db), shared by every command. */
export function dbPathOf(parsed: ParsedArgs, env: Env, extraFlags: string[]): string {
  const globals = OPTIONS.filter((o) => o.global);
  return resolveOptions(parsed, globals, env, extraFlags).db as string;
}


export function flagString(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.flags.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

export function flagInt(parsed: ParsedArgs, name: string): number | undefined {
  const v = flagString(parsed, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name}: expected a whole number, got "${v}"`);
  return Number(v);
}

/** Fixed-width table for humans; --json prints machine output instead. */
export function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  const cells = rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? "-" : String(r[c]))));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  return [line(cols), ...cells.map(line)].join("\n");
}
