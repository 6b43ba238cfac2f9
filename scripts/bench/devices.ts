#!/usr/bin/env bun
/**
 * Phones benchmark: 10 emulated SMSGate phones on SSE against a `textwire serve`
 * process, N queued messages (default 10,000).
 *
 *   bun scripts/bench/devices.ts [messages] [phones]
 *
 * Prints the machine line, then
 * - drain: time from the phones connecting to every message `sent` (each phone reports
 *   Processed, Sent and Delivered per message, as the app does; send rates unlimited);
 * - event latency: 200 messages queued one at a time through POST /v1/messages while all phones
 *   listen; time from the POST leaving to MessageEnqueued arriving at each phone (p50/p99/max;
 *   target p99 < 100 ms).
 * Plain HTTP on 127.0.0.1 (TLS is covered by the tests; here it would only measure the cipher).
 */
import { cpus, totalmem, release, tmpdir } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SmsGateEmulator } from "../../test/helpers/smsgate-emulator";

const N = Number(process.argv[2] ?? 10_000);
const PHONES = Number(process.argv[3] ?? 10);
const LATENCY_SAMPLES = 200;
const ROOT = join(import.meta.dir, "../..");
const BUN = process.execPath;

const cpu = cpus();
console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, bun ${Bun.version}`);

const dir = mkdtempSync(join(tmpdir(), "textwire-bench-devices-"));
const db = join(dir, "bench.db");
const env = { ...process.env, TEXTWIRE_PORT: "", TEXTWIRE_DB: "" };
const created = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "accounts", "create", "--name", "Bench", "--api-limit-per-hour", "100000000", "--api-burst-per-minute", "100000000", "--json", "--db", db], { cwd: ROOT, env });
if (created.exitCode !== 0) throw new Error(created.stderr.toString());
const { apiKey } = JSON.parse(created.stdout.toString());

const proc = Bun.spawn(
  [BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json",
    "--send-rate-per-minute", "1000000", "--device-limit-per-minute", "1000000"],
  { cwd: ROOT, env, stdout: "pipe", stderr: "ignore" },
);
const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
let out = "";
while (!/Textwire listening on \S+/.test(out)) {
  const { done, value } = await reader.read();
  if (done) throw new Error("serve exited: " + out);
  out += new TextDecoder().decode(value);
}
const origin = /Textwire listening on (http:\/\/[^\s"]+)/.exec(out)![1];
void (async () => {
  for (;;) if ((await reader.read()).done) return;
})();

const api = async (path: string, method = "GET", json?: unknown) => {
  const res = await fetch(`${origin}/v1${path}`, { method, headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" }, body: json === undefined ? undefined : JSON.stringify(json) });
  const body = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
};

try {
  const token = (await api("/devices/registration-tokens", "POST", { reusable: true })).data.token;
  const phones: SmsGateEmulator[] = [];
  for (let i = 0; i < PHONES; i++) {
    const p = new SmsGateEmulator({ base: `${origin}/api/mobile/v1`, name: `bench-${i}` });
    await p.register(token);
    await api(`/devices/${p.id}`, "PATCH", { sendRatePerMinute: 10_000 });
    phones.push(p);
  }

  // Queue N messages before any phone listens.
  const q0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < N) {
        const i = next++;
        await api("/messages", "POST", { phoneNumber: `+1415555${String(i % 10_000).padStart(4, "0")}`, content: `Bench message ${i}` });
      }
    }),
  );
  console.log(`queued ${N} messages through POST /v1/messages in ${((performance.now() - q0) / 1000).toFixed(1)} s`);

  const d0 = performance.now();
  await Promise.all(phones.map((p) => p.connect()));
  for (;;) {
    const s = (await api("/messages?limit=1")).data.summary;
    if (s.queued === 0) break;
    await Bun.sleep(100);
  }
  const drainS = (performance.now() - d0) / 1000;
  const shares = phones.map((p) => p.taken.length);
  console.log(`drain: ${N} messages by ${PHONES} phones in ${drainS.toFixed(1)} s (${Math.round(N / drainS)} msg/s; 4 requests per message); per phone min ${Math.min(...shares)} max ${Math.max(...shares)}`);
  const all = new Set(phones.flatMap((p) => p.taken));
  console.log(`handed out ${phones.reduce((a, p) => a + p.taken.length, 0)} times, ${all.size} distinct (duplicates would mean a shared lease)`);

  // Event latency.
  await Promise.all(phones.map((p) => p.idle()));
  const lat: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const marks = phones.map((p) => p.events.length);
    const t0 = performance.now();
    await api("/messages", "POST", { phoneNumber: "+14155550150", content: `Latency ${i}` });
    await Promise.all(
      phones.map(async (p, k) => {
        const end = performance.now() + 2_000;
        for (;;) {
          const e = p.events.slice(marks[k]).find((x) => x.event === "MessageEnqueued");
          if (e) return lat.push(e.at - t0);
          if (performance.now() > end) return lat.push(Infinity);
          await Bun.sleep(1);
        }
      }),
    );
    await Promise.all(phones.map((p) => p.idle()));
    await Bun.sleep(10);
  }
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  console.log(`event latency (POST sent → MessageEnqueued at each of ${PHONES} phones, ${lat.length} samples): p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${lat[lat.length - 1].toFixed(1)} ms (target p99 < 100 ms)`);
  for (const p of phones) p.disconnect();
} finally {
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
