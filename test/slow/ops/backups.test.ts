import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate, SCHEMA_VERSION } from "../../../src/db/migrate";
import {
  BackupError,
  DatabaseLockedError,
  acquireLock,
  backupDatabase,
  backupFileName,
  inspectDatabase,
  lockPathOf,
  pruneBackups,
  restoreDatabase,
  runScheduledBackup,
} from "../../../src/services/backups";
import { expectStatus, formBody, startTestServer, tempDir } from "../../helpers/server";

const ROOT = join(import.meta.dir, "../../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const dirs: string[] = [];
const dir = () => {
  const d = tempDir("textwire-backups-test-");
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDb(path: string) {
  const s = openSqlite(path);
  migrate(s);
  return s;
}

function cli(args: string[]) {
  const p = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), ...args], { cwd: ROOT, env: { ...process.env, TEXTWIRE_DB: "" } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe("backup while another process writes", () => {
  test("the copy opens, passes integrity_check and holds every row committed before it started", async () => {
    const d = dir();
    const db = join(d, "live.db");
    freshDb(db).close();
    const writer = Bun.spawn([BUN, join(ROOT, "test/fixtures/writer.ts"), db], { stdout: "pipe", stderr: "inherit" });
    let committed = 0;
    let buf = "";
    const reader = writer.stdout.getReader();
    const dec = new TextDecoder();
    const pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buf += dec.decode(value);
        const lines = buf.split("\n");
        buf = lines.pop()!;
        for (const l of lines) if (l) committed = Math.max(committed, Number(l));
      }
    })();
    try {
      while (committed < 2000) await Bun.sleep(10);
      const results: Array<{ before: number; file: string }> = [];
      for (let i = 0; i < 3; i++) {
        const before = committed; // every id ≤ before was committed before this backup started
        const file = join(d, `copy-${i}.db`);
        // Run the real CLI in a third process.
        const r = cli(["backup", file, "--db", db, "--json"]);
        expect(r.code).toBe(0);
        const out = JSON.parse(r.out);
        expect(out.integrity).toBe("ok");
        expect(out.bytes).toBeGreaterThan(0);
        expect(out.rows.accounts).toBe(0);
        expect(out.schemaVersion).toBe(SCHEMA_VERSION);
        results.push({ before, file });
        await Bun.sleep(50);
      }
      const after = committed;
      for (const { before, file } of results) {
        const copy = new Database(file, { readonly: true });
        expect((copy.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
        const { n, max } = copy.query("SELECT count(*) AS n, max(id) AS max FROM load_test").get() as { n: number; max: number };
        // Contiguous ids 1..max, and nothing acknowledged before the start is missing.
        expect(n).toBe(max);
        expect(max).toBeGreaterThanOrEqual(before);
        copy.close();
        expect(existsSync(file + "-wal")).toBe(false);
      }
      expect(after).toBeGreaterThan(results[0].before); // the writer kept writing throughout
    } finally {
      writer.kill();
      await writer.exited;
      await pump.catch(() => {});
    }
  }, 60_000);

  test("refuses an existing output file and a missing database, leaving files alone", () => {
    const d = dir();
    const db = join(d, "a.db");
    freshDb(db).close();
    writeFileSync(join(d, "taken.db"), "keep me");
    expect(() => backupDatabase(db, join(d, "taken.db"))).toThrow(BackupError);
    expect(readFileSync(join(d, "taken.db"), "utf8")).toBe("keep me");
    expect(() => backupDatabase(join(d, "nope.db"), join(d, "out.db"))).toThrow(BackupError);
    expect(existsSync(join(d, "out.db"))).toBe(false);
    const r = cli(["backup", join(d, "taken.db"), "--db", db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("already exists");
    expect(cli(["backup", "--db", db]).code).toBe(2);
  });

  test("human output shows size, row counts and time", () => {
    const d = dir();
    const db = join(d, "a.db");
    freshDb(db).close();
    const r = cli(["backup", join(d, "h.db"), "--db", db]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/size: .*bytes/);
    expect(r.out).toContain("integrity:  ok");
    expect(r.out).toMatch(/rows: .*accounts 0.*messages 0/);
    expect(r.out).toMatch(/time: +\d+ ms/);
  });
});

describe("restore", () => {
  test("refused while a server holds the database; succeeds once it is stopped, keeping the old file", async () => {
    const d = dir();
    const s = await startTestServer({}, { dir: d });
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Before backup" }) }), 201)).data.form;
    const backup = join(d, "snapshot.db");
    backupDatabase(s.dbPath, backup);
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "After backup" }) }), 201);

    // In this process (the server's) and from another process: both refused, nothing changed.
    expect(() => restoreDatabase(backup, s.dbPath)).toThrow(DatabaseLockedError);
    const r = cli(["restore", backup, "--db", s.dbPath]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("in use by a running Textwire server");
    expect(readdirSync(d).filter((f) => f.includes(".bak-"))).toEqual([]);
    const listed = (await expectStatus(await s.api("/forms"), 200)).data.forms.map((f: any) => f.name).sort();
    expect(listed).toEqual(["After backup", "Before backup"]);

    await s.running.stop();
    expect(existsSync(lockPathOf(s.dbPath))).toBe(false);
    const ok = cli(["restore", backup, "--db", s.dbPath, "--json"]);
    expect(ok.code).toBe(0);
    const out = JSON.parse(ok.out);
    expect(out.previous).toMatch(/textwire\.db\.bak-\d{8}T\d{6}Z$/);
    expect(existsSync(out.previous)).toBe(true);
    // The kept file is complete on its own (its WAL was folded in): it still has both forms.
    const kept = new Database(out.previous, { readonly: true });
    expect((kept.query("SELECT count(*) AS n FROM forms").get() as any).n).toBe(2);
    kept.close();

    const again = await startTestServer({ db: s.dbPath }, { dir: d });
    const names = (await expectStatus(await again.api("/forms", { key: s.adminKey }), 200)).data.forms.map((f: any) => f.name);
    expect(names).toEqual(["Before backup"]);
    await expectStatus(await again.api(`/forms/${form.id}`, { key: s.adminKey }), 200);
    await again.running.stop();
  });

  test("a newer schema, a corrupt file and a non-Textwire file are refused; the database is untouched", () => {
    const d = dir();
    const db = join(d, "live.db");
    freshDb(db).close();
    const before = readFileSync(db);

    const newer = join(d, "newer.db");
    const n = freshDb(newer);
    n.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    n.close();
    expect(() => restoreDatabase(newer, db)).toThrow(/newer Textwire/);

    const garbage = join(d, "garbage.db");
    writeFileSync(garbage, "this is not a database at all".repeat(200));
    expect(() => restoreDatabase(garbage, db)).toThrow(BackupError);

    const other = join(d, "other.db");
    const o = new Database(other);
    o.exec("CREATE TABLE t (x)");
    o.close();
    expect(() => restoreDatabase(other, db)).toThrow(/not a Textwire database/);

    expect(() => restoreDatabase(join(d, "missing.db"), db)).toThrow(/no such file/);
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(readdirSync(d).filter((f) => f.includes(".bak-") || f.includes(".restore-"))).toEqual([]);
    expect(cli(["restore", newer, "--db", db]).code).toBe(1);
  });

  test("a stale lock (dead process) does not block a restore; an older schema is accepted", () => {
    const d = dir();
    const db = join(d, "live.db");
    freshDb(db).close();
    const src = join(d, "src.db");
    freshDb(src).close();
    writeFileSync(lockPathOf(db), JSON.stringify({ pid: 2 ** 22 + 12345, procStart: "1", bootId: null, host: require("node:os").hostname(), purpose: "serve", since: "x" }));
    const r = restoreDatabase(src, db);
    expect(r.previous).not.toBeNull();
    expect(existsSync(lockPathOf(db))).toBe(false);
    expect(inspectDatabase(db).integrity).toBe("ok");
  });

  test("a live lock from another process blocks the server from starting too", async () => {
    const d = dir();
    const db = join(d, "live.db");
    freshDb(db).close();
    // A real other process that stays alive.
    const sleeper = Bun.spawn(["sleep", "30"]);
    try {
      const release = acquireLock(db, "restore");
      release();
      writeFileSync(lockPathOf(db), JSON.stringify({ pid: sleeper.pid, procStart: null, bootId: null, host: require("node:os").hostname(), purpose: "restore", since: "now" }));
      await expect(startTestServer({ db }, { dir: d })).rejects.toThrow(/being restored/);
    } finally {
      sleeper.kill();
      await sleeper.exited;
    }
  });
});

describe("scheduled backups", () => {
  test("rotation keeps the newest N", () => {
    const d = dir();
    const db = join(d, "live.db");
    freshDb(db).close();
    const out = join(d, "backups");
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => now;
    for (let i = 0; i < 5; i++) {
      runScheduledBackup(db, out, 3, clock);
      now += 86_400_000;
    }
    const files = readdirSync(out).sort();
    expect(files).toEqual([
      backupFileName(Date.parse("2026-01-03T00:00:00Z")),
      backupFileName(Date.parse("2026-01-04T00:00:00Z")),
      backupFileName(Date.parse("2026-01-05T00:00:00Z")),
    ]);
    writeFileSync(join(out, "notes.txt"), "operator's own file");
    expect(pruneBackups(out, 1)).toHaveLength(2);
    expect(readdirSync(out).sort()).toEqual(["notes.txt", backupFileName(Date.parse("2026-01-05T00:00:00Z"))]);
  });

  test("two scheduled backups in the same second: retention keeps the newer (the ms-suffixed one)", () => {
    const d = dir();
    const out = join(d, "backups");
    const db = join(d, "live.db");
    freshDb(db).close();
    let now = Date.parse("2026-01-05T00:00:00.250Z");
    const clock = () => now;
    runScheduledBackup(db, out, 1, clock);
    now += 500; // same second, later
    const second = runScheduledBackup(db, out, 1, clock);
    expect(readdirSync(out)).toEqual([basename(second.backup.file)]);
    expect(basename(second.backup.file)).toBe("textwire-20260105T000000750Z.db");
  });

  test("serve --backup-dir --backup-every --backup-keep runs on a timer and prunes", async () => {
    const d = dir();
    const out = join(d, "backups");
    const s = await startTestServer({ backupDir: out, backupEveryMs: 150, backupKeep: 2 }, { dir: d });
    const backups = () => (existsSync(out) ? readdirSync(out).filter((f) => f.endsWith(".db")) : []);
    try {
      // Two runs of the timer at least (generous: on a loaded machine one backup can take a second).
      for (let waited = 0; waited < 10_000 && backups().length < 2; waited += 100) await Bun.sleep(100);
      await Bun.sleep(400); // and one more run, which must prune to --backup-keep
    } finally {
      // Stopping waits for a run in progress, so nothing is caught between a new file and its prune.
      await s.running.stop();
    }
    const files = backups();
    expect(files.length).toBe(2);
    for (const f of files) expect(inspectDatabase(join(out, f)).integrity).toBe("ok");
    const count = readdirSync(out).length;
    await Bun.sleep(400);
    expect(readdirSync(out).length).toBe(count); // the timer stopped with the server
  });
});
