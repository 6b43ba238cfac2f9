import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate, schemaVersion, SCHEMA_VERSION } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { copyBeforeUpgrade, upgradeCopyDir, UPGRADE_COPIES_KEPT } from "../../../src/db/upgrade-copy";
import { runCli } from "../../../src/main";
import { startTestServer, tempDir } from "../../helpers/server";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A database left by an older release: the migrations up to `version`, and a row to recognise. */
function olderDatabase(version: number): string {
  const d = tempDir("textwire-upgrade-");
  dirs.push(d);
  const path = join(d, "textwire.db");
  const sqlite = openSqlite(path);
  migrate(sqlite, EMBEDDED_MIGRATIONS.slice(0, version));
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('old', 'Before the upgrade', '2026-01-01T00:00:00Z')");
  sqlite.close();
  return path;
}

describe("a copy of the database before any migration", () => {
  test("serve copies an older database, named by its schema version, before upgrading it; the copy opens at the old schema with its data", async () => {
    const from = SCHEMA_VERSION - 2;
    const db = olderDatabase(from);
    const s = await startTestServer({ db });
    await s.stop();
    const copy = join(upgradeCopyDir(db), `textwire.db.schema-${from}.db`);
    expect(existsSync(copy)).toBe(true);
    const old = new Database(copy, { readonly: true });
    expect(schemaVersion(old)).toBe(from);
    expect(old.query("SELECT name FROM accounts WHERE id = 'old'").get()).toEqual({ name: "Before the upgrade" });
    old.close();
    // Up to date: the next start copies nothing more.
    const again = await startTestServer({ db });
    await again.stop();
    expect(readdirSync(upgradeCopyDir(db))).toEqual([`textwire.db.schema-${from}.db`]);
  });

  test("textwire migrate does the same; a new database is not copied", async () => {
    const db = olderDatabase(SCHEMA_VERSION - 1);
    const out: string[] = [];
    expect(await runCli(["migrate", "--db", db], { out: (l) => out.push(l), err: () => {}, env: {}, isTTY: false })).toBe(0);
    expect(out.join("\n")).toContain(`schema-${SCHEMA_VERSION - 1}.db`);
    const fresh = join(tempDir("textwire-upgrade-new-"), "n.db");
    dirs.push(join(fresh, ".."));
    expect(await runCli(["migrate", "--db", fresh], { out: () => {}, err: () => {}, env: {}, isTTY: false })).toBe(0);
    expect(existsSync(upgradeCopyDir(fresh))).toBe(false);
  });

  test(`only the newest ${UPGRADE_COPIES_KEPT} copies are kept, and a copy already made for a version is not replaced`, () => {
    const db = olderDatabase(3);
    const dir = upgradeCopyDir(db);
    const sqlite = openSqlite(db);
    copyBeforeUpgrade(sqlite, db, 1);
    writeFileSync(join(dir, "textwire.db.schema-2.db"), "kept as it was");
    copyBeforeUpgrade(sqlite, db, 2);
    expect(Bun.file(join(dir, "textwire.db.schema-2.db")).size).toBe("kept as it was".length);
    copyBeforeUpgrade(sqlite, db, 3);
    copyBeforeUpgrade(sqlite, db, 4);
    sqlite.close();
    expect(readdirSync(dir).sort()).toEqual(["textwire.db.schema-2.db", "textwire.db.schema-3.db", "textwire.db.schema-4.db"]);
  });
});
