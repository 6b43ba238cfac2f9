#!/usr/bin/env bun
/**
 * Contacts import benchmark. For each case it starts a fresh server child
 * process (src/main.ts, or dist/textwire with --binary) on a temp database, posts a 50 MiB file
 * to POST /v1/contacts/import while a second loop asks GET /health every 20 ms, then prints the
 * import time, the server's peak RSS (VmHWM) and the /health latencies during the import.
 *
 * Cases: "rows" — ~50k valid contacts with a ~1 KB note each (upserts);
 *        "one cell" — a header and one 50 MiB cell (refused as a row error, never kept).
 * Targets: peak RSS < 250 MB, /health p99 < 50 ms.
 *
 *   bun scripts/bench/import.ts [--mib 50] [--binary]
 */
import { createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { benchAccount, peakRssMb, readUntil } from "./lib/proc";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const MIB = argv.includes("--mib") ? Number(argv[argv.indexOf("--mib") + 1]) : 50;
const bun = join(root, "node_modules", ".bin", "bun");
const exe = join(root, "dist", "textwire");
const cmd = argv.includes("--binary") && existsSync(exe) ? [exe] : [existsSync(bun) ? bun : process.execPath, join(root, "src/main.ts")];
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-import-"));


async function writeFile(path: string, write: (put: (s: string) => Promise<void>) => Promise<void>) {
  const out = createWriteStream(path);
  const put = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r())));
  await write(put);
  await new Promise<void>((r) => out.end(r));
}

/** Assigned US area codes: every generated number is a valid, distinct NANP number. */
const AREAS = [201, 202, 203, 205, 206, 207, 208, 209, 210, 212, 213, 214, 215, 216, 217, 218];

/** Files stay just under `bytes` (the import limit is 50 MiB). */
async function rowsFile(path: string, bytes: number) {
  await writeFile(path, async (put) => {
    await put("phoneNumber,firstName,lastName,email,tags,customFields.company,notes\n");
    let size = 0;
    const note = "Asked about opening hours, parking and the spring offer; prefers texts after 5pm. ".repeat(12);
    for (let i = 0; size < bytes - 4096; i++) {
      const k = Math.floor(i / AREAS.length);
      let exchange = 200 + (k % 700);
      if (exchange % 100 === 11) exchange++;
      const phone = `+1${AREAS[i % AREAS.length]}${exchange}${String(Math.floor(k / 700) % 10000).padStart(4, "0")}`;
      const line = `${phone},Ann${i},"O'Neil, Jr.",ann${i}@example.com,vip;lead,Acme ${i % 97},"${note}${i}"\n`;
      size += line.length;
      await put(line);
    }
  });
}

async function oneCellFile(path: string, bytes: number) {
  await writeFile(path, async (put) => {
    await put('phoneNumber,notes\n+12015550100,"');
    const block = "x".repeat(1 << 20);
    for (let n = 1 << 20; n < bytes; n += block.length) await put(block);
    await put('"\n+12015550101,after the big cell\n');
  });
}


const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};

async function runCase(name: string, file: string) {
  const { key } = benchAccount(cmd, join(dir, `${name.replace(/\W/g, "")}.db`));
  const proc = Bun.spawn([...cmd, "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, `${name.replace(/\W/g, "")}.db`), "--log-format", "json"], { stdout: "pipe", stderr: "ignore" });
  try {
    const m = await readUntil(proc.stdout, /Textwire listening on (http:\/\/\S+)/);
    void (async () => {
      // Keep draining the log so the server never blocks on a full pipe.
      const r = proc.stdout.getReader();
      while (!(await r.read()).done);
    })().catch(() => {});
    const base = m[1].replace("localhost", "127.0.0.1");
    // Warm up (connection, first-call compilation) so the figures below are about the import.
    for (let i = 0; i < 20; i++) await (await fetch(`${base}/health`)).arrayBuffer();
    const rssBefore = peakRssMb(proc.pid);
    // The same probe with no import running: this machine's floor.
    const idle: number[] = [];
    for (const stop = performance.now() + 2_000; performance.now() < stop; ) {
      const t = performance.now();
      await (await fetch(`${base}/health`)).arrayBuffer();
      idle.push(performance.now() - t);
      await Bun.sleep(20);
    }
    let importing = true;
    const health: number[] = [];
    const probe = (async () => {
      while (importing) {
        const t0 = performance.now();
        await (await fetch(`${base}/health`)).arrayBuffer();
        health.push(performance.now() - t0);
        await Bun.sleep(20);
      }
    })();
    const t0 = performance.now();
    const res = await fetch(`${base}/v1/contacts/import`, { method: "POST", body: Bun.file(file), headers: { Authorization: `Bearer ${key}`, "Content-Type": "text/csv" } });
    const body = (await res.json()) as { data?: { created: number; updated: number; errors: unknown[]; errorCount?: number } };
    const seconds = (performance.now() - t0) / 1000;
    importing = false;
    if (process.env.BENCH_DEBUG) console.error(name, health.map((h) => h.toFixed(0)).join(" "));
    await probe;
    const d = body.data;
    return {
      name,
      mib: statSync(file).size / 2 ** 20,
      status: res.status,
      seconds,
      result: d ? `${d.created} created, ${d.updated} updated, ${d.errorCount ?? d.errors.length} errors${d.errors.length ? ", first: " + JSON.stringify(d.errors[0]).slice(0, 160) : ""}` : JSON.stringify(body).slice(0, 200),
      rssBefore,
      rssPeak: peakRssMb(proc.pid),
      healthN: health.length,
      p50: pct(health, 50),
      p99: pct(health, 99),
      max: Math.max(...health),
      idleP50: pct(idle, 50),
      idleP99: pct(idle, 99),
    };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

try {
  const bytes = MIB * 2 ** 20;
  const rows = join(dir, "rows.csv");
  const cell = join(dir, "cell.csv");
  await rowsFile(rows, bytes);
  await oneCellFile(cell, bytes);
  const results = [await runCase("rows", rows), await runCase("one cell", cell)];
  const cpu = cpus();
  console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, bun ${Bun.version}, server: ${cmd.length === 1 ? "dist/textwire" : "src/main.ts"}`);
  for (const r of results) {
    console.log(
      `${r.name.padEnd(9)} ${r.mib.toFixed(1)} MiB → ${r.status} in ${r.seconds.toFixed(1)} s (${r.result}); peak RSS ${r.rssPeak.toFixed(0)} MB (idle ${r.rssBefore.toFixed(0)} MB); ` +
        `/health during it: ${r.healthN} probes, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms (idle: p50 ${r.idleP50.toFixed(1)} ms, p99 ${r.idleP99.toFixed(1)} ms)`,
    );
  }
  const ok = (b: boolean) => (b ? "PASS" : "FAIL");
  console.log(`targets: ${ok(results.every((r) => r.rssPeak < 250))} peak RSS < 250 MB · ${ok(results.every((r) => r.p99 < 50))} /health p99 < 50 ms · ${ok(results.every((r) => r.status === 200))} 200`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
