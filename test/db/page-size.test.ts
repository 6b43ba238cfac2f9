import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate, schemaVersion, SCHEMA_VERSION } from "../../src/db/migrate";
import { PAGE_SIZE, pageSizeOf } from "../../src/db/page-size";
import { runCli } from "../../src/main";
import { tempDir } from "../helpers/server";
import { cliIO } from "../helpers/cli-io";

// docs/api-decisions.md, "Disk bytes, round two": new databases get PAGE_SIZE; `textwire migrate`
// rewrites an older one once, whole or not at all.

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));


/** A database as an older release made it: 4 KiB pages, migrated, with rows to recognise. */
function olderDatabase(): string {
  const d = tempDir("textwire-pages-");
  dirs.push(d);
  const path = join(d, "textwire.db");
  const raw = new Database(path);
  raw.exec("PRAGMA page_size = 4096");
  raw.exec("PRAGMA journal_mode = WAL");
  raw.exec("CREATE TABLE made_before (x TEXT)");
  raw.close();
  const sqlite = openSqlite(path);
  migrate(sqlite);
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('old', 'Before the rewrite', '2026-01-01T00:00:00Z')");
  const ins = sqlite.prepare("INSERT INTO made_before VALUES (?)");
  sqlite.transaction(() => {
    for (let i = 0; i < 3000; i++) ins.run(`row ${i} ${"x".repeat(i % 300)}`);
  })();
  expect(pageSizeOf(sqlite)).toBe(4096);
  sqlite.close(true);
  return path;
}

function contentOf(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return {
      pageSize: pageSizeOf(db),
      schema: schemaVersion(db),
      account: db.query("SELECT name FROM accounts WHERE id = 'old'").get(),
      rows: db.query("SELECT count(*) AS n, sum(length(x)) AS len FROM made_before").get(),
      check: (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
    };
  } finally {
    db.close();
  }
}

describe("the page size", () => {
  test("a new database is made with PAGE_SIZE pages, in WAL mode", () => {
    const d = tempDir("textwire-pages-");
    dirs.push(d);
    const sqlite = openSqlite(join(d, "new.db"));
    migrate(sqlite);
    expect(pageSizeOf(sqlite)).toBe(PAGE_SIZE);
    expect((sqlite.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    sqlite.close(true);
  });

  test("migrate rewrites an older database with PAGE_SIZE pages once, every row kept; the next run has nothing to do", async () => {
    const path = olderDatabase();
    const before = contentOf(path);
    const a = cliIO();
    expect(await runCli(["migrate", "--db", path], a.cli)).toBe(0);
    expect(a.out.join("\n")).toContain(`Rewriting the database with ${PAGE_SIZE / 1024} KiB pages`);
    expect(contentOf(path)).toEqual({ ...before, pageSize: PAGE_SIZE });
    expect(before).toMatchObject({ schema: SCHEMA_VERSION, check: "ok", rows: { n: 3000 } });
    expect(existsSync(`${path}.page-size-${PAGE_SIZE}`)).toBe(false);
    // Opened by the server's way again: WAL mode, writable.
    const sqlite = openSqlite(path);
    expect((sqlite.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    sqlite.run("INSERT INTO made_before VALUES ('after')");
    sqlite.close(true);
    const b = cliIO();
    expect(await runCli(["migrate", "--json", "--db", path], b.cli)).toBe(0);
    expect(JSON.parse(b.out[0])).toEqual({ applied: [], schemaVersion: SCHEMA_VERSION, pageSizeFrom: null });
  });

  test("while the database is open elsewhere (the server running), migrate leaves the page size and every row as they were", async () => {
    const path = olderDatabase();
    const before = contentOf(path);
    const other = openSqlite(path);
    other.query("SELECT count(*) FROM accounts").get();
    const a = cliIO();
    expect(await runCli(["migrate", "--db", path], a.cli)).toBe(1);
    expect(a.err.join("\n")).toContain("stop it, then run this again");
    other.run("INSERT INTO made_before VALUES ('still writable')");
    other.close(true);
    expect(contentOf(path)).toMatchObject({ pageSize: 4096, account: before.account, check: "ok", rows: { n: 3001 } });
  });

  test("a half-written copy left by a kill mid-way is thrown away, and the rewrite starts over", async () => {
    const path = olderDatabase();
    const before = contentOf(path);
    // What a kill during VACUUM INTO leaves: the original whole, a partial copy beside it.
    writeFileSync(`${path}.page-size-${PAGE_SIZE}`, "SQLite format 3\0 half written");
    expect(contentOf(path)).toEqual(before);
    expect(await runCli(["migrate", "--db", path], cliIO().cli)).toBe(0);
    expect(contentOf(path)).toEqual({ ...before, pageSize: PAGE_SIZE });
  });
});
