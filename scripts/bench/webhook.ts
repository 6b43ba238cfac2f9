#!/usr/bin/env bun
/**
 * Webhook benchmark. Starts the built server (dist/textwire; built first when
 * missing, or `--source` to run src/main.ts) on a temp database with 50 active forms and the webhook
 * limit raised, drives it from a second process on loopback (wrk through scripts/bench/lib/wrk.ts,
 * or with `--load js` the JS generator scripts/bench/lib/load.ts: realistic 5-field body, about
 * half new contacts) at 64 concurrent connections, and prints, all from one run:
 *
 *  - requests/s, p50/p99, errors, the server's peak RSS and the WAL file's peak size;
 *  - two ceilings (scripts/bench/lib/ceiling.ts): a bare Bun.serve doing the same durable writes
 *    with the same group commit and settings on a minimal schema, and on our schema (the real
 *    migrations); our throughput as a ratio of each;
 *  - a per-stage breakdown in µs/request from a separate short phase on a server started with
 *    --stage-timing (the sums in /metrics, read before and after);
 *  - an A/B of the SQLite settings: the defaults against each one turned off
 *    (--sqlite-temp-store file, --sqlite-cache-mb 0, --checkpoint inline, --commit-sync inline), short runs in
 *    interleaved rounds.
 *
 *   bun scripts/bench/webhook.ts [--seconds 10] [--ab-seconds 5] [--ab-rounds 2] [--concurrency 64] [--source] [--no-ab] [--load wrk|js] [--load-threads 2]
 *
 * --compare DIR: only this tree's server against DIR's (another checkout's src/main.ts, e.g. main's
 * exported with `git archive`), both from source, in --ab-rounds interleaved rounds of --ab-seconds.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";
import { peakRssMb as peakRss, readUntil, machineLine, loadGeneratorLine, runLoad, type LoadResult } from "./lib/proc";
import { STAGES, STAGE_LABELS, type Stage } from "../../src/lib/stage-timing";
import { stageSums, stagesBetween, startWebhookServer } from "./lib/webhook-server";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 10);
const AB_SECONDS = opt("ab-seconds", Math.max(3, Math.round(SECONDS / 2)));
const AB_ROUNDS = opt("ab-rounds", 2);
const CONCURRENCY = opt("concurrency", 64);
const WARMUP_SECONDS = 2;
const FORMS = 50;
const useSource = argv.includes("--source");
const runAb = !argv.includes("--no-ab");
const compareDir = argv.includes("--compare") ? argv[argv.indexOf("--compare") + 1] : null;
const bun = join(root, "node_modules", ".bin", "bun");
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-"));

type Run = LoadResult & { peakRssMb: number; peakWalMb: number; lagP99?: number; rowsPerBatch?: number };

const load = (base: string, forms: string[], seconds: number, offset: number) => runLoad(base, forms, { concurrency: CONCURRENCY, seconds, offset });

/** Samples the -wal file's size while `work` runs. */
async function watchWal<T>(db: string, work: () => Promise<T>): Promise<{ result: T; peakWalMb: number }> {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, statSync(db + "-wal").size);
    } catch {}
  }, 50);
  try {
    return { result: await work(), peakWalMb: peak / 1_048_576 };
  } finally {
    clearInterval(timer);
  }
}

async function serverCommand(): Promise<{ cmd: string[]; runtime: string }> {
  if (useSource) return { cmd: [bun, join(root, "src/main.ts")], runtime: "src/main.ts (bun)" };
  const exe = join(root, "dist", "textwire");
  if (!existsSync(exe)) {
    console.error("building dist/textwire …");
    const built = await $`${bun} ${join(root, "scripts/build.ts")}`.quiet().nothrow();
    if (built.exitCode !== 0) console.error("build failed; benchmarking src/main.ts instead:\n" + built.stderr.toString().slice(0, 400));
  }
  return existsSync(exe) ? { cmd: [exe], runtime: "dist/textwire" } : { cmd: [bun, join(root, "src/main.ts")], runtime: "src/main.ts (bun)" };
}

let runs = 0;
/** One server with `flags`: forms created, warmed up, measured for `seconds`. */
async function benchTextwire(flags: string[], seconds: number, opts: { stages?: boolean; cmd?: string[] } = {}): Promise<Run & { stages?: Record<Stage, number>; timed?: number }> {
  const cmd = opts.cmd ?? (await serverCommand()).cmd;
  const db = join(dir, `textwire-${runs++}.db`);
  const { proc, key, base, forms } = await startWebhookServer(cmd, db, flags, FORMS);
  try {
    const warm = await load(base, forms, WARMUP_SECONDS, 0);
    const before = opts.stages ? await stageSums(base, key) : undefined;
    const { result: r, peakWalMb } = await watchWal(db, () => load(base, forms, seconds, warm.nextOffset));
    const after = opts.stages ? await stageSums(base, key) : undefined;
    const rss = peakRss(proc.pid);
    // Applier lag: time from a 200 to its apply, from /metrics.
    const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
    const lagP99 = Number(/textwire_intake_applier_lag_ms\{quantile="0.99"\} (\S+)/.exec(metrics)?.[1] ?? NaN);
    const rowsPerBatch = Number(/textwire_intake_applier_rows_total (\d+)/.exec(metrics)?.[1] ?? NaN) / Number(/textwire_intake_applier_batches_total (\d+)/.exec(metrics)?.[1] ?? NaN);
    const stages = before && after ? stagesBetween(before, after) : undefined;
    return { ...r, peakRssMb: rss, peakWalMb, lagP99, rowsPerBatch, stages, timed: after && before ? after.requests - before.requests : undefined };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function benchCeiling(schema: "minimal" | "ours", seconds: number): Promise<Run> {
  const db = join(dir, `ceiling-${runs++}.db`);
  const proc = Bun.spawn([bun, join(root, "scripts/bench/lib/ceiling.ts"), "--db", db, "--forms", String(FORMS), "--schema", schema], { stdout: "pipe", stderr: "inherit" });
  try {
    const m = await readUntil(proc.stdout, /READY (\d+) (\S+)/);
    const base = `http://127.0.0.1:${m[1]}`;
    const forms = m[2].split(",");
    const warm = await load(base, forms, WARMUP_SECONDS, 0);
    const { result: r, peakWalMb } = await watchWal(db, () => load(base, forms, seconds, warm.nextOffset));
    return { ...r, peakRssMb: peakRss(proc.pid), peakWalMb };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const fmt = (name: string, r: Run) =>
  `${name.padEnd(34)} ${String(r.rps).padStart(7)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms   errors ${r.errors}/${r.requests}   peak RSS ${r.peakRssMb.toFixed(1)} MB   peak WAL ${r.peakWalMb.toFixed(1)} MB`;

/**
 * Runs each named variant AB_ROUNDS times in interleaved rounds (the order turns each round, so a
 * burst of load from elsewhere on the machine does not land on one variant only).
 */
async function interleaved<T, R>(variants: Array<[string, T]>, run: (v: T) => Promise<R>): Promise<Map<string, R[]>> {
  const results = new Map<string, R[]>(variants.map(([n]) => [n, []]));
  for (let round = 0; round < AB_ROUNDS; round++) {
    for (let i = 0; i < variants.length; i++) {
      const [name, v] = variants[(i + round) % variants.length];
      results.get(name)!.push(await run(v));
    }
  }
  return results;
}

try {
  if (compareDir) {
    console.log(machineLine());
    console.log(loadGeneratorLine());
    const sides: Array<[string, string[]]> = [
      ["this tree", [bun, join(root, "src/main.ts")]],
      [compareDir, [bun, join(compareDir, "src/main.ts")]],
    ];
    const runs = await interleaved(sides, (cmd) => benchTextwire([], AB_SECONDS, { cmd }));
    console.log(`${AB_ROUNDS} interleaved rounds of ${AB_SECONDS} s, ${CONCURRENCY} connections, from source:`);
    for (const [name] of sides) {
      for (const r of runs.get(name)!) console.log(fmt(name, r) + `   applier lag p99 ${(r.lagP99 ?? NaN).toFixed(0)} ms, ${(r.rowsPerBatch ?? NaN).toFixed(1)} rows/batch`);
    }
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
  const { runtime } = await serverCommand();
  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`load: ${CONCURRENCY} concurrent connections, ${SECONDS} s measured after ${WARMUP_SECONDS} s warm-up, ${FORMS} forms, 5-field JSON body, ~half new contacts`);
  const ours = await benchTextwire([], SECONDS);
  console.log(fmt(`textwire (${runtime})`, ours));
  console.log(`applier lag p99 ${(ours.lagP99 ?? NaN).toFixed(1)} ms (200 → applied, last 4096 submissions)`);
  const minimal = await benchCeiling("minimal", SECONDS);
  console.log(fmt("ceiling: bare, minimal schema", minimal));
  const ourSchema = await benchCeiling("ours", SECONDS);
  console.log(fmt("ceiling: bare, our schema", ourSchema));
  const rMin = ours.rps / minimal.rps;
  const rOurs = ours.rps / ourSchema.rps;
  console.log(`ratio: ${rMin.toFixed(2)} of the minimal-schema ceiling, ${rOurs.toFixed(2)} of the our-schema ceiling`);

  const staged = await benchTextwire(["--stage-timing"], AB_SECONDS, { stages: true });
  console.log(`\nstages (µs/request; separate ${AB_SECONDS} s phase with --stage-timing: ${staged.rps} req/s, ${staged.timed} requests timed)`);
  const total = 1e6 / staged.rps;
  let sum = 0;
  for (const s of STAGES) {
    const v = staged.stages![s];
    sum += v;
    console.log(`  ${STAGE_LABELS[s].padEnd(66)} ${v.toFixed(1).padStart(7)}`);
  }
  console.log(`  ${"other (Elysia after the route, Bun's HTTP, body read, awaits, GC, load generator)".padEnd(66)} ${(total - sum).toFixed(1).padStart(7)}`);
  console.log(`  ${"total (wall time per request = 1 / throughput)".padEnd(66)} ${total.toFixed(1).padStart(7)}`);

  if (runAb) {
    // Each variant's figures are the mean of its interleaved rounds.
    console.log(`\nSQLite settings A/B (${AB_ROUNDS} interleaved rounds of ${AB_SECONDS} s each, --stage-timing on; mean, and the ratio to the defaults):`);
    const variants: Array<[string, string[]]> = [
      ["defaults", []],
      ["temp_store file (SQLite's default)", ["--sqlite-temp-store", "file"]],
      ["page cache 2 MiB (SQLite's default)", ["--sqlite-cache-mb", "0"]],
      ["checkpoints inline (in the commit)", ["--checkpoint", "inline"]],
      ["commit fsync inline (main thread, lock held)", ["--commit-sync", "inline"]],
    ];
    type Timed = Run & { stages?: Record<Stage, number> };
    const results: Map<string, Timed[]> = await interleaved(variants, (flags) => benchTextwire([...flags, "--stage-timing"], AB_SECONDS, { stages: true }));
    const mean = (rs: Timed[], f: (r: Timed) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
    const summary = (rs: Run[]): Run => ({
      ...rs[0],
      rps: Math.round(mean(rs, (r) => r.rps)),
      p50Ms: mean(rs, (r) => r.p50Ms),
      p99Ms: mean(rs, (r) => r.p99Ms),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      requests: rs.reduce((a, r) => a + r.requests, 0),
      peakRssMb: Math.max(...rs.map((r) => r.peakRssMb)),
      peakWalMb: Math.max(...rs.map((r) => r.peakWalMb)),
    });
    const base = summary(results.get("defaults")!);
    for (const [name] of variants) {
      const r = summary(results.get(name)!);
      const each = results.get(name)!.map((x) => x.rps).join("/");
      // The write itself, from the server's own clock: less exposed to the rest of the machine.
      const write = mean(results.get(name)!, (x) => x.stages!.writeJob + x.stages!.commit);
      const lag = mean(results.get(name)!, (x) => x.lagP99 ?? NaN);
      console.log(fmt(name, r) + (name === "defaults" ? "" : `   ×${(r.rps / base.rps).toFixed(2)}`) + `   write job + commit ${write.toFixed(0)} µs/req   applier lag p99 ${lag.toFixed(0)} ms   (runs ${each} req/s)`);
    }
  }

  const checks = [
    [`≥ 10,000 req/s`, ours.rps >= 10_000],
    [`≥ 0.6 of the minimal-schema ceiling`, rMin >= 0.6],
    [`p99 < 50 ms`, ours.p99Ms < 50],
    [`no errors`, ours.errors === 0],
    [`peak RSS < 150 MB`, ours.peakRssMb < 150],
  ] as const;
  console.log("\ntargets: " + checks.map(([n, ok]) => `${ok ? "PASS" : "FAIL"} ${n}`).join(" · "));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
