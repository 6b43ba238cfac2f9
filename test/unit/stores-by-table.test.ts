/**
 * Stores by table (docs/api-decisions.md, "The house, round two: stores by table"), checked on the
 * source text:
 * - every statement on the `messages` table is under src/db/stores/messages/, every one on
 *   `contacts` under src/db/stores/contacts/. A statement is on the table it writes (INSERT INTO,
 *   UPDATE, DELETE FROM) or reads at its top level (FROM, outside any parenthesis): a statement
 *   on another table that joins them or tests them in a subquery stays with its own table. The
 *   doctor's from-scratch recounts are the one module allowed to read them elsewhere (below).
 * - outside src/db/, services get entities from the stores: no `=== 1` / `=== 0` on a stored
 *   flag column, no `JSON.parse(row.column)` of a stored JSON column, no cast of a raw query
 *   result (`.get(…) as T`, `.all(…) as T`).
 * SQL keywords are upper case in this code base, so prose ("texts from contacts") is not taken for SQL.
 * Each failure lists every offending file:line.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts") && !name.endsWith(".gen.ts")) out.push(p);
  }
  return out;
}

/** The text with comments blanked (same length and lines); strings are kept. */
export function withoutComments(text: string): string {
  return text.replace(/("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m, str) => (str ? m : m.replace(/[^\n]/g, " ")));
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** The tables (`messages`, `contacts`) each SQL string literal of the source is on, with its line. */
export function statementsOn(source: string): Array<{ table: "messages" | "contacts"; line: number }> {
  const text = withoutComments(source);
  const out: Array<{ table: "messages" | "contacts"; line: number }> = [];
  for (const m of text.matchAll(/`(?:[^`\\]|\\.)*`|"(?:[^"\\\n]|\\.)*"/g)) {
    let sql = m[0].slice(1, -1).replace(/\$\{[^{}]*\}/g, "x");
    // Drop every parenthesised part (subqueries, CTE bodies, column lists): what is left is the statement's own level.
    for (let prev = ""; prev !== sql; ) [prev, sql] = [sql, sql.replace(/\([^()]*\)/g, " ")];
    const re = /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM|FROM)\s+(messages|contacts)\b(?![\w$-])/g;
    for (const t of sql.matchAll(re)) out.push({ table: t[1].toLowerCase() as "messages" | "contacts", line: lineOf(text, m.index!) });
  }
  return out;
}

/** Outside their folders, the modules allowed to read these tables, and why. */
const READERS_ELSEWHERE: Record<string, string> = {
  // `textwire doctor` recounts every derived structure from scratch and compares (read-only on both tables).
  "src/db/doctor-checks.ts": "the doctor's recounts",
};

const HOMES = { messages: "src/db/stores/messages/", contacts: "src/db/stores/contacts/" } as const;

describe("the statement detector", () => {
  test("finds writes and top-level reads, in template and plain strings", () => {
    const src = [
      'const a = "INSERT INTO messages (id) VALUES (?)";',
      "const b = `UPDATE contacts SET x = ${y} WHERE id = ?`;",
      'const c = "DELETE FROM messages WHERE id = ?";',
      "const d = `WITH e AS (SELECT 1 FROM forms) SELECT count(*) FROM contacts c WHERE c.x IN (${ids.map(() => \"?\").join(\",\")})`;",
      'const e = "INSERT OR IGNORE INTO contacts (id) VALUES (?)";',
    ].join("\n");
    expect(statementsOn(src)).toEqual([
      { table: "messages", line: 1 },
      { table: "contacts", line: 2 },
      { table: "messages", line: 3 },
      { table: "contacts", line: 4 },
      { table: "contacts", line: 5 },
    ]);
  });

  test("leaves joins, subqueries, other tables, comments and words in prose alone", () => {
    const src = [
      "const a = `SELECT s.id FROM automation_run_steps s LEFT JOIN messages m ON m.id = s.message_id`;",
      'const b = "SELECT * FROM broadcasts b WHERE EXISTS (SELECT 1 FROM messages m WHERE m.broadcast_id = b.id)";',
      'const c = "SELECT * FROM message_counts"; const d = "DELETE FROM contacts_fts";',
      '// db.run("DELETE FROM messages")',
      'const e = "Texts from contacts who opted out are not sent";',
      "const f = `(SELECT COUNT(*) FROM messages m WHERE m.recipient_phone = c.phone_number) >= ?`;",
    ].join("\n");
    expect(statementsOn(src)).toEqual([]);
  });
});

describe("statements on messages and contacts live in their stores", () => {
  const files = sourceFiles(join(ROOT, "src")).map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, "utf8") }));

  test("is read from the source (sanity: the homes hold the statements)", () => {
    const home = (t: "messages" | "contacts") => files.filter((f) => f.path.startsWith(HOMES[t])).flatMap((f) => statementsOn(f.text).filter((s) => s.table === t));
    expect(home("messages").length).toBeGreaterThan(20);
    expect(home("contacts").length).toBeGreaterThan(10);
  });

  test("every statement on messages is under stores/messages/, on contacts under stores/contacts/", () => {
    const offenders = files
      .filter((f) => !f.path.startsWith("src/db/schema/") && !(f.path in READERS_ELSEWHERE))
      .flatMap((f) => statementsOn(f.text).filter((s) => !f.path.startsWith(HOMES[s.table])).map((s) => `${f.path}:${s.line}: a statement on ${s.table}`));
    if (offenders.length) console.error(`Statements outside their table's store (${offenders.length}):\n  ${offenders.join("\n  ")}`);
    expect(offenders).toEqual([]);
  });

  test("the modules allowed elsewhere still read them (the list stays true)", () => {
    for (const path of Object.keys(READERS_ELSEWHERE)) {
      const f = files.find((x) => x.path === path);
      expect(f && statementsOn(f.text).length).toBeGreaterThan(0);
    }
  });
});
