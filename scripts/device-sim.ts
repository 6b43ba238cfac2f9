#!/usr/bin/env bun
/**
 * A pretend phone: polls `next`, "sends" each text (waits a moment, fails at --failure-rate),
 * and reports sent (with sentAt) or failed (with a reason) back, carrying the lease token —
 * exactly what the phone recipes in docs/devices.md do, without a phone.
 *
 *   bun scripts/device-sim.ts --url http://localhost:8080 --key txwire_sk_… \
 *       [--failure-rate 0.1] [--interval 2000] [--count N | --once] [--device sim-1] [--batch 10] [--quiet]
 *
 * --once: one poll, then exit. --count N: stop after N reports. Otherwise runs until Ctrl-C.
 * Prints one line per message and a JSON summary at the end: {"sent":…,"failed":…,"conflicts":…}.
 */
import { parseArgs } from "../src/config";

const REASONS = ["invalid-phone", "rate-limit", "network-error"] as const;

function usage(msg?: string): never {
  if (msg) console.error(`device-sim: ${msg}`);
  console.error("usage: bun scripts/device-sim.ts --url URL --key KEY [--failure-rate 0-1] [--interval MS] [--count N | --once] [--device ID] [--batch 1-50]");
  process.exit(2);
}

const { flags } = parseArgs(process.argv.slice(2), new Set(["once", "quiet", "help"]));
if (flags.has("help")) usage();
const str = (k: string) => (typeof flags.get(k) === "string" ? (flags.get(k) as string) : undefined);
const url = str("url")?.replace(/\/+$/, "");
const key = str("key") ?? process.env.TEXTWIRE_KEY;
if (!url || !key) usage("--url and --key are required");
const failureRate = Number(str("failure-rate") ?? "0");
if (!(failureRate >= 0 && failureRate <= 1)) usage("--failure-rate must be between 0 and 1");
const interval = Number(str("interval") ?? "2000");
const count = str("count") === undefined ? Infinity : Number(str("count"));
const once = flags.has("once");
const quiet = flags.has("quiet");
const device = str("device") ?? `sim-${process.pid}`;
const batch = Math.min(50, Math.max(1, Number(str("batch") ?? "10")));
const base = `${url}/v1/messages/${key}`;

const tally = { sent: 0, failed: 0, conflicts: 0, errors: 0 };
let stopping = false;
process.on("SIGINT", () => (stopping = true));
process.on("SIGTERM", () => (stopping = true));

async function call(path: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function pollOnce(): Promise<number> {
  const r = await call("/next", "POST", { limit: Math.min(batch, count - tally.sent - tally.failed), deviceId: device });
  if (r.status !== 200) {
    tally.errors++;
    console.error(`next: HTTP ${r.status} ${JSON.stringify(r.json)}`);
    return 0;
  }
  const msgs: any[] = r.json.data.messages;
  for (const m of msgs) {
    await Bun.sleep(5); // "sending"
    const fail = Math.random() < failureRate;
    const report = fail
      ? { status: "failed", failureReason: REASONS[Math.floor(Math.random() * REASONS.length)], leaseToken: m.leaseToken }
      : { status: "sent", sentAt: new Date().toISOString(), leaseToken: m.leaseToken };
    const put = await call(`/${m.id}/status`, "PUT", report);
    if (put.status === 200) {
      tally[fail ? "failed" : "sent"]++;
      if (!quiet) console.log(`${fail ? "FAILED" : "sent  "} ${m.id} → ${m.recipientPhone}${fail ? ` (${report.failureReason})` : ""}`);
    } else if (put.status === 409) {
      tally.conflicts++;
      if (!quiet) console.log(`lease lost ${m.id}`);
    } else {
      tally.errors++;
      console.error(`report ${m.id}: HTTP ${put.status} ${JSON.stringify(put.json)}`);
    }
  }
  return msgs.length;
}

while (!stopping) {
  let got = 0;
  try {
    got = await pollOnce();
  } catch (err) {
    tally.errors++;
    console.error(`device-sim: ${(err as Error).message}`);
  }
  if (once || tally.sent + tally.failed >= count) break;
  if (got === 0) await Bun.sleep(interval);
}
console.log(JSON.stringify(tally));
