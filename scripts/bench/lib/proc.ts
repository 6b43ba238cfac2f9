/** What every benchmark needs around the server process it starts: its output, its memory, the machine. */
import { readFileSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";

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

/** What scripts/bench/lib/load.ts prints. */
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
 * Drives the forms' webhooks from a second process (scripts/bench/lib/load.ts, so it does not
 * share the server's CPU time slice) and resolves with its figures.
 */
export async function runLoad(base: string, forms: string[], o: { concurrency: number; seconds: number; offset: number; rate?: number }): Promise<LoadResult> {
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
