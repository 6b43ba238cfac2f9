#!/usr/bin/env bun
/**
 * Outbound events benchmark: webhook ingestion p99 with no event endpoints, then
 * with 2 slow endpoints (receivers that answer after 5 s) subscribed to every event. The
 * dispatcher must not slow the webhook path: target p99 within 10 % of the run without endpoints.
 * Each run: a fresh server (src/main.ts) and database, 10 forms, load from a second process
 * (wrk, or `--load js`: scripts/bench/lib/load.ts) at a steady rate of concurrent connections.
 *
 *   bun scripts/bench/events.ts [--seconds 8] [--concurrency 16]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchAccount, readUntil, machineLine, loadGeneratorLine, runLoad, type LoadResult } from "./lib/proc";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 8);
const CONCURRENCY = opt("concurrency", 16);
const WARMUP_SECONDS = 2;
const FORMS = 10;
const SLOW_MS = 5_000;
const bun = join(root, "node_modules", ".bin", "bun");
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-events-"));

/** The server's CPU time so far (user + system, ms): steadier than latency on a shared machine. */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}


/** A receiver answering every delivery after SLOW_MS (never verifies: only its slowness matters). */
function slowReceiver() {
  let received = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      await req.arrayBuffer();
      received++;
      await Bun.sleep(SLOW_MS);
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, received: () => received, stop: () => server.stop(true) };
}

const load = (base: string, forms: string[], seconds: number, offset: number) => runLoad(base, forms, { concurrency: CONCURRENCY, seconds, offset });

async function run(label: string, endpoints: number) {
  const db = join(dir, `${label}.db`);
  const { key } = benchAccount([bun, join(root, "src/main.ts")], db);
  const proc = Bun.spawn(
    [bun, join(root, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000", "--allow-private-webhook-urls"],
    { stdout: "pipe", stderr: "ignore" },
  );
  const receivers = Array.from({ length: endpoints }, slowReceiver);
  try {
    const m = await readUntil(proc.stdout, /Textwire listening on (http:\/\/\S+)/);
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    const base = m[1].replace("localhost", "127.0.0.1");
    for (const r of receivers) {
      const res = await fetch(`${base}/v1/webhook-endpoints`, { method: "POST", headers, body: JSON.stringify({ url: r.url, events: ["*"], allowInsecure: true }) });
      if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${await res.text()}`);
    }
    const forms: string[] = [];
    for (let i = 0; i < FORMS; i++) {
      const res = await fetch(`${base}/v1/forms`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          name: `Bench form ${i}`,
          messageTemplate: "Hi {{firstName}} {{lastName}}, thanks for reaching {{formName}} about {{company}}.",
          fields: [
            { name: "firstName", type: "text", label: "First name" },
            { name: "lastName", type: "text", label: "Last name" },
            { name: "email", type: "email", label: "E-mail" },
            { name: "company", type: "text", label: "Company" },
          ],
        }),
      });
      forms.push(((await res.json()) as any).data.form.id);
    }
    const warm = await load(base, forms, WARMUP_SECONDS, 0);
    const cpu0 = cpuMs(proc.pid);
    const r = await load(base, forms, SECONDS, warm.nextOffset);
    const cpuPerRequestMs = (cpuMs(proc.pid) - cpu0) / r.requests;
    const received = receivers.reduce((a, x) => a + x.received(), 0);
    return { ...r, received, cpuPerRequestMs };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    for (const r of receivers) r.stop();
  }
}


try {
  const none = await run("none", 0);
  const slow = await run("slow", 2);
  const fmt = (name: string, r: LoadResult & { received: number; cpuPerRequestMs: number }) =>
    `${name.padEnd(18)} ${String(r.rps).padStart(6)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms   server CPU ${(r.cpuPerRequestMs * 1000).toFixed(0).padStart(4)} µs/request   errors ${r.errors}/${r.requests}   deliveries started ${r.received}`;
  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`load: ${CONCURRENCY} concurrent connections, ${SECONDS} s measured after ${WARMUP_SECONDS} s warm-up, ${FORMS} forms; slow endpoints answer after ${SLOW_MS / 1000} s, subscribed to "*"`);
  console.log(fmt("no endpoints", none));
  console.log(fmt("2 slow endpoints", slow));
  const ratio = slow.p99Ms / none.p99Ms;
  console.log(`p99 ratio: ${ratio.toFixed(2)}   target: ${ratio <= 1.1 ? "PASS" : "FAIL"} within 10 %   (CPU per request ratio ${(slow.cpuPerRequestMs / none.cpuPerRequestMs).toFixed(2)}: the outbox rows and event bodies the endpoints' subscriptions cost)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
