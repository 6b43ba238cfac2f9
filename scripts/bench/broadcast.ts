#!/usr/bin/env bun
/**
 * Broadcast benchmark. Starts the server (src/main.ts) on a temp database, imports
 * 50,000 contacts, then measures webhook traffic from a second process (wrk, or `--load js`: scripts/bench/lib/load.ts)
 * twice: alone, and while a broadcast to all 50,000 contacts is queued. Prints how long the
 * POST /v1/broadcasts took to answer 202, how long until every message was queued, and the
 * webhook p50/p99 without and with the broadcast running.
 *
 *   bun scripts/bench/broadcast.ts [--contacts 50000] [--seconds 8] [--concurrency 32]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { phoneFor } from "./lib/phones";
import { benchAccount, machineLine, loadGeneratorLine, readUntil, runLoad } from "./lib/proc";

const load = (base: string, forms: string[], offset: number) => runLoad(base, forms, { concurrency: CONCURRENCY, seconds: SECONDS, offset });

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const CONTACTS = opt("contacts", 50_000);
const SECONDS = opt("seconds", 8);
const CONCURRENCY = opt("concurrency", 32);
const bun = join(root, "node_modules", ".bin", "bun");
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-broadcast-"));


const { key } = benchAccount([bun, join(root, "src/main.ts")], join(dir, "textwire.db"));
const server = Bun.spawn(
  [bun, join(root, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", join(dir, "textwire.db"), "--log-format", "json", "--webhook-limit-per-minute", "100000000"],
  { stdout: "pipe", stderr: "ignore" },
);
try {
  const m = await readUntil(server.stdout, /Textwire listening on (http:\/\/\S+)/);
  const base = m[1].replace("localhost", "127.0.0.1");
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${base}/v1${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...(init.headers ?? {}) } });
  const form = await (
    await api("/forms", {
      method: "POST",
      body: JSON.stringify({ name: "Bench", messageTemplate: "Hi {{firstName}}, thanks!", fields: [{ name: "firstName", type: "text" }, { name: "lastName", type: "text" }, { name: "email", type: "email" }, { name: "company", type: "text" }] }),
    })
  ).json();
  const formId = (form as any).data.form.id;

  // 50,000 contacts through the import (numbers far from the load generator's).
  const rows = ["phoneNumber,firstName,lastName"];
  for (let i = 0; i < CONTACTS; i++) rows.push(`${phoneFor(1_000_000 + i)},Guest${i},Lee`);
  const t0 = performance.now();
  const imp = await api("/contacts/import", { method: "POST", body: rows.join("\n"), headers: { "Content-Type": "text/csv" } });
  if (imp.status !== 200) throw new Error(`import failed: ${imp.status} ${(await imp.text()).slice(0, 300)}`);
  const importMs = performance.now() - t0;

  const alone = await load(base, [formId], 0);

  const during = load(base, [formId], alone.nextOffset);
  await Bun.sleep(1000);
  const tPost = performance.now();
  const res = await api("/broadcasts", { method: "POST", body: JSON.stringify({ name: "Everyone", content: "Hi {{firstName}}, we are open late on Friday!" }) });
  const answerMs = performance.now() - tPost;
  const created = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`broadcast failed: ${res.status} ${JSON.stringify(created).slice(0, 300)}`);
  let queuedMs = NaN;
  for (;;) {
    const got = (await (await api(`/broadcasts/${created.data.broadcastId}`)).json()) as any;
    if (!got.data) throw new Error(`progress read failed: ${JSON.stringify(got).slice(0, 300)}`);
    const b = got.data.broadcast;
    if (b.status !== "queuing") {
      queuedMs = performance.now() - tPost;
      if (b.messages.total !== created.data.recipients) throw new Error(`queued ${b.messages.total} of ${created.data.recipients}`);
      break;
    }
    await Bun.sleep(200);
  }
  const withBroadcast = await during;

  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`contacts: ${CONTACTS} (import ${(importMs / 1000).toFixed(1)} s); webhook load: ${CONCURRENCY} connections, ${SECONDS} s per run`);
  console.log(`broadcast to ${created.data.recipients} contacts: 202 in ${answerMs.toFixed(0)} ms, every message queued after ${(queuedMs / 1000).toFixed(2)} s`);
  const fmt = (n: string, r: typeof alone) => `${n.padEnd(22)} ${String(r.rps).padStart(6)} req/s   p50 ${r.p50Ms.toFixed(1).padStart(6)} ms   p99 ${r.p99Ms.toFixed(1).padStart(6)} ms   errors ${r.errors}/${r.requests}`;
  console.log(fmt("webhook alone", alone));
  console.log(fmt("webhook + broadcast", withBroadcast));
  console.log(
    "targets: " +
      [
        [`202 < 2 s`, answerMs < 2000],
        [`webhook p99 < 100 ms during the broadcast`, withBroadcast.p99Ms < 100],
        [`no errors`, withBroadcast.errors === 0],
      ]
        .map(([n, ok]) => `${ok ? "PASS" : "FAIL"} ${n}`)
        .join(" · "),
  );
} finally {
  server.kill("SIGTERM");
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
