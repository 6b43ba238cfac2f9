#!/usr/bin/env bun
/**
 * Load generator for the webhook benchmark (runs as its own process, so it does not share the
 * server's CPU time slice). Posts a realistic 5-field JSON submission to the forms' webhooks from
 * N concurrent connections for D seconds; about half the phone numbers are new, half repeat one
 * already sent (an existing contact). Prints one JSON line: {requests, errors, seconds, rps, p50Ms, p99Ms, maxMs, statuses}.
 *
 *   bun scripts/bench/lib/load.ts --base http://127.0.0.1:8080 --forms id1,id2 --concurrency 64 --seconds 10 [--offset 0] [--path-prefix /v1/forms] [--rate 200]
 *
 * --rate N paces the requests at N per second in all (a steady load well below the ceiling) instead of as fast as the connections allow.
 */
import { bodyFor } from "./bodies";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ""), process.argv[i + 1]);
const base = args.get("base")!;
const forms = args.get("forms")!.split(",");
const concurrency = Number(args.get("concurrency") ?? 64);
const seconds = Number(args.get("seconds") ?? 10);
const offset = Number(args.get("offset") ?? 0);
const rate = Number(args.get("rate") ?? 0);
let slot = 0;

let fresh = offset;
let sent = 0;
function nextBody(): string {
  // Half new numbers, half a number this run already sent (an existing contact).
  const i = sent++ % 2 === 0 || fresh === offset ? fresh++ : offset + Math.floor(Math.random() * (fresh - offset));
  return bodyFor(i);
}

const urls = forms.map((id) => `${base}/v1/forms/${id}/webhook`);
const latencies = new Float64Array(4_000_000);
let count = 0;
let errors = 0;
const statuses: Record<string, number> = {};
const headers = { "Content-Type": "application/json" };
const started = performance.now();
const endAt = started + seconds * 1000;
let formIdx = 0;

async function worker() {
  while (performance.now() < endAt) {
    if (rate > 0) {
      const wait = started + (slot++ * 1000) / rate - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      if (performance.now() >= endAt) break;
    }
    const url = urls[formIdx++ % urls.length];
    const body = nextBody();
    const t0 = performance.now();
    let status = 0;
    try {
      const res = await fetch(url, { method: "POST", headers, body });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = -1;
    }
    const t1 = performance.now();
    if (count < latencies.length) latencies[count] = t1 - t0;
    count++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status !== 200) errors++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = (performance.now() - started) / 1000;
const lat = latencies.subarray(0, Math.min(count, latencies.length)).sort();
const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : 0);
console.log(
  JSON.stringify({
    requests: count,
    errors,
    seconds: Math.round(elapsed * 100) / 100,
    rps: Math.round(count / elapsed),
    p50Ms: Math.round(pct(0.5) * 100) / 100,
    p99Ms: Math.round(pct(0.99) * 100) / 100,
    maxMs: Math.round((lat[lat.length - 1] ?? 0) * 100) / 100,
    statuses,
    nextOffset: fresh,
  }),
);
