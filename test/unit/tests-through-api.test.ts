/**
 * Tests through the API (docs/development.md, "The code and the tests"), checked on the text of
 * the tests themselves:
 * - an API test (test/api/**) reaches past HTTP only to arrange a state the API cannot make. Every
 *   raw SQL use (`.query(`, `.prepare(`, a `.run(`/`.exec(` of SQL or on a connection,
 *   `running.deps.sqlite`, `new Database(`) and every `running.deps.<part>` use (directly or
 *   through a name bound to it) carries `// arrange: <why the API cannot make this>` on its line
 *   or in the comment right above its statement. Fixture builders in test/helpers/ that take the
 *   whole `running.deps` say why in their own doc.
 * - no `expect(…)` reads a SQL result or a service: neither a use nor a name bound from one
 *   (`const row = … .get()`, `const rows = (sql) => …sqlite…`) appears in an assertion, arrange
 *   comment or not. What a request changed is read back through the API (test/helpers/reads.ts).
 *   One oracle is let through, by name: SQLite's `SELECT total_changes()` on the server's
 *   connection, the only way to see that a refused request changed nothing in any table, when the
 *   name bound to it carries `// oracle: <why no answer can show it>` (ORACLE below). Any other
 *   SQL under that mark is reported as before.
 * - test files are named after what they test: a test/api file after a route module
 *   (`<module>[-<concern>].test.ts`, src/http/routes/), one in test/api/thirdparty/ after a module
 *   of src/http/routes/thirdparty/, or it sits in a concern folder (CONCERNS below); a file in a
 *   test/unit folder after a module or folder of src/, web/ or scripts/ (the files at the top of
 *   test/unit are the code base's fitness tests, this one among them); a file in test/services
 *   (a running server's internals, read inside: what no answer shows) after a module of src/.
 * test/services and test/db are not API tests: they read inside on purpose and are not scanned.
 * Each failure lists every offending file:line.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { blankComments, sourceFiles } from "./source-text";

const ROOT = resolve(import.meta.dir, "../..");

export interface Reach {
  line: number;
  /** "unmarked": a use without its arrange comment; "asserted": an expect that reads SQL or a service. */
  kind: "unmarked" | "asserted";
  text: string;
}

/** The one read `// oracle:` may mark: "nothing changed", as SQLite counts every row written. */
const ORACLE = /\bSELECT\s+total_changes\(\)\s+AS\s+\w+\s*["'\x60]/i;

const SQL_WORD = String.raw`(?:SELECT|INSERT|UPDATE|DELETE|WITH|PRAGMA|CREATE|DROP|ALTER|REPLACE|BEGIN|COMMIT|VACUUM|ATTACH)\b`;
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const alt = (names: Iterable<string>) => [...names].map(esc).join("|");

/** Offsets of `open`'s matching close in `code` (strings blanked), or the text's end. */
function matching(code: string, open: number): number {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (pairs[c]) stack.push(pairs[c]);
    else if (c === ")" || c === "}" || c === "]") {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return code.length;
}

/**
 * Where a test's source reaches past HTTP, and which of those uses are not marked as arranging a
 * state or feed an assertion.
 */
export function reachesPastHttp(source: string): Reach[] {
  const code = blankComments(source); // strings kept: SQL is recognised by its text
  const bare = blankComments(source, true); // strings blanked too: for brackets and names
  const lines = source.split("\n");
  const codeLines = code.split("\n");
  const lineAt = (i: number) => code.slice(0, i).split("\n").length;

  const lineStart: number[] = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === "\n") lineStart.push(i + 1);

  // Blocks, for the scope of a name: a name is known from its declaration to its block's end.
  const blocks: Array<[number, number]> = [];
  const open: number[] = [];
  for (let i = 0; i < bare.length; i++) {
    if (bare[i] === "{") open.push(i);
    else if (bare[i] === "}" && open.length) blocks.push([open.pop()!, i]);
  }
  const file: [number, number] = [0, bare.length];
  const scopeOf = (p: number): [number, number] => {
    let best = file;
    for (const b of blocks) if (b[0] < p && p < b[1] && b[0] >= best[0] && b[1] <= best[1]) best = b;
    return best;
  };

  // Names bound to the whole deps, or to the connection or one of its parts, in their scope.
  type Alias = { name: string; scope: [number, number] };
  const depsAliases: Alias[] = [];
  const partAliases: Alias[] = [];
  for (const m of bare.matchAll(/\b(?:const|let|var)\s+(\w+)\s*=\s*[\w.]*\brunning\.deps\s*(?=[;\n)])/g)) depsAliases.push({ name: m[1], scope: scopeOf(m.index!) });
  // A part itself (`= s.running.deps.queue;`, `= () => t.running.deps.sqlite;`), not a value read
  // from one (`= s.running.deps.queue.size()` is a read, followed below).
  for (const m of bare.matchAll(/\b(?:const|let|var)\s+(\w+)\s*=\s*(?:\(\)\s*=>\s*)?(?:[\w.]*\brunning\.deps\.\w+(?=\s*(?:[;\n)]|as\b|$))|new Database\()/g)) partAliases.push({ name: m[1], scope: scopeOf(m.index!) });
  for (const m of bare.matchAll(/\b(?:const|let|var)\s+\{([^}]*)\}\s*=\s*[\w.]*\brunning\.deps\b/g)) {
    for (const n of m[1].split(",")) {
      const name = n.split(":").pop()!.trim();
      if (name) partAliases.push({ name, scope: scopeOf(m.index!) });
    }
  }
  // Connections to what the API answered with (`// answer:` on the line or right above): their SQL reads the answer.
  const answerMarked = (p: number) => {
    const i = code.slice(0, p).split("\n").length - 1;
    if (/\/\/\s*answer:/.test(lines[i])) return true;
    for (let k = i - 1; k >= 0 && codeLines[k].trim() === "" && lines[k].trim() !== ""; k--) if (/\banswer:/.test(lines[k])) return true;
    return false;
  };
  const answers: Alias[] = [];
  for (const m of bare.matchAll(/\b(?:const|let|var)\s+(\w+)\s*=\s*new Database\(/g)) if (answerMarked(m.index!)) answers.push({ name: m[1], scope: scopeOf(m.index!) });
  for (let i = partAliases.length - 1; i >= 0; i--) if (answers.some((a) => a.name === partAliases[i].name && a.scope === partAliases[i].scope)) partAliases.splice(i, 1);
  const inScope = (list: Alias[], from: number, to: number) => list.filter((x) => x.scope[0] <= to && from <= x.scope[1]).map((x) => x.name);
  const isAlias = (name: string, at: number) => [...depsAliases, ...partAliases].some((x) => x.name === name && x.scope[0] <= at && at <= x.scope[1]);

  // The connection or deps handed to a fixture builder (`insertContact(db(), …)`) is arranging:
  // what the builder returns is an id, not a read. Only a member used (`.query(…).get()`,
  // `.queue.has(…)`) reads.
  const handedOn = (names: string[]) => new RegExp(String.raw`(?:[\w.]*\brunning\.deps(?:\.sqlite)?|(?<![\w.])(?:${alt([...names, "$none$"])})(?:\(\s*\))?)\s*(?=[,)])`, "g");
  const SQL_TEXT = new RegExp(String.raw`\.(?:run|exec)\(\s*[\x60'"]\s*${SQL_WORD}`, "i");
  /** Whether source[from, to) uses SQL or a service (names by their scope; SQL by its text). */
  const isUse = (from: number, to: number, passing = true): boolean => {
    const deps = inScope(depsAliases, from, to);
    const parts = inScope(partAliases, from, to);
    let b = bare.slice(from, to);
    let c = code.slice(from, to);
    const answered = inScope(answers, from, to);
    if (answered.length) {
      const re = new RegExp(String.raw`(?<![\w.])(?:${alt(answered)})\s*\.\s*\w+\(`, "g");
      b = b.replace(re, (x) => " ".repeat(x.length));
      c = c.replace(re, (x) => " ".repeat(x.length));
    }
    if (!passing) {
      const re = handedOn([...deps, ...parts]);
      b = b.replace(re, (x) => " ".repeat(x.length));
      c = c.replace(re, (x) => " ".repeat(x.length));
    }
    if (/\brunning\.deps\.\w+|\bnew Database\(|\{[^}]*\}\s*=\s*[\w.]*\brunning\.deps\b|\.(?:query|prepare)\(/.test(b)) return true;
    if (SQL_TEXT.test(c)) return true;
    if (deps.length && new RegExp(String.raw`(?<![\w.])(?:${alt(deps)})\.\w+`).test(b)) return true;
    return parts.length > 0 && new RegExp(String.raw`(?<![\w.])(?:${alt(parts)})\s*(?:\(\s*\))?\s*[.(]`).test(b);
  };
  const lineUses = (i: number) => isUse(lineStart[i], lineStart[i] + lines[i].length);

  const out: Reach[] = [];

  // 1. Every use carries its arrange comment: on its line, or above the statement it is part of.
  // `// answer: why` marks SQL over what the API answered with (a downloaded backup is a database
  // file, opened as the owner would open it): reading it is reading the answer.
  const MARK = /\/\/\s*(arrange|answer|oracle):/;
  type Mark = "arrange" | "answer" | "oracle";
  const markOf = (i: number, run = true): Mark | null => {
    const at = (l: string) => (MARK.exec(l)?.[1] as Mark | undefined) ?? null;
    if (at(lines[i])) return at(lines[i]);
    let j = i;
    if (!run) {
      for (let k = j - 1; k >= 0 && codeLines[k].trim() === "" && lines[k].trim() !== ""; k--) {
        const m = /\b(arrange|answer|oracle):/.exec(lines[k]);
        if (m) return m[1] as Mark;
      }
      return null;
    }
    // Walk up a statement that spans lines (a chained `.query(…)\n.run()`: lines that do not end
    // one) and a run of arranging statements right above it: one comment may head the run.
    while (j > 0 && codeLines[j - 1].trim() !== "" && (!/[;{}]\s*$/.test(codeLines[j - 1]) || lineUses(j - 1) || /\brunning\.deps\s*;\s*$/.test(codeLines[j - 1]))) {
      j--;
      if (at(lines[j])) return at(lines[j]);
    }
    for (let k = j - 1; k >= 0 && codeLines[k].trim() === "" && lines[k].trim() !== ""; k--) {
      const m = /\b(arrange|answer|oracle):/.exec(lines[k]);
      if (m) return m[1] as Mark;
    }
    return null;
  };
  // `// oracle:` marks nothing but a line that reads total_changes() (and nothing else past HTTP).
  const oracleLine = (i: number) =>
    ORACLE.test(codeLines[i]) && (codeLines[i].match(/\.query\(/g) ?? []).length === 1 && !/\.(?:run|exec|prepare)\(|\bnew Database\(|\brunning\.deps\.(?!sqlite\b)\w+/.test(codeLines[i]);
  codeLines.forEach((_, i) => {
    const mark = lineUses(i) ? markOf(i) : "none";
    if (mark === null || (mark === "oracle" && !oracleLine(i))) out.push({ line: i + 1, kind: "unmarked", text: lines[i].trim() });
  });

  // 2. Names bound from a use are results of SQL or a service, within the block that declares
  // them (a `body` read from SQL in one test does not taint another test's).
  // A read is a value bound straight from a use (`const row = d.sqlite.query(…).get()`) or a
  // function whose body uses (`const rows = (sql) => …sqlite…`, `function count() {…}`), or calls
  // such a function. A value computed from a read in turn is not followed (a table's rows built
  // from the route declarations are the test's input, not its result).
  const tainted: Array<{ name: string; scope: [number, number]; fn: boolean }> = [];
  const taintOf = (name: string, at: number) => tainted.find((t) => t.name === name && t.scope[0] <= at && at <= t.scope[1]);
  const declared: Array<{ names: string[]; at: number; from: number; to: number; fn: boolean; scope?: [number, number] }> = [];
  /** The bound expression from `start`: to the end of its statement (a `;` or line end outside brackets). */
  const boundEnd = (at: number, start: number) => {
    let k = start;
    let depth = 0;
    for (; k < bare.length; k++) {
      const c = bare[k];
      if ("([{".includes(c)) depth++;
      else if (")]}".includes(c)) {
        if (depth === 0) break;
        depth--;
      } else if ((c === ";" || c === "\n") && depth === 0 && !/(?:[=(,.?:&|+\-]|=>)\s*$/.test(bare.slice(at, k)) && !/^\s*[.?:&|]/.test(bare.slice(k + 1, k + 40))) break;
    }
    return k;
  };
  for (const m of bare.matchAll(/\b(?:const|let|var)\s+(\w+|\{[^}]*\}|\[[^\]]*\])\s*(=|\bof\b)/g)) {
    const names = m[1].replace(/[{}[\]]/g, "").split(",").map((n) => n.split(":").pop()!.replace(/=.*/, "").replace("...", "").trim()).filter(Boolean);
    const k = boundEnd(m.index!, m.index! + m[0].length);
    const fn = m[2] === "=" && /^\s*(?:async\s*)?(?:function\b|\([^()]*\)\s*(?::[^=]*)?=>|\w+\s*=>)/.test(bare.slice(m.index! + m[0].length, k));
    declared.push({ names, at: m.index!, from: m.index! + m[0].length, to: k, fn });
  }
  // A later assignment (`routes = s.running.deps.routes();` in a beforeAll) binds the name as its
  // declaration does, in the declaration's scope.
  const declaredNames: Array<{ names: string[]; at: number }> = [...declared];
  for (const m of bare.matchAll(/\b(?:let|var)\s+(\w+)\s*(?::[^;=\n]+)?(?=[;\n])/g)) declaredNames.push({ names: [m[1]], at: m.index! });
  for (const m of bare.matchAll(/(?:^|[;{}(]|\n)\s*(\w+)\s*=(?![=>])/g)) {
    const name = m[1];
    const at = m.index! + m[0].indexOf(name);
    if (/^(?:const|let|var)$/.test(bare.slice(Math.max(0, at - 6), at).trim())) continue;
    const decl = declaredNames.filter((d) => d.names.includes(name) && d.at < at).map((d) => scopeOf(d.at)).find((sc) => sc[0] <= at && at <= sc[1]);
    if (!decl) continue;
    const from = m.index! + m[0].length;
    declared.push({ names: [name], at, from, to: boundEnd(at, from), fn: false, scope: decl });
  }
  for (const m of bare.matchAll(/\b(?:async\s+)?function\s+(\w+)\s*\(/g)) {
    const body = bare.indexOf("{", matching(bare, m.index! + m[0].length - 1));
    if (body >= 0) declared.push({ names: [m[1]], at: m.index!, from: m.index!, to: matching(bare, body), fn: true });
  }
  /** Whether the text reads: a use, a call of a reading function, or (in an assertion) a read value. */
  const readsPast = (from: number, to: number, values: boolean) => {
    if (isUse(from, to, false)) return true;
    const text = bare.slice(from, to);
    for (const m of text.matchAll(/(?<![\w.])[A-Za-z_$][\w$]*/g)) {
      const t = taintOf(m[0], from + m.index!);
      if (t && (values || (t.fn && /^\s*\(/.test(text.slice(m.index! + m[0].length))))) return true;
    }
    return false;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const d of declared) {
      const mark = markOf(lineAt(d.at) - 1, false);
      if (mark === "answer") continue;
      // The oracle: a name bound to total_changes() alone, on one line, under its mark.
      if (mark === "oracle" && lineAt(d.at) === lineAt(d.to) && oracleLine(lineAt(d.at) - 1)) continue;
      const scope = d.scope ?? scopeOf(d.at);
      // A name for the connection or a part is itself a use where it is used (`d.query(…)`); passing
      // it to a fixture builder is arranging, so what the builder returns (an id) is not a read.
      const fresh = d.names.filter((n) => !isAlias(n, d.at) && !tainted.some((t) => t.name === n && t.scope === scope));
      if (fresh.length && readsPast(d.from, d.to, false)) {
        for (const name of fresh) tainted.push({ name, scope, fn: d.fn });
        changed = true;
      }
    }
  }

  // 3. No assertion reads a use or such a name: the expect's argument and its matchers' arguments.
  for (const m of bare.matchAll(/\bexpect\s*\(/g)) {
    let end = matching(bare, m.index! + m[0].length - 1);
    for (let chain; (chain = /^\s*\.\s*(?:not\s*\.\s*|resolves\s*\.\s*|rejects\s*\.\s*)*\w+\s*\(/.exec(bare.slice(end + 1))); ) {
      end = matching(bare, end + 1 + chain[0].length - 1);
    }
    if (readsPast(m.index!, end + 1, true)) {
      const line = lineAt(m.index!);
      out.push({ line, kind: "asserted", text: lines[line - 1].trim() });
    }
  }
  // A use inside an assertion is reported once, as the assertion.
  const asserted = new Set(out.filter((r) => r.kind === "asserted").map((r) => r.line));
  return out.filter((r) => r.kind === "asserted" || !asserted.has(r.line)).sort((a, b) => a.line - b.line);
}

describe("the detector", () => {
  test("finds unmarked SQL and service uses, directly and through names bound to them", () => {
    const src = [
      'const n = s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages").get();', // 1 unmarked
      "const d = s.running.deps;",
      'd.sqlite.run("UPDATE accounts SET x = 1");', // 3 unmarked
      "d.queue.insert(item);", // 4 unmarked
      "const db = () => t.running.deps.sqlite;", // 5 unmarked
      'db().exec("DELETE FROM contacts");', // 6 unmarked
      "const { queue } = s.running.deps;", // 7 unmarked
      "queue.size();", // 8 unmarked
      'const raw = new Database(path);', // 9 unmarked
      "s.running.deps", // 10: continues on the next line
      '  .sqlite.query("UPDATE forms SET a = 1").run();', // 11 unmarked
    ].join("\n");
    expect(reachesPastHttp(src).filter((r) => r.kind === "unmarked").map((r) => r.line)).toEqual([1, 3, 4, 5, 6, 7, 8, 9, 11]);
  });

  test("leaves marked arranges, fixture builders given the whole deps, and non-SQL exec/run alone", () => {
    const src = [
      "// arrange: a text sent a year ago (the API stamps the server's clock)",
      'd.sqlite.run("UPDATE messages SET sent_at = ? WHERE id = ?", old, id);',
      "const d = s.running.deps;",
      "const id = insertMessage(d, s.accountId, { status: \"sent\" });",
      "insertContact(s.running.deps, s.accountId, {});",
      "s.running.deps.queue.clear(); // arrange: a queue emptied as a crash leaves it",
      "/**",
      " * arrange: rows older than any request can make",
      " */",
      "s.running.deps.sqlite",
      '  .query("UPDATE contacts SET created_at = ?")',
      "  .run(old);",
      'const m = /(\\d+)/.exec(text); proc.run("ls"); expect(await listTotal(s, "/contacts")).toBe(3);',
      "// arrange: contacts with set creation times (the API stamps the server's clock)",
      "const db = () => s.running.deps.sqlite;",
      "const a = insertContact(db(), s.accountId, { createdAt: old });",
      "const b = insertContact(db(), s.accountId, { createdAt: older });",
      "expect(await ids()).toEqual([a, b]);",
      "test(\"x\", () => { const other = new Database(path); // arrange: a second connection holds the lock",
      "});",
      "test(\"y\", async () => { const other = newAccount(s, { name: \"O\" }); await post(\"jo@other.com\", other.apiKey); });",
    ].join("\n");
    expect(reachesPastHttp(src)).toEqual([]);
  });

  test("finds assertions that read SQL or a service, marked or not, through bound names and helpers", () => {
    const src = [
      "const d = s.running.deps;",
      'const rows = (sql: string) => d.sqlite.query(sql).all(); // arrange: not really',
      'expect(rows("SELECT * FROM messages")).toHaveLength(2);', // 3
      "// arrange: read the row",
      'const row = d.sqlite.query("SELECT status FROM messages WHERE id = ?").get(id) as any;',
      "const status = row.status;",
      "expect(status).toBe(\"sent\");", // 7
      "expect(await messageOf(s, id)).toMatchObject({ status: row.status });", // 8
      "function count() {",
      '  return d.sqlite.query("SELECT count(*) AS n FROM contacts").get().n; // arrange: x',
      "}",
      "expect(count()).toBe(1);", // 12
      "expect(s.running.deps.queue.size()).toBe(0); // arrange: no", // 13
      "for (const r of rows(\"SELECT id FROM forms\")) expect(r.id).toBeTruthy();", // 14
      "expect(await listTotal(s, \"/messages\")).toBe(2);",
      "const tagRows = (id: string) => rows(\"SELECT tag FROM contact_tags\");", // 16
      "expect(tagRows(a)).toEqual([]);", // 17
      "// arrange: the declared routes are the table's rows",
      "const routes = s.running.deps.routes.list();",
      "for (const r of routes) { const res = await call(r); expect(res.status).toBe(200); }", // 20: res is an answer
      "// answer: the backup the API answered with is a database file, opened as the owner would",
      "const backup = new Database(file, { readonly: true });",
      "expect(backup.query(\"SELECT count(*) AS n FROM forms\").get()).toEqual({ n: 1 }); // answer: the backup's forms",
      "const eventsOf = (id: string) =>",
      "  rows(\"SELECT payload FROM events\").filter((e) => e.id === id);",
      "expect(eventsOf(x)).toHaveLength(1);", // 23
    ].join("\n");
    expect(reachesPastHttp(src).filter((r) => r.kind === "asserted").map((r) => r.line)).toEqual([3, 8, 12, 13, 14, 17, 26]);
  });
});

describe("a value read from a part is a read, not the part", () => {
  test("a name bound (or later assigned) to what a part answered, or to a function reading it, is asserted on even when marked", () => {
    const src = [
      'const rows = () => s.running.deps.sqlite.query("SELECT * FROM messages").all(); // arrange: x',
      "expect(rows()).toEqual([]);", // 2
      "const n = s.running.deps.queue.size(); // arrange: x",
      "expect(n).toBe(0);", // 4
      'const one = s.running.deps.sqlite.query("SELECT 1 AS n").get(); // arrange: x',
      "expect(one).toEqual({ n: 1 });", // 6
      "let routes: RouteDef[];",
      "beforeAll(() => {",
      "  routes = s.running.deps.routes(); // arrange: read in a hook, asserted in a test",
      "});",
      "expect(routes.length).toBeGreaterThan(70);", // 11
      "const db = () => s.running.deps.sqlite; // arrange: the connection itself",
      "const id = insertContact(db(), s.accountId, {});",
      "expect(await contactOf(s, id)).not.toBeNull();",
    ].join("\n");
    expect(reachesPastHttp(src).map((r) => `${r.line} ${r.kind}`)).toEqual(["2 asserted", "4 asserted", "6 asserted", "11 asserted"]);
  });
});

describe("the one oracle", () => {
  test("a total_changes() read under `// oracle:` may be asserted; nothing else under that mark, nor it unmarked", () => {
    const src = [
      "// oracle: no answer shows that a refused request wrote nothing, in any table",
      'const changes = () => (s.running.deps.sqlite.query("SELECT total_changes() AS n").get() as { n: number }).n;',
      "const before = changes();",
      "expect(changes()).toBe(before);", // 4: allowed
      'const count = () => (s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages").get() as { n: number }).n; // oracle: not this',
      "expect(count()).toBe(0);", // 6: asserted
      'const total = () => (s.running.deps.sqlite.query("SELECT total_changes() AS n").get() as { n: number }).n;', // 7: unmarked
      "expect(total()).toBe(before);", // 8: asserted
      'const sneaky = () => (s.running.deps.sqlite.query("SELECT total_changes() AS n").get() as any).n + (s.running.deps.sqlite.query("SELECT count(*) AS n FROM forms").get() as any).n; // oracle: two reads', // 9
      "expect(sneaky()).toBeTruthy();", // 10: asserted
      '// oracle: a run of statements does not widen the mark',
      'const tc = s.running.deps.sqlite.query("SELECT total_changes() AS n").get();',
      's.running.deps.sqlite.run("DELETE FROM forms");', // 13: unmarked
      'const n = (s.running.deps.sqlite.query("SELECT total_changes() AS n FROM messages").get() as any).n; // oracle: another table', // 14
      "expect(n).toBe(0);", // 15: asserted
    ].join("\n");
    expect(reachesPastHttp(src).map((r) => `${r.line} ${r.kind}`)).toEqual(["5 unmarked", "6 asserted", "7 unmarked", "8 asserted", "9 unmarked", "10 asserted", "13 unmarked", "14 unmarked", "15 asserted"]);
  });
});

const apiFiles = () => sourceFiles(join(ROOT, "test/api")).filter((f) => f.endsWith(".ts")).sort();

describe("API tests reach past HTTP only to arrange, and never assert what they read there", () => {
  const found = new Map<string, Reach[]>();
  for (const f of apiFiles()) {
    const r = reachesPastHttp(readFileSync(f, "utf8"));
    if (r.length) found.set(relative(ROOT, f), r);
  }

  test("every use carries `// arrange: why`, and no expect reads SQL or a service", () => {
    const over = [...found]
      .flatMap(([f, r]) => r.map((x) => `${f}:${x.line} ${x.kind === "unmarked" ? "needs `// arrange: <why the API cannot make this>`" : "asserts on SQL or a service; read it through the API"}: ${x.text}`));
    expect(over).toEqual([]);
  });
});

/** test/api folders named for a concern rather than a route module, and what each holds. */
const CONCERNS: Record<string, string> = {
  http: "the transport and its plugins across routes: authentication, permissions, bodies, paging, proxies, fuzzing",
  intake: "the webhook's intake path behind the route: the read barrier, the applier's metrics",
  sending: "the one sending path: opt-outs, quota, budgets, retries, waiting reasons, failover",
  services: "what services do for every route: change announcements, boot order, outbound HTTP",
  settings: "the server's and the business's settings",
  ops: "operating the server: serve options, backups, metrics, the OpenAPI document, the dashboard's files",
  cli: "CLI commands run against a live server",
};

/** test/unit files in a folder that are not named after one module, and why. */
const UNIT_NAMED_FOR_A_RULE: Record<string, string> = {
  "test/unit/domain/owner-hears-back.test.ts": "one decision's pure rules across seven domain modules (docs/api-decisions.md, \"The owner hears back\")",
};

const moduleNames = (dir: string) => readdirSync(join(ROOT, dir)).filter((n) => n.endsWith(".ts")).map((n) => n.replace(/\.ts$/, ""));
const namedAfter = (name: string, modules: Iterable<string>) => [...modules].some((m) => name === m || name.startsWith(`${m}-`));

/** Why a test file's path breaks the naming rule, or null. */
export function misnamed(path: string, routes: string[], thirdparty: string[], units: Set<string>): string | null {
  const parts = path.split("/");
  const name = basename(path).replace(/\.test\.ts$/, "");
  if (parts[1] === "api") {
    if (parts.length === 3) return namedAfter(name, routes) ? null : `not named after a route module of src/http/routes/ (<module>[-<concern>].test.ts), nor in a concern folder`;
    if (parts.length === 4 && parts[2] === "thirdparty") return namedAfter(name, thirdparty) ? null : "not named after a module of src/http/routes/thirdparty/";
    if (parts.length === 4 && CONCERNS[parts[2]]) return null;
    return `folder test/api/${parts.slice(2, -1).join("/")} is neither thirdparty/ nor a concern folder (${Object.keys(CONCERNS).join(", ")})`;
  }
  if (parts[1] === "services") return parts.length === 3 && namedAfter(name, units) ? null : "not named after a module of src/ (test/services/<module>[-<concern>].test.ts)";
  if (parts[1] === "unit" && parts.length > 3) {
    if (UNIT_NAMED_FOR_A_RULE[path] || namedAfter(name, units)) return null;
    return "not named after a module or folder of src/, web/ or scripts/ (<module>[-<concern>].test.ts)";
  }
  return null;
}

describe("test files are named after what they test", () => {
  const routes = moduleNames("src/http/routes");
  const thirdparty = moduleNames("src/http/routes/thirdparty");
  const units = new Set<string>();
  for (const dir of ["src", "web", "scripts"]) {
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (n === "node_modules") continue;
        if (statSync(p).isDirectory()) (units.add(n), walk(p));
        else units.add(n.replace(/\.(gen\.)?tsx?$/, ""));
      }
    };
    walk(join(ROOT, dir));
  }

  test("the rule: a route module or concern folder in test/api, a module in test/unit folders", () => {
    expect(misnamed("test/api/forms-template-names.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/api/thirdparty/messages-clients.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/api/http/fuzz.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/api/quota.test.ts", routes, thirdparty, units)).toContain("route module");
    expect(misnamed("test/api/thirdparty/plumbing.test.ts", routes, thirdparty, units)).toContain("thirdparty");
    expect(misnamed("test/api/misc/x.test.ts", routes, thirdparty, units)).toContain("concern folder");
    expect(misnamed("test/unit/db/odds-and-ends.test.ts", routes, thirdparty, units)).toContain("module");
    expect(misnamed("test/unit/queue/priority-queue.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/unit/docs.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/services/leases.test.ts", routes, thirdparty, units)).toBeNull();
    expect(misnamed("test/services/internals.test.ts", routes, thirdparty, units)).toContain("module of src/");
  });

  test("every file in test/api, test/unit and test/services follows it", () => {
    const files = ["test/api", "test/unit", "test/services"].flatMap((d) => sourceFiles(join(ROOT, d))).filter((f) => f.endsWith(".test.ts"));
    const bad = files.map((f) => relative(ROOT, f)).flatMap((f) => {
      const why = misnamed(f, routes, thirdparty, units);
      return why ? [`${f}: ${why}`] : [];
    });
    expect(bad).toEqual([]);
    for (const f of Object.keys(UNIT_NAMED_FOR_A_RULE)) expect(existsSync(join(ROOT, f))).toBe(true);
  });
});
