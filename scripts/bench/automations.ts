#!/usr/bin/env bun
/**
 * Automations benchmark (docs/api-decisions.md, "Automations"). Starts the server (src/main.ts)
 * on a temp database, imports 50,000 contacts and gives the load's form a two-step automation
 * (so every webhook submission of the load also starts a run), then measures webhook traffic
 * from a second process (wrk, or `--load js`) twice: alone, and while
 * POST /v1/automations/<id>/start starts the automation for all 50,000 contacts (two queued
 * messages each). Prints how long the start took to answer 202, how long until every run was
 * created, and the webhook p50/p99 without and with the start running.
 *
 *   bun scripts/bench/automations.ts [--contacts 50000] [--seconds 8] [--concurrency 32]
 */
import { Database } from "bun:sqlite";
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
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-automations-"));
const dbPath = join(dir, "textwire.db");

const { key } = benchAccount([bun, join(root, "src/main.ts")], dbPath);
const server = Bun.spawn(
  [bun, join(root, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbPath, "--log-format", "json", "--webhook-limit-per-minute", "100000000"],
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

  const rows = ["phoneNumber,firstName,lastName"];
  for (let i = 0; i < CONTACTS; i++) rows.push(`${phoneFor(1_000_000 + i)},Guest${i},Lee`);
  const t0 = performance.now();
  const imp = await api("/contacts/import", { method: "POST", body: rows.join("\n"), headers: { "Content-Type": "text/csv" } });
  if (imp.status !== 200) throw new Error(`import failed: ${imp.status} ${(await imp.text()).slice(0, 300)}`);
  const importMs = performance.now() - t0;

  const made = await api("/automations", {
    method: "POST",
    body: JSON.stringify({
      name: "Thanks and review",
      formId,
      steps: [
        { template: "Thanks {{firstName}}! How did we do? {{reviewLink | https://example.com/review}}", delay: "2d", sendAt: "10:00" },
        { template: "Hi {{firstName}}, a week already: anything we can help with?", delay: "1w", sendAt: "11:00" },
      ],
    }),
  });
  if (made.status !== 201) throw new Error(`automation failed: ${made.status} ${(await made.text()).slice(0, 300)}`);
  const automationId = ((await made.json()) as any).data.automation.id;

  const alone = await load(base, [formId], 0);

  const during = load(base, [formId], alone.nextOffset);
  await Bun.sleep(1000);
  const tPost = performance.now();
  const res = await api(`/automations/${automationId}/start`, { method: "POST", body: "{}" });
  const answerMs = performance.now() - tPost;
  const started = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`start failed: ${res.status} ${JSON.stringify(started).slice(0, 300)}`);
  // Progress: the start job's row (read on a connection of this process, as a monitor would).
  const peek = new Database(dbPath, { readonly: true });
  let doneMs = NaN;
  let created = 0;
  for (;;) {
    const job = peek.query("SELECT status, started FROM automation_starts WHERE id = ?").get(started.data.startId) as { status: string; started: number };
    if (job.status === "done") {
      doneMs = performance.now() - tPost;
      created = job.started;
      break;
    }
    await Bun.sleep(100);
  }
  peek.close();
  const withStart = await during;

  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`contacts: ${CONTACTS} (import ${(importMs / 1000).toFixed(1)} s); webhook load: ${CONCURRENCY} connections, ${SECONDS} s per run (each submission also starts a run)`);
  console.log(
    `start for ${started.data.contacts} contacts: 202 in ${answerMs.toFixed(0)} ms, ${created} runs (${created * 2} messages) created after ${(doneMs / 1000).toFixed(2)} s; skipped ${JSON.stringify(started.data.skipped)}`,
  );
  const fmt = (n: string, r: typeof alone) => `${n.padEnd(22)} ${String(r.rps).padStart(6)} req/s   p50 ${r.p50Ms.toFixed(1).padStart(6)} ms   p99 ${r.p99Ms.toFixed(1).padStart(6)} ms   errors ${r.errors}/${r.requests}`;
  console.log(fmt("webhook alone", alone));
  console.log(fmt("webhook + start", withStart));
  console.log(
    "targets: " +
      [
        [`${CONTACTS} started < 15 s`, doneMs < 15_000],
        [`webhook p99 < 100 ms during the start`, withStart.p99Ms < 100],
        [`no errors`, withStart.errors === 0],
      ]
        .map(([n, ok]) => `${ok ? "PASS" : "FAIL"} ${n}`)
        .join(" · "),
  );
} finally {
  server.kill("SIGTERM");
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
