/**
 * Opt-outs have one home (docs/api-decisions.md, "One home per rule: opt-outs and contacts"):
 * src/services/opt-outs.ts makes every opt-out and opt-in decision and is the only module that
 * writes the opt-out state. Checked on the source: the store functions that write it, or cancel
 * and suppress messages because of it, are imported by opt-outs.ts alone, and no SQL elsewhere
 * sets contacts.opted_out / opted_out_at.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");
const HOME = "services/opt-outs.ts";

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const files = sourceFiles(SRC).map((p) => ({ path: relative(SRC, p), text: readFileSync(p, "utf8") }));

/** The names a file imports (`import { a, b as c } from "…"`), type-only imports included. */
function importedNames(text: string): string[] {
  return [...text.matchAll(/^[ \t]*import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+["'][^"']+["']/gm)].flatMap((m) =>
    m[1].split(",").map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]).filter(Boolean),
  );
}

describe("opt-outs have one home", () => {
  test("only opt-outs.ts calls the store functions that write the opt-out or act on it", () => {
    const guarded = ["writeOptOut", "optOutOf", "cancelQueuedTo", "optOutConfirmedSince", "suppressedAtLease", "cancelSuppressed", "appendConsentEntry"];
    const offenders = files
      .filter((f) => f.path !== HOME && !f.path.startsWith("db/"))
      .flatMap((f) => importedNames(f.text).filter((n) => guarded.includes(n)).map((n) => `${f.path} imports ${n}`));
    expect(offenders).toEqual([]);
    // and opt-outs.ts does use them (the check above would pass if they were renamed away)
    const home = files.find((f) => f.path === HOME)!;
    expect(importedNames(home.text)).toEqual(expect.arrayContaining(guarded));
  });

  test("no SQL outside the contacts store sets opted_out or opted_out_at", () => {
    const writes = /\bSET\b[^;`"]*?\bopted_out(?:_at)?\s*=|INSERT\s+INTO\s+contacts\s*\([^)]*\bopted_out/i;
    const offenders = files
      .filter((f) => f.path !== "db/stores/contacts/index.ts" && f.path !== "db/migrations.gen.ts" && !f.path.startsWith("db/schema/"))
      .filter((f) => writes.test(f.text))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
    expect(writes.test(files.find((f) => f.path === "db/stores/contacts/index.ts")!.text)).toBe(true);
  });

  test("the keyword decision is made in opt-outs.ts alone", () => {
    const decides = /keyword\s*===\s*"opt-(?:out|in)"/;
    expect(files.filter((f) => decides.test(f.text)).map((f) => f.path)).toEqual([HOME]);
  });
});
