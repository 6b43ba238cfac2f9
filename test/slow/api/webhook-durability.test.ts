import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { spawnServer } from "../../helpers/spawn-server";

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

  test("kill -9 while the applier is applying: after restart every acknowledged submission is applied exactly once", async () => {
    const path = join(dir, "applier.db");
    const args = ["--allow-private-webhook-urls"];
    let srv = await spawnServer(path, args);
    const key = srv.key!;
    const call = (url: string, p: string, body: unknown) =>
      fetch(`${url}${p}`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const formRes = await call(srv.url, "/v1/forms", { name: "Applier kill", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First" }] });
    expect(formRes.status).toBe(201);
    const formId = ((await formRes.json()) as any).data.form.id;
    // An endpoint takes every event, so each applied submission also writes its events.
    const ep = await call(srv.url, "/v1/webhook-endpoints", { url: "http://127.0.0.1:9/hook", events: ["*"], allowInsecure: true });
    expect(ep.status, await ep.clone().text()).toBe(201);

    const acked = new Map<string, string>(); // messageId → phone
    let leftInIntake = 0;
    for (let round = 0; round < 3; round++) {
      let stop = false;
      let n = 0;
      const url = srv.url;
      const client = async (c: number) => {
        while (!stop) {
          // Repeated phones: the applier merges into contacts the intake itself created.
          const phone = `+1415556${String(c).padStart(2, "0")}${String(n++ % 20).padStart(2, "0")}`;
          try {
            const res = await fetch(`${url}/v1/forms/${formId}/webhook`, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ phoneNumber: phone, firstName: `R${round}` }),
            });
            if (res.status === 200) acked.set(((await res.json()) as any).data.messageId, phone);
          } catch {}
        }
      };
      const clients = Array.from({ length: 32 }, (_, c) => client(c));
      const target = acked.size + 300;
      while (acked.size < target) await Bun.sleep(2);
      srv.proc.kill(9); // SIGKILL: the applier Worker dies with the process, mid-batch or not
      await srv.proc.exited;
      stop = true;
      await Promise.all(clients);
      const db = new Database(path, { readonly: true });
      leftInIntake += (db.query("SELECT count(*) AS n FROM submission_intake").get() as { n: number }).n;
      db.close();
      srv = await spawnServer(path, args);
    }
    try {
      // Boot drained the intake before it listened.
      const db = new Database(path, { readonly: true });
      const one = (sql: string, ...p: any[]) => db.query(sql).get(...p) as any;
      expect(one("SELECT count(*) AS n FROM submission_intake").n).toBe(0);
      const ids = [...acked.keys()];
      const found = db.query("SELECT id, recipient_phone FROM messages WHERE id = ?");
      expect(ids.filter((id) => (found.get(id) as any)?.recipient_phone !== acked.get(id))).toEqual([]);
      // Exactly once: one submission per message, one contact per phone, one form.submission event per submission.
      expect(db.query("SELECT message_id FROM submissions WHERE message_id IS NOT NULL GROUP BY message_id HAVING count(*) > 1").all()).toEqual([]);
      expect(one("SELECT count(*) AS n FROM messages m WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.message_id = m.id)").n).toBe(0);
      expect(db.query("SELECT phone_number FROM contacts GROUP BY account_id, phone_number HAVING count(*) > 1").all()).toEqual([]);
      const subs = one("SELECT count(*) AS n FROM submissions WHERE form_id = ?", formId).n;
      expect(subs).toBeGreaterThanOrEqual(acked.size);
      expect(one("SELECT count(*) AS n FROM events WHERE type = 'form.submission'").n).toBe(subs);
      expect(one("SELECT count(DISTINCT json_extract(payload, '$.data.submission.id')) AS n FROM events WHERE type = 'form.submission'").n).toBe(subs);
      expect(one("SELECT count(*) AS n FROM events WHERE type = 'message.queued'").n).toBe(one("SELECT count(*) AS n FROM messages").n);
      db.close();
      // The kills did land while applied data lagged the intake (what this test is about).
      expect(leftInIntake).toBeGreaterThan(0);
    } finally {
      srv.proc.kill("SIGTERM");
      await srv.proc.exited;
    }
    // Every derived structure (rollups, counts, usage, search index, the intake) equals a
    // from-scratch rebuild: `textwire doctor --check` exits 0.
    const doctor = Bun.spawnSync([join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun"), "src/main.ts", "doctor", "--check", "--json", "--db", path], {
      cwd: join(import.meta.dir, "..", "..", ".."),
    });
    expect(doctor.stdout.toString()).toContain('"ok":true');
    expect(doctor.exitCode).toBe(0);
  }, 120_000);
});
