#!/usr/bin/env bun
/**
 * The form webhook while someone guesses passwords (docs/operations.md, "Sign-in limits";
 * docs/api-decisions.md, "Nothing the phone reports is lost, and nobody takes the dashboard:
 * hardening round three"). Starts the server from source on a temp database with one form and
 * one signed-in viewer, drives the webhook with wrk at a paced rate (a busy shop's traffic, not
 * the ceiling: the latency is what a visitor feels) and prints p50/p99 in three phases:
 *
 *  1. idle: the webhook alone;
 *  2. one session guessing its current password (PUT /v1/session/password) as fast as it can,
 *     over one connection: the first 10 are checked, the rest are 429 unread;
 *  3. a guesser the limits let check every password: a new e-mail and a new address
 *     (X-Forwarded-For, the server trusting this machine) for each sign-in, 4 connections — an
 *     argon2id check every time, so what is left is the password thread's own cost;
 *  4. for scale, the same session sending GET /v1/session as fast as it can over one connection:
 *     what any flood of cheap requests costs, passwords or not.
 *
 * The phases run in --rounds interleaved rounds (default 3; a shared machine drifts) and the
 * median of each figure is printed.
 *
 *   bun scripts/bench/password-guessing.ts [--seconds 10] [--rounds 3] [--rate 200] [--concurrency 8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchAccount, loadGeneratorLine, machineLine, readUntil, runLoad, type LoadResult } from "./lib/proc";
import { BENCH_FORM } from "./lib/webhook-server";

const root = join(import.meta.dir, "..", "..");
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 10);
const ROUNDS = opt("rounds", 3);
const RATE = opt("rate", 200);
const CONCURRENCY = opt("concurrency", 8);
const bun = join(root, "node_modules", ".bin", "bun");
const cmd = [bun, join(root, "src/main.ts")];
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-guess-"));
const db = join(dir, "textwire.db");

const { accountId, key } = benchAccount(cmd, db);
const added = Bun.spawnSync([...cmd, "users", "add", "--account", accountId, "--email", "viewer@bench.example", "--name", "Viewer", "--role", "viewer", "--json", "--db", db], { stdout: "pipe", stderr: "pipe" });
if (added.exitCode !== 0) throw new Error(`users add failed: ${added.stderr.toString()}`);
const password = JSON.parse(added.stdout.toString()).password as string;

const proc = Bun.spawn(
  [...cmd, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000", "--trust-proxy", "--auth-failures-per-minute", "1000000"],
  { stdout: "pipe", stderr: "ignore" },
);
let stopping = false;
try {
  const base = (await readUntil(proc.stdout, /Textwire listening on (http:\/\/\S+)/))[1].replace("localhost", "127.0.0.1");
  const form = await fetch(`${base}/v1/forms`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(BENCH_FORM(0)) });
  const forms = [((await form.json()) as any).data.form.id as string];
  const signIn = await fetch(`${base}/v1/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: "viewer@bench.example", password }) });
  if (signIn.status !== 201) throw new Error(`sign-in failed: ${signIn.status} ${await signIn.text()}`);
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
  const csrf = ((await signIn.json()) as any).data.csrfToken as string;

  let offset = 0;
  type Tally = { tries: number; checked: number; refused: number };
  const phase = async (guesser: (() => Promise<Tally>) | null): Promise<{ r: LoadResult; tally: Tally | null }> => {
    // A short warm-up at the same rate, then the measured run.
    offset = (await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: 2, offset, rate: RATE })).nextOffset;
    stopping = false;
    const g = guesser ? guesser() : null;
    const r: LoadResult = await runLoad(base, forms, { concurrency: CONCURRENCY, seconds: SECONDS, offset, rate: RATE });
    stopping = true;
    const tally = g ? await g : null;
    offset = r.nextOffset;
    return { r, tally };
  };

  /** One session, one connection, its current password guessed back to back. */
  const sessionGuesser = async () => {
    const t = { tries: 0, checked: 0, refused: 0 };
    while (!stopping) {
      const res = await fetch(`${base}/v1/session/password`, {
        method: "PUT",
        headers: { Cookie: cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json" },
        body: JSON.stringify({ currentPassword: `guess-${t.tries}`, newPassword: "a-new-password-42" }),
      });
      await res.arrayBuffer();
      t.tries++;
      if (res.status === 400) t.checked++;
      else if (res.status === 429 || res.status === 503) t.refused++;
    }
    return t;
  };

  /** Every guess a new e-mail from a new address: nothing stops a check, each one costs argon2id. */
  const spreadGuesser = async () => {
    const t = { tries: 0, checked: 0, refused: 0 };
    let n = 0;
    const one = async () => {
      while (!stopping) {
        const i = n++;
        const res = await fetch(`${base}/v1/session`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Forwarded-For": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
          body: JSON.stringify({ email: `someone${i}@bench.example`, password: `guess-${i}` }),
        });
        await res.arrayBuffer();
        t.tries++;
        if (res.status === 401) t.checked++;
        else if (res.status === 429 || res.status === 503) t.refused++;
      }
    };
    await Promise.all(Array.from({ length: 4 }, one));
    return t;
  };

  /** The same session asking who it is, back to back: a flood of cheap requests. */
  const floodCheap = async () => {
    const t = { tries: 0, checked: 0, refused: 0 };
    while (!stopping) {
      const res = await fetch(`${base}/v1/session`, { headers: { Cookie: cookie } });
      await res.arrayBuffer();
      t.tries++;
      if (res.status === 429) t.refused++;
    }
    return t;
  };

  console.log(machineLine());
  console.log(loadGeneratorLine());
  console.log(`webhook paced at ${RATE} req/s over ${CONCURRENCY} connections, ${SECONDS} s per phase, ${ROUNDS} interleaved rounds (medians)`);
  const phases: Array<[string, (() => Promise<Tally>) | null]> = [
    ["idle", null],
    ["one session guessing (limited)", sessionGuesser],
    ["spread guesser (argon2 every try)", spreadGuesser],
    ["one session flooding GET /v1/session", floodCheap],
  ];
  const results = phases.map(() => [] as Array<{ r: LoadResult; tally: Tally | null }>);
  for (let round = 0; round < ROUNDS; round++) for (let i = 0; i < phases.length; i++) results[i]!.push(await phase(phases[i]![1]));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const idle = { p50: median(results[0]!.map((x) => x.r.p50Ms)), p99: median(results[0]!.map((x) => x.r.p99Ms)) };
  phases.forEach(([name], i) => {
    const rs = results[i]!;
    const p50 = median(rs.map((x) => x.r.p50Ms));
    const p99 = median(rs.map((x) => x.r.p99Ms));
    const tries = median(rs.map((x) => x.tally?.tries ?? 0));
    const checked = median(rs.map((x) => x.tally?.checked ?? 0));
    console.log(
      `${name.padEnd(38)} p50 ${p50.toFixed(2).padStart(7)} ms (×${(p50 / idle.p50).toFixed(2)})  p99 ${p99.toFixed(2).padStart(8)} ms (×${(p99 / idle.p99).toFixed(2)})  errors ${rs.reduce((a, x) => a + x.r.errors, 0)}` +
        (i > 0 ? `  | ${(tries / SECONDS).toFixed(1)} requests/s, ${checked} passwords checked per phase` : ""),
    );
  });
} finally {
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
