#!/usr/bin/env bun
/**
 * Webhook benchmark (issue 3). Starts the built server (dist/textwire; built first when missing,
 * or `--source` to run src/main.ts) on a temp database with 50 active forms and the webhook limit
 * raised, drives it from a second process on loopback (scripts/bench/lib/load.ts: realistic 5-field
 * body, about half new contacts) at 64 concurrent connections, and prints requests/s, p50/p99,
 * errors and the server's peak RSS. In the same run it measures the ceiling — a bare Bun.serve doing
 * the same durable writes with the same group commit (scripts/bench/lib/ceiling.ts) — and prints
 * our throughput as a ratio of it.
 *
 *   bun scripts/bench/webhook.ts [--seconds 10] [--concurrency 64] [--source]
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";
import { peakRssMb as peakRss, readUntil, machineLine, runLoad, type LoadResult } from "./lib/proc";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 10);
const CONCURRENCY = opt("concurrency", 64);
const WARMUP_SECONDS = 2;
const FORMS = 50;
const useSource = argv.includes("--source");
const bun = join(root, "node_modules", ".bin", "bun");
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-"));



const load = (base: string, forms: string[], seconds: number, offset: number) => runLoad(base, forms, { concurrency: CONCURRENCY, seconds, offset });

async function benchTextwire() {
  let cmd: string[] = [bun, join(root, "src/main.ts")];
  let runtime = "src/main.ts (bun)";
  if (!useSource) {
    const exe = join(root, "dist", "textwire");
    if (!existsSync(exe)) {
      console.error("building dist/textwire …");
      const built = await $`${bun} ${join(root, "scripts/build.ts")}`.quiet().nothrow();
      if (built.exitCode !== 0) console.error("build failed; benchmarking src/main.ts instead:\n" + built.stderr.toString().slice(0, 400));
    }
    if (existsSync(exe)) {
      cmd = [exe];
      runtime = "dist/textwire";
    }
  }
  const db = join(dir, "textwire.db");
  const proc = Bun.spawn(
    [...cmd, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000"],
    { stdout: "pipe", stderr: "ignore" },
  );
  const m = await readUntil(proc.stdout, /Admin API key[^\n]*?(txwire_sk_[A-Za-z0-9]{40})[\s\S]*Textwire listening on (http:\/\/\S+)/);
  const key = m[1];
  const base = m[2].replace("localhost", "127.0.0.1");
  const forms: string[] = [];
  for (let i = 0; i < FORMS; i++) {
    const res = await fetch(`${base}/v1/forms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        name: `Bench form ${i}`,
        messageTemplate: "Hi {{firstName}} {{lastName}}, thanks for reaching {{formName}} about {{company}}. We will text you shortly.",
        fields: [
          { name: "firstName", type: "text", label: "First name", validation: { maxLength: 50 } },
          { name: "lastName", type: "text", label: "Last name" },
          { name: "email", type: "email", label: "E-mail" },
          { name: "company", type: "text", label: "Company", validation: { maxLength: 100 } },
        ],
        settings: { timezone: "America/New_York" },
      }),
    });
    if (res.status !== 201) throw new Error(`form create failed: ${res.status} ${await res.text()}`);
    forms.push(((await res.json()) as any).data.form.id);
  }
  const warm = await load(base, forms, WARMUP_SECONDS, 0);
  const r = await load(base, forms, SECONDS, warm.nextOffset);
  const rss = peakRss(proc.pid);
  // Applier lag (issue 15): time from a 200 to its apply, from /metrics.
  const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
  const lagP99 = Number(metrics.match(/textwire_intake_applier_lag_ms\{quantile="0.99"\} (\S+)/)?.[1] ?? NaN);
  proc.kill("SIGTERM");
  await proc.exited;
  return { ...r, peakRssMb: rss, runtime, lagP99 };
}

async function benchCeiling() {
  const db = join(dir, "ceiling.db");
  const proc = Bun.spawn([bun, join(root, "scripts/bench/lib/ceiling.ts"), "--db", db, "--forms", String(FORMS)], { stdout: "pipe", stderr: "inherit" });
  const m = await readUntil(proc.stdout, /READY (\d+) (\S+)/);
  const base = `http://127.0.0.1:${m[1]}`;
  const forms = m[2].split(",");
  const warm = await load(base, forms, WARMUP_SECONDS, 0);
  const r = await load(base, forms, SECONDS, warm.nextOffset);
  const rss = peakRss(proc.pid);
  proc.kill("SIGTERM");
  await proc.exited;
  return { ...r, peakRssMb: rss };
}


try {
  const ours = await benchTextwire();
  const ceiling = await benchCeiling();
  const fmt = (name: string, r: LoadResult & { peakRssMb: number }) =>
    `${name.padEnd(26)} ${String(r.rps).padStart(7)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms   errors ${r.errors}/${r.requests}   peak RSS ${r.peakRssMb.toFixed(1)} MB`;
  console.log(machineLine());
  console.log(`load: ${CONCURRENCY} concurrent connections, ${SECONDS} s measured after ${WARMUP_SECONDS} s warm-up, ${FORMS} forms, 5-field JSON body, ~half new contacts`);
  console.log(fmt(`textwire (${ours.runtime})`, ours));
  console.log(`applier lag p99 ${ours.lagP99.toFixed(1)} ms (200 → applied, last 4096 submissions)`);
  console.log(fmt("ceiling (bare Bun.serve)", ceiling));
  const ratio = ours.rps / ceiling.rps;
  console.log(`ratio: ${ratio.toFixed(2)} of ceiling`);
  const checks = [
    [`≥ 10,000 req/s`, ours.rps >= 10_000],
    [`≥ 0.35 of ceiling`, ratio >= 0.35],
    [`p99 < 50 ms`, ours.p99Ms < 50],
    [`no errors`, ours.errors === 0],
    [`peak RSS < 150 MB`, ours.peakRssMb < 150],
  ] as const;
  console.log("targets: " + checks.map(([n, ok]) => `${ok ? "PASS" : "FAIL"} ${n}`).join(" · "));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
