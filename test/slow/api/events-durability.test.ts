import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { spawnServer } from "../../helpers/spawn-server";
import { startReceiver, waitFor } from "../../helpers/event-receiver-client";

const dir = tempDir("textwire-events-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe("durability of the outbox", () => {
  test("SIGKILL with 1,000 undelivered events: all delivered after restart", async () => {
    const receiver = await startReceiver();
    const first = await spawnServer(dbPath, ["--allow-private-webhook-urls"]);
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
      // Events are written when the intake is applied, just after the 200s: an API
      // request passes the read barrier, so the file read next holds all of them.
      expect((await fetch(`${first.url}/v1/forms`, { headers: auth })).status).toBe(200);
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

      const second = await spawnServer(dbPath, ["--allow-private-webhook-urls"]);
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
