/**
 * The house's fitness rules for size and wiring (docs/architecture.md, "Wiring"):
 * - no source file in src/ is over 500 lines, generated ones (*.gen.ts) aside;
 * - no placeholder standing in for a part built later (`undefined as unknown as`);
 * - src/wiring builds each part whole: it never sets a field of a part after building it (a
 *   cycle is broken by a callback given at construction or by a subscription), and declares the
 *   start and stop order in one list.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");
const MAX_LINES = 500;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const files = sourceFiles(SRC).map((path) => ({ path, rel: relative(SRC, path), text: readFileSync(path, "utf8") }));
const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/** Assignments to a property of something (`a.b = …`, `a.b.c ??= …`), comparisons and arrows aside. */
const FIELD_ASSIGNMENT = /^\s*[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\s*(?:[-+*/?|&]{0,2})=(?![=>])/;

describe("the size and wiring of src/", () => {
  test("is read from the source (sanity)", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.rel === join("wiring", "index.ts"))).toBe(true);
  });

  test(`no source file is over ${MAX_LINES} lines (generated ones aside)`, () => {
    const long = files.filter((f) => !f.rel.endsWith(".gen.ts") && lineCount(f.text) > MAX_LINES).map((f) => `${f.rel}: ${lineCount(f.text)} lines`);
    expect(long).toEqual([]);
  });

  test("no placeholder stands in for a part built later", () => {
    const found = files.filter((f) => f.text.includes("undefined as unknown as")).map((f) => f.rel);
    expect(found).toEqual([]);
  });

  test("the wiring never sets a field of a part after building it", () => {
    const found: string[] = [];
    for (const f of files.filter((x) => x.rel.startsWith("wiring"))) {
      f.text.split("\n").forEach((line, i) => {
        if (FIELD_ASSIGNMENT.test(line)) found.push(`${f.rel}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  test("the assignment finder finds what it must and nothing else", () => {
    for (const line of ["deps.devices.inbound = x;", "  writer.timing = t", "a.b ??= c", "x.y += 1"]) expect(FIELD_ASSIGNMENT.test(line)).toBe(true);
    for (const line of ["const a = b.c;", "a.b === c", "a.b => c", "  on: (x) => y,", "f(a.b = 1)"]) expect(FIELD_ASSIGNMENT.test(line)).toBe(false);
  });

  test("the start and stop order is declared once, in src/wiring/lifecycle.ts", () => {
    const pushers = files
      .filter((f) => /lifecycle\.(push|unshift|splice)\(/.test(f.text))
      .map((f) => f.rel);
    expect(pushers).toEqual([]);
    const declared = files.filter((f) => /export function startStopOrder\(/.test(f.text)).map((f) => f.rel);
    expect(declared).toEqual([join("wiring", "lifecycle.ts")]);
  });
});
