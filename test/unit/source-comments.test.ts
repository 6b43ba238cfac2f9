/**
 * Comments speak of the repository: a decision is cited by its section in docs/ (e.g.
 * docs/api-decisions.md, "Public forms"), never by an issue number or a document a reader of
 * this repository does not have. A static read of the source, no server.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "..", "..");
const SOURCE = /\.(ts|tsx|js|mjs|css|html|sh|service)$/;

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (SOURCE.test(e.name)) out.push(p);
  }
  return out;
}

const sources = ["src", "web", "scripts", "test"]
  .flatMap((d) => files(join(root, d)))
  .filter((f) => f !== import.meta.path);

/** The comment part of a line: from a leading `*`, `#`, or the first `//`, `/*`, `{/*`, `<!--`. */
function commentOf(line: string): string | null {
  const t = line.trimStart();
  if (t.startsWith("*") || t.startsWith("#")) return t;
  const at = [line.indexOf("//"), line.indexOf("/*"), line.indexOf("<!--")].filter((i) => i >= 0);
  return at.length > 0 ? line.slice(Math.min(...at)) : null;
}

const OUTSIDE_CITATION = /\b[Ii]ssues? #?\d+|\bCONTRACT\b|\bspec §|§ ?\d/;

describe("comments cite the repository's docs", () => {
  test("no comment cites an issue number, the contract or a spec section", () => {
    const found: string[] = [];
    for (const f of sources) {
      readFileSync(f, "utf8").split("\n").forEach((line, i) => {
        const c = commentOf(line);
        if (c !== null && OUTSIDE_CITATION.test(c)) found.push(`${relative(root, f)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  test("every cited section of docs/api-decisions.md exists", () => {
    const headings = readFileSync(join(root, "docs", "api-decisions.md"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("## "))
      .map((l) => l.slice(3).trim());
    const missing: string[] = [];
    let citations = 0;
    for (const f of sources) {
      // A citation may wrap: join comment continuation lines before reading it.
      const text = readFileSync(f, "utf8").replace(/\n\s*(\*(?!\/)|\/\/)\s*/g, " ");
      for (const m of text.matchAll(/api-decisions\.md,\s*"([^"]+)"/g)) {
        citations++;
        const cited = m[1]!.replace(/\s+/g, " ").replace(/[.…]+$/, "").trim();
        if (!headings.some((h) => h.startsWith(cited))) missing.push(`${relative(root, f)}: "${cited}"`);
      }
    }
    expect(missing).toEqual([]);
    expect(citations).toBeGreaterThan(10); // the pattern still finds the citations
  });
});
