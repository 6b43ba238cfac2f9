import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/server";
import { spawnServer } from "../helpers/spawn-server";

const dir = tempDir("textwire-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe("durability", () => {
  test("every submission acknowledged before kill -9 is in the database after restart", async () => {
    const first = await spawnServer(dbPath);
    expect(first.key).toBeDefined();
    const formRes = await fetch(`${first.url}/v1/forms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${first.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Kill test", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First" }] }),
    });
    expect(formRes.status).toBe(201);
    const formId = ((await formRes.json()) as any).data.form.id;

    const acked: string[] = [];
    let errors = 0;
    let n = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const phone = `+1415555${String(1000 + (n++ % 9000)).padStart(4, "0")}`;
        try {
          const res = await fetch(`${first.url}/v1/forms/${formId}/webhook`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ phoneNumber: phone, firstName: "K" }),
          });
          if (res.status === 200) acked.push(((await res.json()) as any).data.messageId);
          else errors++;
        } catch {
          errors++; // connection cut by the kill
        }
      }
    };
    const workers = Array.from({ length: 32 }, worker);
    while (acked.length < 400) await Bun.sleep(5);
    first.proc.kill(9); // SIGKILL while requests are in flight
    await first.proc.exited;
    stop = true;
    await Promise.all(workers);
    const ackedAtKill = [...acked];
    expect(ackedAtKill.length).toBeGreaterThanOrEqual(400);

    const second = await spawnServer(dbPath);
    try {
      const db = new Database(dbPath, { readonly: true });
      const stmt = db.query("SELECT status FROM messages WHERE id = ?");
      const missing = ackedAtKill.filter((id) => !stmt.get(id));
      db.close();
      expect(missing).toEqual([]);
      // The restarted server keeps accepting.
      const res = await fetch(`${second.url}/v1/forms/${formId}/webhook`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ phoneNumber: "+14155550100" }),
      });
      expect([200, 400]).toContain(res.status);
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  }, 60_000);
});
