#!/usr/bin/env bun
/**
 * A/B of the webhook's per-stage breakdown between this tree and an earlier commit (issue 15: the
 * request path outside the write job). Each side runs from source (`src/main.ts`) with
 * --stage-timing on a temp database with the webhook benchmark's 50 forms, is warmed up, then
 * driven from a second process (scripts/bench/lib/load.ts) at 64 connections; the stage sums are
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
import { machineLine, readUntil, runLoad } from "./lib/proc";
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

/** The benchmark's form (scripts/bench/webhook.ts): four fields, a template that uses three. */
const FORM = (i: number) => ({
  name: `Bench form ${i}`,
  messageTemplate: "Hi {{firstName}} {{lastName}}, thanks for reaching {{formName}} about {{company}}. We will text you shortly.",
  fields: [
    { name: "firstName", type: "text", label: "First name", validation: { maxLength: 50 } },
    { name: "lastName", type: "text", label: "Last name" },
    { name: "email", type: "email", label: "E-mail" },
    { name: "company", type: "text", label: "Company", validation: { maxLength: 100 } },
  ],
  settings: { timezone: "America/New_York" },
});

async function stageSums(base: string, key: string) {
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
  const sums = Object.fromEntries(STAGES.map((s) => [s, Number(new RegExp(`textwire_stage_microseconds_total\\{stage="${s}"\\} (\\d+)`).exec(text)?.[1] ?? NaN)])) as Record<Stage, number>;
  return { sums, requests: Number(/textwire_stage_requests_total (\d+)/.exec(text)?.[1] ?? NaN) };
}

let runs = 0;
async function one(tree: string): Promise<{ rps: number; stages: Record<Stage, number> }> {
  const db = join(dir, `stages-${runs++}.db`);
  const proc = Bun.spawn(
    [bun, join(tree, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000", "--stage-timing"],
    { stdout: "pipe", stderr: "ignore" },
  );
  try {
    const m = await readUntil(proc.stdout, /Admin API key[^\n]*?(txwire_sk_[A-Za-z0-9]{40})[\s\S]*Textwire listening on (http:\/\/\S+)/);
    const key = m[1];
    const base = m[2].replace("localhost", "127.0.0.1");
    const forms: string[] = [];
    for (let i = 0; i < FORMS; i++) {
      const res = await fetch(`${base}/v1/forms`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(FORM(i)),
      });
      if (res.status !== 201) throw new Error(`form create failed: ${res.status} ${await res.text()}`);
      forms.push(((await res.json()) as any).data.form.id);
    }
    const warm = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: 2, offset: 0 });
    const before = await stageSums(base, key);
    const r = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: SECONDS, offset: warm.nextOffset });
    const after = await stageSums(base, key);
    const n = Math.max(1, after.requests - before.requests);
    if (r.errors > 0) console.error(`${tree}: ${r.errors} errors of ${r.requests}`);
    return { rps: r.rps, stages: Object.fromEntries(STAGES.map((s) => [s, (after.sums[s] - before.sums[s]) / n])) as Record<Stage, number> };
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
