#!/usr/bin/env bun
/**
 * Backup and restore speed on a database of a given size, then the webhook
 * path while the server makes backups: a server child process on that database takes webhook
 * load from a second process (wrk, or `--load js`: scripts/bench/lib/load.ts) for `--seconds` without a backup, then
 * again while `POST /v1/admin/backup` downloads run back to back; it prints both p99s and their
 * ratio (target: during < 2 × without).
 *   bun scripts/bench/backup.ts [MiB=200] [--seconds 6] [--concurrency 4] [--no-load]
 * Prints the machine line, then time and throughput of `backup` (VACUUM INTO + integrity check)
 * and `restore`, then the webhook figures.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { backupDatabase, restoreDatabase } from "../../src/services/backups";
import { runBackupJob } from "../../src/services/backup-thread";
import { benchAccount, loadGeneratorLine, runLoad, type LoadResult } from "./lib/proc";

/**
 * In this process: the event loop's lag and a FULL-sync write's latency every 5 ms while a backup
 * runs on the Worker, against the same backup on the main thread (what the server did before).
 */
const load = (base: string, forms: string[], seconds: number, offset: number) => runLoad(base, forms, { concurrency: CONCURRENCY, seconds, offset });

async function loopDuringBackup(db: string, dir: string) {
  const conn = openSqlite(db);
  conn.exec("CREATE TABLE IF NOT EXISTS bench_probe (id INTEGER PRIMARY KEY, v TEXT)");
  const write = conn.prepare("INSERT INTO bench_probe (v) VALUES ('x')");
  const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? NaN;
  async function measure(run: () => Promise<unknown>) {
    const lags: number[] = [];
    const writes: number[] = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      lags.push(now - last - 5);
      last = now;
      write.run();
      writes.push(performance.now() - now);
    }, 5);
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    clearInterval(timer);
    lags.push(performance.now() - last - 5); // a loop that never turned lagged the whole time
    return `${ms.toFixed(0)} ms; loop lag p99 ${p99(lags).toFixed(1)} ms, max ${Math.max(...lags).toFixed(1)} ms; writes ${writes.length}, p99 ${writes.length ? p99(writes).toFixed(1) : "-"} ms, max ${writes.length ? Math.max(...writes).toFixed(1) : "-"} ms`;
  }
  try {
    console.log(`event loop, idle 2 s:       ${await measure(() => Bun.sleep(2_000))}`);
    console.log(`event loop, Worker backup:  ${await measure(() => runBackupJob({ op: "backup", dbPath: db, outFile: join(dir, "worker-copy.db"), now: Date.now() }))}`);
    console.log(`event loop, inline backup:  ${await measure(async () => backupDatabase(db, join(dir, "inline-copy.db")))}`);
  } finally {
    conn.close();
  }
}

/** A server child process on `db`; resolves once it listens (the admin key only on a first start). */
async function startServer(db: string, extra: string[] = []) {
  const key = existsSync(db) ? null : benchAccount([bun, join(root, "src/main.ts")], db).key;
  const server = Bun.spawn([bun, join(root, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000", ...extra], {
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = server.stdout.getReader();
  let out = "";
  let m: RegExpMatchArray | null = null;
  while (!(m = out.match(/Textwire listening on (http:\/\/\S+)/))) {
    const { done, value } = await reader.read();
    if (done) throw new Error("server ended: " + out);
    out += new TextDecoder().decode(value);
  }
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { server, key, base: m[1].replace("localhost", "127.0.0.1") };
}

async function webhookDuringBackups(db: string, scheduledDir: string) {
  const fmt = (r: LoadResult) => `${String(r.rps).padStart(5)} req/s   p50 ${r.p50Ms.toFixed(2)} ms   p99 ${r.p99Ms.toFixed(2)} ms   max ${r.maxMs.toFixed(1)} ms   errors ${r.errors}/${r.requests}`;
  const verdict = (during: LoadResult, without: LoadResult) => {
    const ratio = during.p99Ms / without.p99Ms;
    return `p99 ratio ${ratio.toFixed(2)} — ${ratio < 2 ? "PASS" : "FAIL"} p99 during < 2 × without`;
  };
  const forms: string[] = [];
  let without: LoadResult;
  let offset = 0;
  const first = await startServer(db);
  try {
    if (!first.key) throw new Error("no admin key printed: the bench needs a fresh database");
    const auth = { Authorization: `Bearer ${first.key}` };
    const base = first.base;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/v1/forms`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `Bench form ${i}`, messageTemplate: "Hi {{firstName}}, thanks!", fields: [{ name: "firstName", type: "text", label: "First name" }, { name: "lastName", type: "text", label: "Last name" }, { name: "email", type: "email", label: "E-mail" }, { name: "company", type: "text", label: "Company" }] }),
      });
      if (res.status !== 201) throw new Error(`form create failed: ${res.status} ${await res.text()}`);
      forms.push(((await res.json()) as { data: { form: { id: string } } }).data.form.id);
    }
    const warm = await load(base, forms, 2, 0);
    without = await load(base, forms, SECONDS, warm.nextOffset);
    let backing = true;
    const backups: number[] = [];
    const loop = (async () => {
      while (backing) {
        const t0 = performance.now();
        const res = await fetch(`${base}/v1/admin/backup`, { method: "POST", headers: auth });
        const bytes = (await res.arrayBuffer()).byteLength;
        if (res.status !== 200) throw new Error(`backup answered ${res.status}`);
        backups.push(performance.now() - t0);
        void bytes;
      }
    })();
    await Bun.sleep(200); // the first backup is under way
    const during = await load(base, forms, SECONDS, without.nextOffset);
    offset = during.nextOffset;
    backing = false;
    await loop;
    console.log(`webhook load: ${CONCURRENCY} connections, ${SECONDS} s each, server src/main.ts on the ${mib} MiB database`);
    console.log(`  without backups:         ${fmt(without)}`);
    console.log(`  during admin downloads:  ${fmt(during)}   (${backups.length} downloads, ${(backups.reduce((a, b) => a + b, 0) / Math.max(1, backups.length)).toFixed(0)} ms each)`);
    console.log(`    ${verdict(during, without)}`);
  } finally {
    first.server.kill("SIGTERM");
    await first.server.exited;
  }
  // Scheduled backups: the same database under a server that makes one every second (each on
  // the backup Worker, built in memory when it fits, then written to --backup-dir at a pace).
  const second = await startServer(db, ["--backup-dir", scheduledDir, "--backup-every", "1s", "--backup-keep", "2"]);
  try {
    const warm = await load(second.base, forms, 2, offset);
    const during = await load(second.base, forms, SECONDS, warm.nextOffset);
    const made = readdirSync(scheduledDir).filter((f) => f.endsWith(".db")).length;
    console.log(`  during scheduled backups: ${fmt(during)}   (one started every second; ${made} kept in --backup-dir)`);
    console.log(`    ${verdict(during, without)}`);
  } finally {
    second.server.kill("SIGTERM");
    await second.server.exited;
  }
}

const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const mib = Number(argv[0] && !argv[0].startsWith("--") ? argv[0] : 200);
const SECONDS = opt("seconds", 6);
const CONCURRENCY = opt("concurrency", 4);
const root = join(import.meta.dir, "..", "..");
const bun = join(root, "node_modules", ".bin", "bun");
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
  if (!argv.includes("--no-load")) console.log(loadGeneratorLine());
  const b = backupDatabase(db, join(dir, "copy.db"));
  console.log(`backup:  ${(b.bytes / 2 ** 20).toFixed(0)} MiB in ${b.durationMs} ms (${((b.bytes / 2 ** 20) / (b.durationMs / 1000)).toFixed(0)} MiB/s, incl. integrity_check)`);
  const r = restoreDatabase(join(dir, "copy.db"), db);
  console.log(`restore: ${(b.bytes / 2 ** 20).toFixed(0)} MiB in ${r.durationMs} ms (checks, staged copy, swap)`);
  await loopDuringBackup(db, dir);
  if (!argv.includes("--no-load")) await webhookDuringBackups(db, join(dir, "scheduled"));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
