import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const bun = join(root, "node_modules", ".bin", "bun");

export interface ReceiverState {
  tries: Record<string, number>;
  accepted: string[];
  /** Each accepted event's body, by its webhook-id. */
  bodies: Record<string, any>;
  invalid: number;
}

/** Starts test/helpers/event-receiver.ts as a child process. */
export async function startReceiver() {
  const proc = Bun.spawn([bun, join(root, "test/helpers/event-receiver.ts")], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  while (!/READY (\d+)/.test(out)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`receiver exited: ${out}`);
    out += dec.decode(value);
  }
  reader.releaseLock();
  const port = Number(out.match(/READY (\d+)/)![1]);
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/hook`,
    async configure(c: { secret?: string; failFirst?: number; mode?: "accept" | "hang" }) {
      await fetch(`${base}/config`, { method: "POST", body: JSON.stringify(c) });
    },
    async state(): Promise<ReceiverState> {
      return (await (await fetch(`${base}/state`)).json()) as ReceiverState;
    },
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
