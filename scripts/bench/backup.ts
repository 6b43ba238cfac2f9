#!/usr/bin/env bun
/**
 * Backup and restore speed on a database of a given size.
 *   bun scripts/bench/backup.ts [MiB=200]
 * Prints the machine line, then time and throughput of `backup` (VACUUM INTO + integrity check)
 * and `restore`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { backupDatabase, restoreDatabase } from "../../src/services/backups";

const mib = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-backup-"));
try {
  const db = join(dir, "live.db");
  const s = openSqlite(db);
  migrate(s);
  s.exec("CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)");
  const ins = s.prepare("INSERT INTO bench_rows (payload) VALUES (?)");
  const row = "x".repeat(480);
  const rows = Math.round((mib * 1024 * 1024) / 512);
  s.exec("BEGIN");
  for (let i = 0; i < rows; i++) ins.run(row + i);
  s.exec("COMMIT");
  s.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  s.close();
  console.log(`machine: ${cpus()[0]?.model ?? "?"} × ${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${process.platform}-${process.arch}, Bun ${Bun.version}`);
  const b = backupDatabase(db, join(dir, "copy.db"));
  console.log(`backup:  ${(b.bytes / 2 ** 20).toFixed(0)} MiB in ${b.durationMs} ms (${((b.bytes / 2 ** 20) / (b.durationMs / 1000)).toFixed(0)} MiB/s, incl. integrity_check)`);
  const r = restoreDatabase(join(dir, "copy.db"), db);
  console.log(`restore: ${(b.bytes / 2 ** 20).toFixed(0)} MiB in ${r.durationMs} ms (checks, staged copy, swap)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
