/**
 * What the webhook benches share: a Textwire server child process started with the bench's
 * flags and its forms created, and the per-stage sums it shows in /metrics with --stage-timing.
 */
import type { Subprocess } from "bun";
import { benchAccount, readUntil } from "./proc";
import { STAGES, type Stage } from "../../../src/lib/stage-timing";

/** The benchmark's form: four fields, a template that uses three. */
export const BENCH_FORM = (i: number) => ({
  name: `Bench form ${i}`,
  messageTemplate: "Hi {{firstName}} {{lastName}}, thanks for reaching {{formName}} about {{company}}. We will text you shortly.",
  fields: [
    { name: "firstName", type: "text", label: "First name", validation: { maxLength: 50 } },
    { name: "lastName", type: "text", label: "Last name" },
    { name: "email", type: "email", label: "E-mail" },
    { name: "company", type: "text", label: "Company", validation: { maxLength: 100 } },
  ],
  settings: { timezone: "America/New_York" },
});

export interface BenchServer {
  proc: Subprocess<"ignore", "pipe", "ignore">;
  key: string;
  base: string;
  forms: string[];
}

/** `cmd serve` on `db` (no webhook rate limit) with `flags`, and `formCount` bench forms made. */
export async function startWebhookServer(cmd: string[], db: string, flags: string[], formCount: number): Promise<BenchServer> {
  const { key } = benchAccount(cmd, db);
  const proc = Bun.spawn([...cmd, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json", "--webhook-limit-per-minute", "100000000", ...flags], {
    stdout: "pipe",
    stderr: "ignore",
  });
  try {
    const m = await readUntil(proc.stdout, /Textwire listening on (http:\/\/\S+)/);
    const base = m[1].replace("localhost", "127.0.0.1");
    const forms: string[] = [];
    for (let i = 0; i < formCount; i++) {
      const res = await fetch(`${base}/v1/forms`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(BENCH_FORM(i)),
      });
      if (res.status !== 201) throw new Error(`form create failed: ${res.status} ${await res.text()}`);
      forms.push(((await res.json()) as any).data.form.id);
    }
    return { proc, key, base, forms };
  } catch (err) {
    proc.kill("SIGTERM");
    throw err;
  }
}

/** The stage sums the server shows in /metrics with --stage-timing. */
export async function stageSums(base: string, key: string): Promise<{ sums: Record<Stage, number>; requests: number }> {
  const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).text();
  const sums = Object.fromEntries(STAGES.map((s) => [s, Number(new RegExp(`textwire_stage_microseconds_total\\{stage="${s}"\\} (\\d+)`).exec(text)?.[1] ?? NaN)])) as Record<Stage, number>;
  const requests = Number(/textwire_stage_requests_total (\d+)/.exec(text)?.[1] ?? NaN);
  return { sums, requests };
}

/** µs per request of each stage between two readings. */
export function stagesBetween(before: { sums: Record<Stage, number>; requests: number }, after: { sums: Record<Stage, number>; requests: number }): Record<Stage, number> {
  const n = Math.max(1, after.requests - before.requests);
  return Object.fromEntries(STAGES.map((s) => [s, (after.sums[s] - before.sums[s]) / n])) as Record<Stage, number>;
}
