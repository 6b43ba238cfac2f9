import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/server";
import { startReceiver, waitFor } from "../helpers/event-receiver-client";

const root = join(import.meta.dir, "..", "..");
const bun = join(root, "node_modules", ".bin", "bun");
const dir = tempDir("textwire-events-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function spawnServer() {
  const proc = Bun.spawn(
    [bun, "src/main.ts", "serve", "--port", "0", "--host", "127.0.0.1", "--db", dbPath, "--log-format", "json", "--webhook-limit-per-minute", "1000000", "--allow-private-webhook-urls"],
    { cwd: root, stdout: "pipe", stderr: "ignore" },
  );
  const reader = proc.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!/Textwire listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += dec.decode(value);
  }
  reader.releaseLock();
  const url = out.match(/Textwire listening on (http:\/\/\S+)/)![1].replace("localhost", "127.0.0.1");
  const key = out.match(/txwire_sk_[A-Za-z0-9]{40}/)?.[0];
  return { proc, url, key };
}

describe("durability of the outbox", () => {
  test("SIGKILL with 1,000 undelivered events: all delivered after restart", async () => {
    const receiver = await startReceiver();
    const first = await spawnServer();
    try {
      const auth = { Authorization: `Bearer ${first.key}`, "Content-Type": "application/json" };
      const ep = await fetch(`${first.url}/v1/webhook-endpoints`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ url: receiver.url, events: ["form.submission"], allowInsecure: true }),
      });
      expect(ep.status).toBe(201);
      // The receiver holds every request open: the first attempts stay in flight, the rest pending.
      await receiver.configure({ secret: ((await ep.json()) as any).data.endpoint.secret, mode: "hang" });
      const formRes = await fetch(`${first.url}/v1/forms`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "Kill test", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First" }] }),
      });
      const formId = ((await formRes.json()) as any).data.form.id;
      let n = 0;
      const post = async () => {
        while (n < 1000) {
          const i = n++;
          const res = await fetch(`${first.url}/v1/forms/${formId}/webhook`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ phoneNumber: `+1415555${String(1000 + i).padStart(4, "0")}`, firstName: "K" }),
          });
          expect(res.status).toBe(200);
        }
      };
      await Promise.all(Array.from({ length: 16 }, post));
      const peek = new Database(dbPath, { readonly: true });
      // Undelivered: pending, or not even fanned out to the endpoint yet (both must survive the kill).
      const undelivered = (
        peek.query("SELECT count(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.status <> 'pending')").get() as { n: number }
      ).n;
      const eventIds = (peek.query("SELECT id FROM events").all() as Array<{ id: string }>).map((r) => r.id);
      peek.close();
      expect(eventIds.length).toBe(1000);
      expect(undelivered).toBe(1000);
      expect((await receiver.state()).accepted.length).toBe(0);

      first.proc.kill(9);
      await first.proc.exited;
      await receiver.configure({ mode: "accept" });

      const second = await spawnServer();
      try {
        const state = await waitFor("all 1,000 delivered", async () => {
          const s = await receiver.state();
          return s.accepted.length >= 1000 ? s : undefined;
        }, 45_000, 100);
        expect(state.invalid).toBe(0);
        expect([...state.accepted].sort()).toEqual(eventIds.sort());
      } finally {
        second.proc.kill("SIGTERM");
        await second.proc.exited;
      }
    } finally {
      if (first.proc.exitCode === null) first.proc.kill(9);
      await receiver.stop();
    }
  }, 90_000);
});
