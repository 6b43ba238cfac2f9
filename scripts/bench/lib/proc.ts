/** What every benchmark needs around the server process it starts: its output, its memory, the machine. */
import { readFileSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { runWrk, wrkPath, wrkVersion } from "./wrk";

/** Reads a child's output until `re` matches (e.g. the start line with the admin key and URL). */
export async function readUntil(stream: ReadableStream<Uint8Array>, re: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let out = "";
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const m = out.match(re);
      if (m) return m;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${re}: ${out}`);
      const { done, value } = await reader.read();
      if (done) throw new Error(`process ended before ${re}: ${out}`);
      out += dec.decode(value);
    }
  } finally {
    reader.releaseLock();
  }
}

/** A process's peak resident memory (VmHWM) in MB; NaN once it is gone. */
export function peakRssMb(pid: number): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmHWM:\s+(\d+) kB/);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The line every benchmark prints first: which machine the figures come from. */
export function machineLine(): string {
  const cpu = cpus();
  return `machine: ${cpu.length} × ${cpu[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${release()}, bun ${Bun.version}, tmp ${tmpdir()}`;
}

/** What one load run gives, from either load generator (scripts/bench/lib/load.ts prints it; wrk.ts parses wrk's). */
export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statuses: Record<string, number>;
  nextOffset: number;
}

/**
 * Which program makes the webhook load: wrk when it is installed (docs/api-decisions.md,
 * "Benchmarks take their load from wrk"), the JS generator with `--load js` or when wrk is missing.
 */
export type LoadGenerator = { kind: "wrk"; path: string; version: string; threads?: number } | { kind: "js"; wrkMissing: boolean };

export const WRK_INSTALL_HINT = "apt-get install wrk (Debian/Ubuntu)";

/** Reads `--load wrk|js` and `--load-threads N` from a bench's arguments; throws on a bad value. */
export function chooseLoadGenerator(argv: string[], found: string | null = wrkPath()): LoadGenerator {
  const at = argv.indexOf("--load");
  const asked = at >= 0 ? argv[at + 1] : undefined;
  if (asked !== undefined && asked !== "wrk" && asked !== "js") throw new Error(`--load takes wrk or js, not ${JSON.stringify(asked)}`);
  const t = argv.indexOf("--load-threads");
  const threads = t >= 0 ? Number(argv[t + 1]) : undefined;
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1)) throw new Error(`--load-threads takes a whole number from 1, not ${JSON.stringify(argv[t + 1])}`);
  if (asked === "js") return { kind: "js", wrkMissing: false };
  if (!found) {
    if (asked === "wrk") throw new Error(`--load wrk: wrk is not installed; install it with ${WRK_INSTALL_HINT}`);
    return { kind: "js", wrkMissing: true };
  }
  return { kind: "wrk", path: found, version: wrkVersion(found), threads };
}

let chosen: LoadGenerator | undefined;
/** This bench's load generator, from its command line (decided once). */
export function loadGenerator(): LoadGenerator {
  if (!chosen) {
    try {
      chosen = chooseLoadGenerator(process.argv.slice(2));
    } catch (err) {
      console.error((err as Error).message);
      process.exit(2);
    }
  }
  return chosen;
}

/** The one line every webhook bench prints: which program produced its figures. */
export function loadGeneratorLine(g: LoadGenerator = loadGenerator(), cores = cpus().length): string {
  if (g.kind === "wrk") return `load generator: ${g.version} (C, ${g.threads ?? cores} threads, its own process; --load js for the JS one)`;
  const js = "JS (scripts/bench/lib/load.ts, a Bun process on the same cores as the server: its own CPU time is in the figures)";
  if (g.wrkMissing) return `load generator: ${js} — wrk is not installed; for figures of the server alone install it: ${WRK_INSTALL_HINT}`;
  return `load generator: ${js}, as asked with --load js`;
}

/**
 * Drives the forms' webhooks from a second process (wrk, or scripts/bench/lib/load.ts; either way
 * not the bench's own event loop) and resolves with its figures.
 */
export async function runLoad(base: string, forms: string[], o: { concurrency: number; seconds: number; offset: number; rate?: number }): Promise<LoadResult> {
  const g = loadGenerator();
  if (g.kind === "wrk") return runWrk(base, forms, { ...o, threads: g.threads }, g.path);
  const root = join(import.meta.dir, "..", "..", "..");
  const bun = join(root, "node_modules", ".bin", "bun");
  const p = Bun.spawn(
    [bun, join(root, "scripts/bench/lib/load.ts"), "--base", base, "--forms", forms.join(","), "--concurrency", String(o.concurrency), "--seconds", String(o.seconds), "--offset", String(o.offset), ...(o.rate ? ["--rate", String(o.rate)] : [])],
    { stdout: "pipe", stderr: "inherit" },
  );
  const text = await new Response(p.stdout).text();
  await p.exited;
  return JSON.parse(text.trim().split("\n").pop()!);
}

/**
 * An account and its operator key on `db`, made from the command line as a headless install
 * does (`serve` on an empty database prints a setup link, not a key). The operator key also
 * reads /metrics.
 */
export function benchAccount(cmd: string[], db: string): { accountId: string; key: string } {
  const run = (args: string[]) => {
    const r = Bun.spawnSync([...cmd, ...args, "--json", "--db", db], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${args.slice(0, 2).join(" ")} failed: ${r.stderr.toString()}`);
    return JSON.parse(r.stdout.toString());
  };
  const { accountId } = run(["accounts", "create", "--name", "Bench"]) as { accountId: string };
  const { apiKey } = run(["keys", "create", "--account", accountId, "--operator"]) as { apiKey: string };
  return { accountId, key: apiKey };
}
