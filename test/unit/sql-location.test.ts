/**
 * Where SQL and row types live (docs/api-decisions.md, "One home per rule: stores for accounts,
 * forms, sessions, keys, broadcasts; statuses in one module"), checked on the source text:
 * - no SQL call outside src/db/: a `.prepare(`/`.query(`/`.run(`/`.exec(` on a database handle
 *   (`sqlite`, `db`, `tx`, `database`, `$client`), any of them given an SQL string, drizzle's
 *   builder on a handle (`db.select(`…), or a value import of drizzle-orm;
 * - no file-level `interface …Row` / `type …Row = …` outside src/db/ (in src/ and web/): row types
 *   are derived from the drizzle schema in the stores;
 * - the test scripts by speed exist, and `npm test` still runs them all.
 * (src/db importing nothing from services/ or http/ is checked in architecture.test.ts.)
 * Each failure lists every offending file:line.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { blankComments, expectNone, sourceFiles } from "./source-text";

const ROOT = resolve(import.meta.dir, "../..");

const SQL_WORD = "(?:SELECT|INSERT|UPDATE|DELETE|WITH|PRAGMA|CREATE|DROP|ALTER|VACUUM|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|REPLACE|ANALYZE|REINDEX|ATTACH|DETACH)\\b";
/** A handle on the database: the bun:sqlite connection or the drizzle wrapper, however reached (`this.sqlite`, `deps.db`, `db.$client`). */
const HANDLE = "(?<![\\w$])(?:sqlite|db|tx|database|\\$client)";
/** What each detector matches, whether it reads string contents, and its pattern. */
const DETECTORS: Array<[string, boolean, RegExp]> = [
  ["SQL call on a database handle", false, new RegExp(`${HANDLE}\\s*\\.\\s*(?:prepare|query|run|exec)\\s*(?:<[^()]*>)?\\(`, "g")],
  ["SQL string given to a statement call", true, new RegExp(`\\.\\s*(?:prepare|query|run|exec)\\s*(?:<[^()]*>)?\\(\\s*[\`"']\\s*${SQL_WORD}`, "gi")],
  ["drizzle query builder on a database handle", false, new RegExp(`${HANDLE}\\s*\\.\\s*(?:select|selectDistinct|insert|update|delete)\\s*\\(`, "g")],
  ["drizzle-orm imported for values (query building)", true, /^[ \t]*import\s+(?!type\b)[^;]*?from\s+["']drizzle-orm(?:\/[^"']*)?["']/gm],
];

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** `file:line: what — the line` for every SQL call found in the text. */
export function sqlCalls(file: string, source: string): string[] {
  const texts = { withStrings: blankComments(source), code: blankComments(source, true) };
  const lines = source.split("\n");
  const found = new Map<number, string>();
  for (const [what, readsStrings, re] of DETECTORS) {
    const text = readsStrings ? texts.withStrings : texts.code;
    for (const m of text.matchAll(re)) {
      const line = lineOf(text, m.index!);
      if (!found.has(line)) found.set(line, `${file}:${line}: ${what} — ${lines[line - 1].trim().slice(0, 120)}`);
    }
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

const ROW_TYPE = /^[ \t]*(?:export\s+)?(?:declare\s+)?(?:interface\s+\w*Row\b|type\s+\w*Row\s*(?:<[^>]*>)?\s*=)/gm;

/** `file:line` of each file-level hand-written row type. */
export function rowTypes(file: string, source: string): string[] {
  const text = blankComments(source);
  return [...text.matchAll(ROW_TYPE)].map((m) => `${file}:${lineOf(text, m.index!)}: ${m[0].trim()}`);
}

const outsideDb = (p: string) => !relative(ROOT, p).startsWith("src/db/");

describe("the SQL call detector", () => {
  test("finds calls on a handle, SQL strings, drizzle's builder and value imports", () => {
    const src = [
      'const a = this.sqlite.query("SELECT 1").get();',
      "const b = deps.sqlite",
      "  .prepare<{ n: number }, [string]>(`UPDATE x SET y = 1`);",
      'peek.exec("PRAGMA user_version");',
      "const c = this.db.select().from(forms).all();",
      "db.$client.run(step);",
      'import { and, eq } from "drizzle-orm";',
      "stmt.run( `  insert into t values (1)`);",
    ].join("\n");
    expect(sqlCalls("f.ts", src).map((s) => s.split(":")[1])).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
  });

  test("leaves RegExp.exec, store calls, other run/prepare methods, comments and type imports alone", () => {
    const src = [
      "const m = /^Bearer\\s+(.+)$/i.exec(h.trim());",
      "const n = NAME.exec(name);",
      "for (let m = IPV4_RE.exec(t); m !== null; m = IPV4_RE.exec(t)) {}",
      "const rows = listForms(this.db, accountId, q);",
      "await extra.run(parsed, io);",
      "routeTable.prepare();",
      "const x = deps.exports.prepare(accountId, query);",
      '// sqlite.query("SELECT 1") in a comment',
      '/* db.run("DELETE FROM t") */',
      'import type { InferSelectModel } from "drizzle-orm";',
      'const url = "http://db.query(x)"; // db.exec("DROP TABLE t")',
      'const re = /["\']/g; const s = "db.run(";',
      "this.touch.run(now, id); // a prepared statement handed out by a store",
    ].join("\n");
    expect(sqlCalls("f.ts", src)).toEqual([]);
  });

  test("row types: interfaces and aliases named …Row at file level", () => {
    const src = ["export interface ContactRow {", "  id: string;", "}", "type FormRow = typeof forms.$inferSelect;", "type Rowing = string;", "// interface FakeRow {"].join("\n");
    expect(rowTypes("f.ts", src)).toEqual(["f.ts:1: export interface ContactRow", "f.ts:4: type FormRow ="]);
  });
});

describe("SQL and row types live in src/db", () => {
  const srcFiles = sourceFiles(join(ROOT, "src"));
  test("is read from the source (sanity: the stores are found and hold SQL)", () => {
    const store = join(ROOT, "src/db/stores/accounts.ts");
    expect(srcFiles).toContain(store);
    expect(sqlCalls("accounts.ts", readFileSync(store, "utf8")).length).toBeGreaterThan(5);
  });

  test("no SQL call outside src/db", () => {
    const offenders = srcFiles.filter(outsideDb).flatMap((f) => sqlCalls(relative(ROOT, f), readFileSync(f, "utf8")));
    expectNone("SQL outside src/db", offenders);
  });

  test("no file-level …Row interface or type outside src/db (src/ and web/)", () => {
    const files = [...srcFiles, ...sourceFiles(join(ROOT, "web"))].filter(outsideDb);
    const offenders = files.flatMap((f) => rowTypes(relative(ROOT, f), readFileSync(f, "utf8")));
    expectNone("Row types outside src/db", offenders);
  });
});

describe("test scripts by speed", () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  test("test:unit, test:api, test:browser and test:slow each run their folder", () => {
    for (const kind of ["unit", "api", "browser", "slow"]) {
      expect(scripts[`test:${kind}`]).toMatch(new RegExp(`\\bbun test\\b.*\\./test/${kind}\\b`));
    }
  });

  test("npm test still runs every test (no folder given)", () => {
    expect(scripts.test).toMatch(/\bbun test\b(?![^&]*\.\/test\/)/);
  });
});
