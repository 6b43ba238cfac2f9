import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { backupDatabase, inspectDatabase, runScheduledBackup } from "../../../src/services/backups";
import { databaseBytes, memoryScratch, pacedCopy } from "../../../src/services/backup-scratch";
import { tempDir } from "../../helpers/server";

const dirs: string[] = [];
const dir = () => {
  const d = tempDir("textwire-scratch-test-");
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dbWithRows(path: string, rows: number) {
  const s = openSqlite(path);
  migrate(s);
  s.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, v TEXT)");
  const ins = s.prepare("INSERT INTO filler (v) VALUES (?)");
  s.transaction(() => {
    for (let i = 0; i < rows; i++) ins.run(`row ${i} ${"x".repeat(200)}`);
  })();
  return s;
}

describe("memory scratch for backups (no fsync stall for the webhook)", () => {
  test("a copy that fits with room to spare is built there; one too big for the space or for free memory is not", () => {
    const d = dir();
    expect(memoryScratch(1024, d, () => 64 * 2 ** 30)).toBe(d);
    expect(memoryScratch(2 ** 50, d, () => 64 * 2 ** 30)).toBeNull();
    expect(memoryScratch(1024, d, () => 1024)).toBeNull();
    expect(memoryScratch(1024, join(d, "missing"))).toBeNull();
    const file = join(d, "a-file");
    writeFileSync(file, "x");
    expect(memoryScratch(1024, file)).toBeNull();
  });

  test("the paced copy is byte-identical, spans many chunks and never overwrites a file", () => {
    const d = dir();
    const from = join(d, "from.bin");
    const data = Buffer.alloc(3 * 1024 * 1024 + 12345);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31 + (i >> 9)) & 0xff;
    writeFileSync(from, data);
    const to = join(d, "to.bin");
    pacedCopy(from, to, { chunkBytes: 256 * 1024, minPauseMs: 0 });
    expect(readFileSync(to).equals(data)).toBe(true);
    expect(() => pacedCopy(from, to)).toThrow();
    expect(readFileSync(to).equals(data)).toBe(true);
  });

  test("a backup built in scratch lands checked at its destination and leaves nothing behind in scratch", () => {
    const d = dir();
    const scratch = dir();
    const live = dbWithRows(join(d, "live.db"), 5_000);
    try {
      const out = join(d, "backups", "copy.db");
      const r = backupDatabase(join(d, "live.db"), out, Date.now, { buildIn: scratch });
      expect(r.file).toBe(out);
      expect(readdirSync(scratch)).toEqual([]);
      expect(readdirSync(join(d, "backups"))).toEqual(["copy.db"]);
      const info = inspectDatabase(out);
      expect(info.integrity).toBe("ok");
      const { n } = live.query("SELECT count(*) AS n FROM filler").get() as { n: number };
      expect(n).toBe(5_000);
      expect(databaseBytes(join(d, "live.db"))).toBeGreaterThan(r.bytes / 2);
    } finally {
      live.close();
    }
  });

  test("a download copy (not durable) is made beside its name; a scheduled run keeps its retention", () => {
    const d = dir();
    const live = dbWithRows(join(d, "live.db"), 100);
    try {
      const out = join(d, "dl", "download.db");
      const r = backupDatabase(join(d, "live.db"), out, Date.now, { durable: false });
      expect(existsSync(r.file)).toBe(true);
      expect(readdirSync(join(d, "dl"))).toEqual(["download.db"]);
      let t = Date.parse("2026-01-01T00:00:00Z");
      for (let i = 0; i < 3; i++) runScheduledBackup(join(d, "live.db"), join(d, "sched"), 2, () => (t += 60_000));
      expect(readdirSync(join(d, "sched")).filter((f) => f.endsWith(".db")).length).toBe(2);
      expect(readdirSync(join(d, "sched")).some((f) => f.includes("partial"))).toBe(false);
    } finally {
      live.close();
    }
  });
});
