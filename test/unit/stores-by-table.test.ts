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
 * - in src/db/stores/, a function takes the connection and at most MAX_POSITIONAL other
 *   parameters: more go in a filter or patch object.
 * - in src/db/, a raw query result is cast to the schema's types (`typeof table.$inferSelect`,
 *   `RawRow<table>`, a `Pick` of them), not to a hand-written object type that repeats three or
 *   more of one table's columns with their stored types (converted columns — flags as 0/1 numbers
 *   before their conversion, parsed JSON — are not repeats).
 * SQL keywords are upper case in this code base, so prose ("texts from contacts") is not taken for SQL.
 * Each failure lists every offending file:line.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { blankComments, expectNone, sourceFiles } from "./source-text";

const ROOT = resolve(import.meta.dir, "../..");

/** The text with comments blanked (same length and lines); strings are kept. */
const withoutComments = (text: string) => blankComments(text);

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
    expectNone("Statements outside their table's store", offenders);
  });

  test("the modules allowed elsewhere still read them (the list stays true)", () => {
    for (const path of Object.keys(READERS_ELSEWHERE)) {
      const f = files.find((x) => x.path === path);
      expect(f && statementsOn(f.text).length).toBeGreaterThan(0);
    }
  });
});

// ---- services get entities from the stores ---------------------------------------------------

const SCHEMA = sourceFiles(join(ROOT, "src/db/schema")).map((f) => readFileSync(f, "utf8")).join("\n");
/** Every column of the schema, by its TypeScript and its SQL name. */
const COLUMNS = new Set<string>();
/** The stored flags (0/1 integers): boolean-mode columns, and the 0/1 ones named like a flag. */
const FLAGS = new Set<string>();
for (const m of SCHEMA.matchAll(/(\w+):\s*(integer|text|real|blob)\(\s*"(\w+)"([^)]*)\)([^,\n]*)/g)) {
  COLUMNS.add(m[1]).add(m[3]);
  const boolean = /mode:\s*"boolean"/.test(m[4]) || (/\.default\([01]\)/.test(m[5]) && /^(is|allow|with|expiry|has|stop_on|restart_on)_/.test(m[3]));
  if (m[2] === "integer" && boolean) FLAGS.add(m[1]).add(m[3]);
}

/**
 * The stored JSON columns: text columns whose doc comment says JSON or whose default is `{}` or
 * `[]` (by their TypeScript and SQL names).
 */
const JSON_COLUMNS = new Set<string>();
for (const m of SCHEMA.matchAll(/((?:\/\*\*[^]*?\*\/\s*)?)(\w+):\s*text\(\s*"(\w+)"([^)]*)\)([^,\n]*)/g)) {
  if (/JSON/.test(m[1]) || /\.default\(\s*["'`](?:\{\}|\[\])["'`]\s*\)/.test(m[5])) JSON_COLUMNS.add(m[2]).add(m[3]);
}

/** `kind file:line — text` for each stored flag compared with 0/1, stored column parsed, or query result cast. */
export function rawUses(file: string, source: string): string[] {
  const text = withoutComments(source);
  const out: string[] = [];
  const at = (kind: string, i: number, s: string) => out.push(`${kind} ${file}:${lineOf(text, i)} — ${s}`);
  for (const m of text.matchAll(/\??\.(\w+)\s*[!=]==?\s*[01]\b/g)) if (FLAGS.has(m[1])) at("flag", m.index!, m[0]);
  // Made a boolean by hand (`Boolean(r.history)`, `!!r.is_active`): the store's job.
  for (const m of text.matchAll(/(?:\bBoolean\(\s*|!!)[\w$]+(?:\??\.[\w$]+)*\??\.(\w+)\b/g)) if (FLAGS.has(m[1])) at("flag", m.index!, m[0]);
  for (const m of text.matchAll(/JSON\.parse\(\s*[\w$]+\??\.(\w+)/g)) if (COLUMNS.has(m[1])) at("json", m.index!, m[0]);
  // A stored JSON column handed to a parser of its own (`readDeviceLimits(d.sendingLimits)`).
  // Not in src/domain/: pure rules get values, and their parsers read what a client sent
  // (`parseTagList(body.tags)`), never a row (domain/ imports nothing from db/).
  if (!file.startsWith("src/domain/")) {
    for (const m of text.matchAll(/(?<![\w$.])(?:parse|read|safeJson)\w*\(\s*[\w$]+(?:\??\.[\w$]+)*\??\.(\w+)\s*[,)]/g)) if (JSON_COLUMNS.has(m[1])) at("json", m.index!, m[0]);
  }
  for (const m of text.matchAll(/\.(?:get|all|values)\([^()]*\)\s+as\s+(?!const\b)/g)) at("cast", m.index!, m[0]);
  return out;
}

describe("services get entities from the stores, not raw rows", () => {
  test("the detector: flags compared with 0/1, stored columns parsed, results cast", () => {
    const src = [
      "if (row.opted_out === 1) x();",
      "const a = { isActive: r.isActive === 1 };",
      "const t = JSON.parse(contact.tags) as string[];",
      'const r = sqlite.query("SELECT 1").get(id) as { n: number };',
      "if (list.length === 1) y(); const n = count === 0;",
      "const b = JSON.parse(text); const c = JSON.parse(Buffer.from(x).toString());",
      "// row.opted_out === 1 in a comment",
      "const l = readDeviceLimits(d.sendingLimits); const v = parseJson(r.formValues);",
      "const w = parseTagList(body.tagsText, errors); const n = readNumber(row.count);",
      "const h = Boolean(r.history); const k = !!key.operator; const t = Boolean(config.tlsCert);",
    ].join("\n");
    expect(rawUses("f.ts", src).map((s) => s.split(" — ")[0])).toEqual(["flag f.ts:1", "flag f.ts:2", "flag f.ts:10", "flag f.ts:10", "json f.ts:3", "json f.ts:8", "json f.ts:8", "cast f.ts:4"]);
    expect(rawUses("src/domain/f.ts", "const t = parseTagList(b.tags, errors);")).toEqual([]);
    expect(rawUses("src/services/f.ts", "const t = parseTagList(b.tags, errors);")).toHaveLength(1);
  });

  test("outside src/db, no file compares a stored flag with 0/1, parses a stored column or casts a query result", () => {
    const lines: string[] = [];
    for (const f of sourceFiles(join(ROOT, "src"))) {
      const path = relative(ROOT, f);
      if (!path.startsWith("src/db/")) lines.push(...rawUses(path, readFileSync(f, "utf8")));
    }
    expectNone("Raw rows outside the stores", lines);
  });

});

// ---- filter objects, not long positional lists -----------------------------------------------

/** Parameters a store function takes besides the connection. */
const MAX_POSITIONAL = 4;
/** Names the connection goes by as a first parameter. */
const CONNECTION = new Set(["sqlite", "db", "tx", "database"]);

/** `file:line name (n)` for each function, method or arrow function with more positional parameters than allowed. */
export function longParameterLists(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    // A callback handed to a call (a scan's per-row function) and a class's private helper are not what a store offers.
    const callback = (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && ts.isCallExpression(n.parent);
    const hidden = ts.isMethodDeclaration(n) && (ts.getCombinedModifierFlags(n) & ts.ModifierFlags.Private) !== 0;
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isMethodSignature(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && !callback && !hidden) {
      const ps = n.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === "this"));
      const own = ps.length > 0 && ts.isIdentifier(ps[0].name) && CONNECTION.has(ps[0].name.text) ? ps.length - 1 : ps.length;
      if (own > MAX_POSITIONAL) {
        const parent = n.parent;
        const name = n.name && ts.isIdentifier(n.name) ? n.name.text : parent && (ts.isPropertyAssignment(parent) || ts.isVariableDeclaration(parent)) && ts.isIdentifier(parent.name) ? parent.name.text : "(anonymous)";
        out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${name} (${own})`);
      }
    }
    n.forEachChild(visit);
  };
  visit(sf);
  return out;
}

describe("store functions take filter objects, not long positional lists", () => {
  test("the detector: functions, methods, arrow functions; not the connection, callbacks or private helpers", () => {
    const src = [
      "export function listRuns(sqlite: Database, automationId: string, f: RunFilter, page: number, limit: number) {}",
      "export function tooMany(sqlite: Database, a: string, b: string, c: string, d: string, e: string) {}",
      "const s = { insert: (formId, key, status, body, hash) => void 0 };",
      "class X { update(a: string, b: string, c: string, d: string, e: string) {} }",
      "interface Y { insert(formId: string, key: string, status: number, body: string, bodyHash: string | null): void }",
      "scan(sqlite, (id, accountId, priority, scheduledFor, seq) => out.push(id));",
      "class Z { private run(head: string, row: string, n: number, full: number, values: unknown[]) {} }",
    ].join("\n");
    expect(longParameterLists("f.ts", src)).toEqual(["f.ts:2 tooMany (5)", "f.ts:3 insert (5)", "f.ts:4 update (5)", "f.ts:5 insert (5)"]);
  });

  test(`no function in src/db/stores takes more than ${MAX_POSITIONAL} parameters besides the connection`, () => {
    const files = sourceFiles(join(ROOT, "src/db/stores"));
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.flatMap((f) => longParameterLists(relative(ROOT, f), readFileSync(f, "utf8")));
    expectNone("Long positional lists in stores", offenders);
  });
});

// ---- row types from the schema ----------------------------------------------------------------

/** Each table's columns, by their TypeScript and SQL names. */
const TABLES = new Map<string, Set<string>>();
for (const part of SCHEMA.split(/sqliteTable\(\s*"/).slice(1)) {
  const cols = new Set<string>();
  for (const m of part.matchAll(/(\w+):\s*(?:integer|text|real|blob)\(\s*"(\w+)"/g)) cols.add(m[1]).add(m[2]);
  TABLES.set(part.slice(0, part.indexOf('"')), cols);
}
/** Columns every table has: naming them says nothing about which table a type copies. */
const GENERIC = new Set(["id", "accountId", "account_id", "createdAt", "created_at", "updatedAt", "updated_at"]);
/** A column typed as stored (not converted: a flag as 0/1 before its conversion, parsed JSON). */
const STORED_TYPE = /^(?:string|number)(?: \| null)?$/;
/** Columns of one table a hand-written type may repeat before it is taken for a copy of the table's row. */
const MAX_REPEATED = 2;

/** `file:line` and the table for each query result cast to a hand-written type that repeats a table's columns. */
export function handWrittenRowCasts(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const named = new Map<string, ts.NodeArray<ts.TypeElement>[]>();
  const literals = (t: ts.TypeNode | undefined): ts.NodeArray<ts.TypeElement>[] => {
    if (!t) return [];
    if (ts.isTypeLiteralNode(t)) return [t.members];
    if (ts.isIntersectionTypeNode(t) || ts.isUnionTypeNode(t)) return t.types.flatMap(literals);
    if (ts.isArrayTypeNode(t)) return literals(t.elementType);
    if (ts.isParenthesizedTypeNode(t)) return literals(t.type);
    if (ts.isTypeReferenceNode(t)) return [...(t.typeArguments ?? []).flatMap(literals), ...(ts.isIdentifier(t.typeName) ? (named.get(t.typeName.text) ?? []) : [])];
    return [];
  };
  sf.forEachChild((n) => {
    if (ts.isInterfaceDeclaration(n)) named.set(n.name.text, [n.members]);
    else if (ts.isTypeAliasDeclaration(n)) named.set(n.name.text, literals(n.type));
  });
  const out: string[] = [];
  const check = (n: ts.Node, type: ts.TypeNode | ts.NodeArray<ts.TypeElement>) => {
    for (const members of Array.isArray(type) ? [type as ts.NodeArray<ts.TypeElement>] : literals(type as ts.TypeNode)) {
      const props = members
        .filter(ts.isPropertySignature)
        .filter((m) => m.type !== undefined && STORED_TYPE.test(m.type.getText()) && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)))
        .map((m) => (m.name as ts.Identifier).text)
        .filter((p) => !GENERIC.has(p) && !FLAGS.has(p));
      for (const [table, cols] of TABLES) {
        const repeated = props.filter((p) => cols.has(p));
        if (repeated.length > MAX_REPEATED) out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} repeats ${table}: ${repeated.join(", ")}`);
      }
    }
  };
  const visit = (n: ts.Node) => {
    const e = ts.isAsExpression(n) ? n.expression : null;
    if (e && ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && ["get", "all"].includes(e.expression.name.text)) check(n, (n as ts.AsExpression).type);
    n.forEachChild(visit);
  };
  visit(sf);
  return out;
}

/** `file:line` and the table for each file-level interface or type whose own members repeat a table's stored columns. */
export function handWrittenRowTypes(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  // A declaration's own members only (what a cast resolves through names is handWrittenRowCasts' part).
  const own = (t: ts.TypeNode): ts.NodeArray<ts.TypeElement>[] =>
    ts.isTypeLiteralNode(t) ? [t.members] : ts.isIntersectionTypeNode(t) || ts.isUnionTypeNode(t) ? t.types.flatMap(own) : ts.isParenthesizedTypeNode(t) ? own(t.type) : [];
  const out: string[] = [];
  sf.forEachChild((n) => {
    const lists = ts.isInterfaceDeclaration(n) ? [n.members] : ts.isTypeAliasDeclaration(n) ? own(n.type) : [];
    for (const members of lists) {
      const props = members
        .filter(ts.isPropertySignature)
        .filter((m) => m.type !== undefined && STORED_TYPE.test(m.type.getText()) && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)))
        .map((m) => (m.name as ts.Identifier).text)
        .filter((p) => !GENERIC.has(p) && !FLAGS.has(p));
      for (const [table, cols] of TABLES) {
        const repeated = props.filter((p) => cols.has(p));
        const name = (n as ts.InterfaceDeclaration | ts.TypeAliasDeclaration).name.text;
        if (repeated.length > MAX_REPEATED) out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${name} repeats ${table}: ${repeated.join(", ")}`);
      }
    }
  });
  return out;
}

describe("query results are typed from the schema", () => {
  test("the detector: casts to literals and to local types that repeat one table's stored columns", () => {
    const src = [
      "interface Listed { id: string; firstName: string | null; lastName: string | null; phoneNumber: string }",
      "const a = q.all(x) as Listed[];",
      "const b = q.get(x) as { name: string; fields: string; settings: string } | null;",
      "const c = q.get(x) as Pick<ContactRow, \"firstName\" | \"lastName\" | \"phoneNumber\"> | null;",
      "const d = q.get(x) as (Omit<Automation, \"isActive\"> & { isActive: number; stopOnReply: number; restartOnResubmit: number }) | null;",
      "const e = q.get(x) as { n: number; firstName: string };",
      "const f = m.get(x) as { tags: string[]; customFields: Record<string, string>; firstName: string };",
    ].join("\n");
    expect(handWrittenRowCasts("f.ts", src).map((s) => s.split(" repeats ")[0] + " " + s.split(" repeats ")[1].split(":")[0])).toEqual(["f.ts:2 contacts", "f.ts:3 forms"]);
  });

  test("the detector: interfaces and types whose own members repeat a table's stored columns", () => {
    const src = [
      "export interface ContactListItem { id: string; firstName: string | null; lastName: string | null; phoneNumber: string; tags: string[] }",
      "export type Listed = Pick<ContactRow, \"firstName\" | \"lastName\" | \"phoneNumber\"> & { tags: string[] };",
      "type Stored = Omit<Automation, \"isActive\"> & { isActive: number; stopOnReply: number; restartOnResubmit: number };",
      "export type Facts = Pick<Row, \"a\"> & { formId: string; submissions: number; newContacts: number };",
    ].join("\n");
    expect(handWrittenRowTypes("f.ts", src).map((s) => s.split(":")[0] + ":" + s.split(":")[1].split(" ")[0])).toEqual(["f.ts:1", "f.ts:4"]);
  });

  test("no query result in src/db is cast to a hand-written copy of a table's row, and no type there copies one", () => {
    const files = sourceFiles(join(ROOT, "src/db")).filter((f) => !relative(ROOT, f).startsWith("src/db/schema/"));
    const offenders = files.flatMap((f) => {
      const [path, text] = [relative(ROOT, f), readFileSync(f, "utf8")];
      return [...handWrittenRowCasts(path, text), ...handWrittenRowTypes(path, text)];
    });
    expectNone("Hand-written row types", offenders);
  });
});

// ---- one store style ----------------------------------------------------------------------------

/**
 * The stores that are not plain functions over the connection, and why (docs/architecture.md,
 * "One store style"): statement sets prepared once for a measured hot path, and classes that hold
 * state. A new class or statement set fails until it is listed here with its reason, and one that
 * is gone fails until it is taken off, so the list (and the doc that names them) stays true.
 */
const OTHER_SHAPES: Record<string, string> = {
  "src/db/stores/submissions.ts submissionStore": "the webhook's reads, prepared once",
  "src/db/stores/contacts/accepting.ts acceptingContactStatements": "the webhook's contact read (gathered by submissionStore)",
  "src/db/stores/messages/accepting.ts acceptingMessageStatements": "the webhook's message counts (gathered by submissionStore)",
  "src/db/stores/intake.ts intakeStore": "the webhook's intake appends and the applier's reads",
  "src/db/stores/idempotency.ts idempotencyStore": "the webhook's Idempotency-Key answers",
  "src/db/stores/monthly-usage.ts monthlyUsageStore": "the monthly quota's counts on every accepted text",
  "src/db/stores/intake-applier.ts intakeApplierStore": "the applier's batch, on its own connection",
  "src/db/stores/contacts/applier.ts applierContactStatements": "the applier's contact statements (gathered by intakeApplierStore)",
  "src/db/stores/messages/applier.ts applierMessageStatements": "the applier's message statements (gathered by intakeApplierStore)",
  "src/db/stores/messages/index.ts messageStore": "leasing and the phones' reports",
  "src/db/stores/sending.ts sendingStore": "the phones' hand-outs, read and written on every lease",
  "src/db/stores/contacts/batch.ts ContactInsertBatch": "a batch of contact rows that fills up",
  "src/db/stores/contacts/list.ts ContactLists": "a contacts list's cached totals",
  "src/db/stores/contacts/search-pending.ts PendingSearchIndex": "the search index's pending rows, written in chunks",
  "src/db/stores/contacts/upsert.ts ContactUpserts": "an import's UPDATE statements by changed-column set",
};

/** `file name` of each exported class, and of each exported function that returns a set of statements or methods. */
export function otherShapes(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const exported = (n: ts.Node) => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const isSet = (o: ts.ObjectLiteralExpression) =>
    o.properties.filter(
      (p) =>
        ts.isMethodDeclaration(p) ||
        (ts.isPropertyAssignment(p) && (ts.isArrowFunction(p.initializer) || ts.isFunctionExpression(p.initializer) || (ts.isCallExpression(p.initializer) && /\.(?:prepare|query)\b|^q$/.test(p.initializer.expression.getText())))),
    ).length >= 2;
  const out: string[] = [];
  sf.forEachChild((n) => {
    if (ts.isClassDeclaration(n) && n.name && exported(n) && !/Error$/.test(n.name.text)) out.push(`${file} ${n.name.text}`);
    if (ts.isFunctionDeclaration(n) && n.name && exported(n) && n.body) {
      // Statements prepared in the function and kept by what it returns, or a set of them.
      const prepares = /\.prepare\s*(?:<[^()]*>)?\(/.test(n.body.getText());
      const returnsSet = n.body.statements.some(
        (s) => ts.isReturnStatement(s) && s.expression !== undefined && ts.isObjectLiteralExpression(s.expression) && (prepares || isSet(s.expression)),
      );
      if (returnsSet) out.push(`${file} ${n.name.text}`);
    }
  });
  return out;
}

describe("one store style: plain functions, other shapes only where listed", () => {
  test("the detector: exported classes and functions returning statement or method sets", () => {
    const src = [
      "export class RollupStore { constructor(sqlite: Database) {} }",
      "export function eventStore(sqlite: Database) { const q = sqlite.query.bind(sqlite); return { a: q(\"SELECT 1\"), b: q(\"SELECT 2\") }; }",
      "export function smsgateOf(sqlite: Database) { return { client: (id: string) => 1, group: (id: string) => 2 }; }",
      "export function findContact(sqlite: Database, id: string) { return { id, name: 'x' }; }",
      "class Hidden {} export class PageSizeBusyError extends Error {}",
      "export function usageStore(sqlite: Database) { const c = sqlite.prepare(\"SELECT 1\"); return { used: () => c.get() }; }",
      "export function updateAccount(sqlite: Database, id: string) { sqlite.prepare(\"UPDATE a SET x = 1\").run(); }",
    ].join("\n");
    expect(otherShapes("f.ts", src)).toEqual(["f.ts RollupStore", "f.ts eventStore", "f.ts smsgateOf", "f.ts usageStore"]);
  });

  test("the stores that are not plain functions are exactly the listed ones", () => {
    const found = sourceFiles(join(ROOT, "src/db/stores")).flatMap((f) => otherShapes(relative(ROOT, f), readFileSync(f, "utf8")));
    expect(found.sort()).toEqual(Object.keys(OTHER_SHAPES).sort());
  });
});
