/**
 * Source text helpers shared by the fitness tests that read src/ (sql-location, sending-home,
 * stores-by-table).
 */
import { expect } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every .ts/.tsx file under `dir` (no declarations, no generated *.gen.ts, no node_modules). */
export function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "node_modules") sourceFiles(p, out);
    } else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts") && !name.endsWith(".gen.ts")) out.push(p);
  }
  return out;
}

/** A fitness check's findings: none expected; each printed on its own line when there are some. */
export function expectNone(what: string, found: string[]): void {
  if (found.length) console.error(`${what} (${found.length}):\n  ${found.join("\n  ")}`);
  expect(found).toEqual([]);
}

/**
 * The text with comments blanked out (same length, newlines kept, so offsets still give line
 * numbers), and string contents too when `strings` is set. Strings and regular expression
 * literals are skipped whole, so a URL's "//" in a string is not taken for a comment.
 */
export function blankComments(text: string, strings = false): string {
  const out = text.split("");
  let i = 0;
  let quote: string | null = null;
  while (i < text.length) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (strings && c !== "\n") out[i] = " ";
      if (c === "\\") {
        if (strings && text[i + 1] !== "\n") out[i + 1] = " ";
        i++;
      }
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      quote = c;
      i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (let j = i; j < stop; j++) if (out[j] !== "\n") out[j] = " ";
      i = stop;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      const stop = end < 0 ? text.length : end;
      for (let j = i; j < stop; j++) out[j] = " ";
      i = stop;
    } else if (c === "/" && /[=(,:!&|?;{}[\n]\s*$/.test(text.slice(Math.max(0, i - 20), i))) {
      // A regular expression literal: skip it whole (it may hold quotes).
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== "\n") {
        if (text[j] === "\\") j++;
        else if (text[j] === "[") inClass = true;
        else if (text[j] === "]") inClass = false;
        else if (text[j] === "/" && !inClass) break;
        j++;
      }
      i = j + 1;
    } else i++;
  }
  return out.join("");
}
