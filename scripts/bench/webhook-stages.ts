#!/usr/bin/env bun
/**
 * A/B of the webhook's per-stage breakdown between this tree and an earlier commit (the
 * request path outside the write job). Each side runs from source (`src/main.ts`) with
 * --stage-timing on a temp database with the webhook benchmark's 50 forms, is warmed up, then
 * driven from a second process (wrk, or `--load js`: scripts/bench/lib/load.ts) at 64 connections; the stage sums are
 * read from /metrics before and after. Rounds alternate the order, so load from elsewhere on the
 * machine does not land on one side only. Prints the mean µs/request per stage of each side and
 * their ratio.
 *
 *   bun scripts/bench/webhook-stages.ts --base <git ref> [--seconds 4] [--rounds 3] [--concurrency 64]
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";
import { machineLine, loadGeneratorLine, runLoad } from "./lib/proc";
import { stageSums, stagesBetween, startWebhookServer } from "./lib/webhook-server";
import { STAGES, STAGE_LABELS, type Stage } from "../../src/lib/stage-timing";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : def);
const BASE = opt("base", "");
const SECONDS = Number(opt("seconds", "4"));
const ROUNDS = Number(opt("rounds", "3"));
const CONCURRENCY = Number(opt("concurrency", "64"));
const FORMS = 50;
if (!BASE) {
  console.error("usage: bun scripts/bench/webhook-stages.ts --base <git ref> [--seconds 4] [--rounds 3]");
  process.exit(2);
}
const bun = join(root, "node_modules", ".bin", "bun");
const dir = mkdtempSync(join(tmpdir(), "textwire-stages-"));

/** The base commit's tree, unpacked next to the databases, sharing this tree's node_modules. */
async function checkoutBase(): Promise<string> {
  const out = join(dir, "base");
  await $`mkdir -p ${out}`;
  await $`git -C ${root} archive ${BASE} | tar -x -C ${out}`;
  symlinkSync(join(root, "node_modules"), join(out, "node_modules"));
  return out;
}

let runs = 0;
async function one(tree: string): Promise<{ rps: number; stages: Record<Stage, number> }> {
  const db = join(dir, `stages-${runs++}.db`);
  const { proc, key, base, forms } = await startWebhookServer([bun, join(tree, "src/main.ts")], db, ["--stage-timing"], FORMS);
  try {
    const warm = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: 2, offset: 0 });
    const before = await stageSums(base, key);
    const r = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: SECONDS, offset: warm.nextOffset });
    const after = await stageSums(base, key);
    if (r.errors > 0) console.error(`${tree}: ${r.errors} errors of ${r.requests}`);
    return { rps: r.rps, stages: stagesBetween(before, after) };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

try {
  const baseTree = await checkoutBase();
  const sides: Array<[string, string]> = [
    [`base (${BASE})`, baseTree],
    ["this tree", root],
  ];
  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`load: ${CONCURRENCY} connections, ${SECONDS} s measured after 2 s warm-up, ${FORMS} forms, ${ROUNDS} interleaved rounds, servers from source with --stage-timing`);
  const results = new Map<string, Array<{ rps: number; stages: Record<Stage, number> }>>(sides.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < sides.length; i++) {
      const [name, tree] = sides[(i + round) % sides.length];
      results.get(name)!.push(await one(tree));
    }
  }
  const mean = (name: string, f: (r: { rps: number; stages: Record<Stage, number> }) => number) => {
    const rs = results.get(name)!;
    return rs.reduce((a, r) => a + f(r), 0) / rs.length;
  };
  const [a, b] = sides.map(([n]) => n);
  console.log(`${"stage (µs/request, mean of the rounds)".padEnd(68)} ${a.padStart(16)} ${b.padStart(12)}   ratio`);
  for (const s of STAGES) {
    const x = mean(a, (r) => r.stages[s]);
    const y = mean(b, (r) => r.stages[s]);
    console.log(`  ${STAGE_LABELS[s].padEnd(66)} ${x.toFixed(1).padStart(16)} ${y.toFixed(1).padStart(12)}   ×${(y / x).toFixed(2)}`);
  }
  console.log(`  ${"throughput (req/s; each round)".padEnd(66)} ${results.get(a)!.map((r) => r.rps).join("/").padStart(16)} ${results.get(b)!.map((r) => r.rps).join("/").padStart(12)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
