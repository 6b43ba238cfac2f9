/** What every benchmark needs around the server process it starts: its output, its memory, the machine. */
import { readFileSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";

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
