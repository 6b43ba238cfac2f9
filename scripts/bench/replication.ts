#!/usr/bin/env bun
/**
 * Replication benchmark (docs/api-decisions.md, "Continuous replication with Litestream"). The
 * webhook's load (wrk, or the JS generator with `--load js`: scripts/bench/lib/proc.ts runLoad; from
 * its own process, 50 forms, 64 connections) on a
 * server from source in three variants, in interleaved rounds of the same run:
 *
 *  - off:        no replica;
 *  - litestream: --replicate file://…, Textwire's checkpoints following Litestream's (the default);
 *  - own:        --replicate with --replica-checkpoints own (Textwire's TRUNCATE/RESTART as without
 *                replication) — the measurement behind that default.
 *
 * Per variant: requests/s (and the ratio to "off"), p99 latency, the peak WAL; with a replica, the
 * replication lag /health reports sampled every 100 ms under load (p50/p99/max), and the
 * replica's generations and snapshots after the load and after IDLE seconds of quiet (Textwire's
 * idle TRUNCATE comes then), counted in the replica folder. Then, with "litestream" only, the lag
 * under a steady paced load of --rate requests/s (far below the ceiling, still far above a shop's
 * busiest hour): what an owner's server sees.
 *
 *   bun scripts/bench/replication.ts [--seconds 10] [--rounds 2] [--idle 3] [--concurrency 64] [--rate 200] [--load wrk|js] [--load-threads 2]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadGenerator, loadGeneratorLine, machineLine, peakRssMb, runLoad, type LoadResult } from "./lib/proc";
import { startWebhookServer } from "./lib/webhook-server";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 10);
const ROUNDS = opt("rounds", 2);
const IDLE = opt("idle", 3);
const CONCURRENCY = opt("concurrency", 64);
const RATE = opt("rate", 200);
const FORMS = 50;
const WARMUP_SECONDS = 2;
const bun = join(root, "node_modules", ".bin", "bun");
const cmd = [bun, join(root, "src/main.ts")];
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-repl-"));

type Variant = "off" | "litestream" | "own";
interface Run extends LoadResult {
  peakWalMb: number;
  peakRssMb: number;
  lags: number[];
  pacedLags?: number[];
  pacedRps?: number;
  generations?: number;
  snapshots?: number;
  generationsIdle?: number;
  snapshotsIdle?: number;
}

function replicaCounts(replica: string): { generations: number; snapshots: number } {
  try {
    const gens = readdirSync(join(replica, "generations"));
    let snapshots = 0;
    for (const g of gens) {
      try {
        snapshots += readdirSync(join(replica, "generations", g, "snapshots")).length;
      } catch {}
    }
    return { generations: gens.length, snapshots };
  } catch {
    return { generations: 0, snapshots: 0 };
  }
}

let n = 0;
async function run(variant: Variant): Promise<Run> {
  const i = n++;
  const db = join(dir, `textwire-${i}.db`);
  const replica = join(dir, `replica-${i}`);
  const flags = variant === "off" ? [] : ["--replicate", `file://${replica}`, "--replica-checkpoints", variant];
  const { proc, base, forms } = await startWebhookServer(cmd, db, flags, FORMS);
  try {
    if (variant !== "off") {
      // Replicating before the load starts (the first snapshot made).
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const h = (await (await fetch(`${base}/health`)).json()) as any;
        if (h.replication?.state === "ok") break;
        await Bun.sleep(100);
      }
    }
    const warm = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: WARMUP_SECONDS, offset: 0 });
    let peakWal = 0;
    const lags: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          peakWal = Math.max(peakWal, statSync(db + "-wal").size);
        } catch {}
        try {
          const h = (await (await fetch(`${base}/health`)).json()) as any;
          if (typeof h.replication?.lagSeconds === "number") lags.push(h.replication.lagSeconds);
        } catch {}
        await Bun.sleep(100);
      }
    })();
    const r = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: SECONDS, offset: warm.nextOffset });
    sampling = false;
    await sampler;
    const out: Run = { ...r, peakWalMb: peakWal / 1_048_576, peakRssMb: peakRssMb(proc.pid), lags };
    if (variant !== "off") {
      const a = replicaCounts(replica);
      await Bun.sleep(IDLE * 1000);
      const b = replicaCounts(replica);
      Object.assign(out, { generations: a.generations, snapshots: a.snapshots, generationsIdle: b.generations, snapshotsIdle: b.snapshots });
    }
    if (variant === "litestream") {
      const pacedLags: number[] = [];
      let pacing = true;
      const sampling = (async () => {
        while (pacing) {
          try {
            const h = (await (await fetch(`${base}/health`)).json()) as any;
            if (typeof h.replication?.lagSeconds === "number") pacedLags.push(h.replication.lagSeconds);
          } catch {}
          await Bun.sleep(100);
        }
      })();
      const paced = await runLoad(base, forms, { concurrency: 16, seconds: SECONDS, offset: r.nextOffset, rate: RATE });
      pacing = false;
      await sampling;
      Object.assign(out, { pacedLags, pacedRps: paced.rps });
    }
    return out;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const median = (xs: number[]) => pct(xs, 0.5);

try {
  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`load: ${CONCURRENCY} connections, ${FORMS} forms, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, ${ROUNDS} interleaved rounds; replica: a folder on the same disk`);
  const variants: Variant[] = ["off", "litestream", "own"];
  const results = new Map<Variant, Run[]>(variants.map((v) => [v, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(k + round) % variants.length];
      const r = await run(v);
      results.get(v)!.push(r);
      console.log(
        `  round ${round + 1} ${v.padEnd(10)} ${String(r.rps).padStart(6)} req/s  p99 ${r.p99Ms.toFixed(1)} ms  errors ${r.errors}  peak WAL ${r.peakWalMb.toFixed(1)} MB` +
          (v === "off" ? "" : `  lag p99 ${pct(r.lags, 0.99).toFixed(2)} s  generations ${r.generations}→${r.generationsIdle} (idle)  snapshots ${r.snapshots}→${r.snapshotsIdle}`),
      );
    }
  }
  const offRps = median(results.get("off")!.map((r) => r.rps));
  const summary: Record<string, unknown> = {};
  console.log("\nvariant     req/s (median)  ×off   p99 ms  lag p50/p99/max s   generations after load / idle   snapshots after load / idle");
  for (const v of variants) {
    const rs = results.get(v)!;
    const rps = median(rs.map((r) => r.rps));
    const lags = rs.flatMap((r) => r.lags);
    const line = {
      rps,
      ratio: Math.round((rps / offRps) * 100) / 100,
      p99Ms: median(rs.map((r) => r.p99Ms)),
      lagP50: pct(lags, 0.5),
      lagP99: pct(lags, 0.99),
      lagMax: Math.max(...lags, 0),
      generations: rs.map((r) => `${r.generations}/${r.generationsIdle}`).join(" "),
      snapshots: rs.map((r) => `${r.snapshots}/${r.snapshotsIdle}`).join(" "),
      peakWalMb: Math.max(...rs.map((r) => r.peakWalMb)),
    };
    summary[v] = line;
    console.log(
      `${v.padEnd(11)} ${String(rps).padStart(14)}  ${line.ratio.toFixed(2).padStart(4)}  ${line.p99Ms.toFixed(1).padStart(7)}  ` +
        (v === "off" ? "-".padEnd(18) : `${line.lagP50.toFixed(2)}/${line.lagP99.toFixed(2)}/${line.lagMax.toFixed(2)}`.padEnd(18)) +
        `  ${(v === "off" ? "-" : line.generations).padEnd(30)}  ${v === "off" ? "-" : line.snapshots}`,
    );
  }
  const ls = results.get("litestream")!;
  const paced = ls.flatMap((r) => r.pacedLags ?? []);
  summary.paced = { rps: median(ls.map((r) => r.pacedRps ?? 0)), lagP50: pct(paced, 0.5), lagP99: pct(paced, 0.99), lagMax: Math.max(...paced, 0) };
  const pacer = loadGenerator().kind === "wrk" ? "wrk, its delay() on a per-thread schedule" : "the JS generator";
  console.log(`\npaced at ${RATE} req/s (by ${pacer}, 16 connections) with replication (litestream): ${median(ls.map((r) => r.pacedRps ?? 0))} req/s served, lag p50/p99/max ${pct(paced, 0.5).toFixed(2)}/${pct(paced, 0.99).toFixed(2)}/${Math.max(...paced, 0).toFixed(2)} s`);
  console.log(JSON.stringify(summary));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
