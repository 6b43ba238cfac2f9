import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../helpers/server";
import { spawnServer } from "../../helpers/spawn-server";
import { insertContact } from "../../helpers/contact-fixtures";

const dir = tempDir("textwire-automations-kill-");
const dbPath = join(dir, "textwire.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONTACTS = 4_000;
const STEPS = 2;

/** What the file holds about the automation's runs, read on a connection of its own. */
function tally(automationId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string, ...p: any[]) => (db.query(sql).get(...p) as { n: number }).n;
    return {
      runs: one("SELECT COUNT(*) AS n FROM automation_runs WHERE automation_id = ?", automationId),
      contactsWithRuns: one("SELECT COUNT(DISTINCT contact_id) AS n FROM automation_runs WHERE automation_id = ?", automationId),
      steps: one("SELECT COUNT(*) AS n FROM automation_run_steps s JOIN automation_runs r ON r.id = s.run_id WHERE r.automation_id = ?", automationId),
      messages: one("SELECT COUNT(*) AS n FROM messages WHERE json_extract(metadata, '$.automationId') = ?", automationId),
      // A message of the automation without its (run, step) row, or a (run, step) with two messages.
      orphans: one(
        "SELECT COUNT(*) AS n FROM messages m WHERE json_extract(m.metadata, '$.automationId') = ? AND NOT EXISTS (SELECT 1 FROM automation_run_steps s WHERE s.message_id = m.id)",
        automationId,
      ),
      doubled: one(
        `SELECT COUNT(*) AS n FROM (SELECT json_extract(metadata, '$.runId') AS run, json_extract(metadata, '$.step') AS step, COUNT(*) AS c FROM messages
           WHERE json_extract(metadata, '$.automationId') = ? GROUP BY run, step HAVING c > 1)`,
        automationId,
      ),
      queued: one("SELECT COUNT(*) AS n FROM messages WHERE json_extract(metadata, '$.automationId') = ? AND status = 'queued'", automationId),
      active: one("SELECT COUNT(*) AS n FROM automation_runs WHERE automation_id = ? AND status = 'active'", automationId),
      started: (db.query("SELECT COALESCE(SUM(started), 0) AS n FROM automation_starts WHERE automation_id = ?").get(automationId) as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

async function waitUntil(what: string, ok: () => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe("automations survive a kill", () => {
  test("SIGKILL during start and during stop: no (run, step) gets two messages; a restart creates what is missing and finishes the stop", async () => {
    const first = await spawnServer(dbPath);
    const auth = { Authorization: `Bearer ${first.key}`, "Content-Type": "application/json" };
    let automationId = "";
    try {
      const form = await fetch(`${first.url}/v1/forms`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "Kill test", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text" }] }),
      });
      const formId = ((await form.json()) as any).data.form.id;
      const accountId = ((await (await fetch(`${first.url}/v1/account`, { headers: auth })).json()) as any).data.account.id;
      const db = new Database(dbPath);
      db.exec("PRAGMA busy_timeout = 10000");
      db.transaction(() => {
        for (let i = 0; i < CONTACTS; i++) insertContact(db, accountId, { firstName: `K${i}` });
      })();
      db.close();
      const a = await fetch(`${first.url}/v1/automations`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "Follow-up", formId, steps: [{ template: "Thanks {{firstName}}", delay: "2d", sendAt: "10:00" }, { template: "Still happy?", delay: "1w" }] }),
      });
      expect(a.status).toBe(201);
      automationId = ((await a.json()) as any).data.automation.id;
      const start = await fetch(`${first.url}/v1/automations/${automationId}/start`, { method: "POST", headers: auth, body: "{}" });
      expect(start.status).toBe(202);
      expect(((await start.json()) as any).data.starting).toBe(CONTACTS);
      // Killed once some chunks are committed and before all are.
      await waitUntil("a first committed chunk", () => tally(automationId).started > 0);
    } finally {
      first.proc.kill(9);
      await first.proc.exited;
    }
    const cut = tally(automationId);
    expect(cut.runs).toBeLessThan(CONTACTS);
    expect(cut).toMatchObject({ orphans: 0, doubled: 0, steps: cut.runs * STEPS, messages: cut.runs * STEPS, contactsWithRuns: cut.runs });

    const second = await spawnServer(dbPath);
    try {
      await waitUntil("every contact started", () => tally(automationId).runs === CONTACTS);
      const whole = tally(automationId);
      expect(whole).toMatchObject({ runs: CONTACTS, contactsWithRuns: CONTACTS, steps: CONTACTS * STEPS, messages: CONTACTS * STEPS, orphans: 0, doubled: 0 });
      // Turning it off stops every run; killed while that is under way.
      const auth2 = { Authorization: `Bearer ${first.key}`, "Content-Type": "application/json" };
      const off = fetch(`${second.url}/v1/automations/${automationId}`, { method: "PUT", headers: auth2, body: JSON.stringify({ isActive: false }) }).catch(() => null);
      await waitUntil("the stop under way", () => tally(automationId).active < CONTACTS, 30_000).catch(() => {});
      second.proc.kill(9);
      await second.proc.exited;
      await off;
    } finally {
      second.proc.kill(9);
    }
    const third = await spawnServer(dbPath);
    try {
      await waitUntil("every run stopped", () => tally(automationId).active === 0);
      expect(tally(automationId)).toMatchObject({ runs: CONTACTS, queued: 0, orphans: 0, doubled: 0, messages: CONTACTS * STEPS });
    } finally {
      third.proc.kill(9);
      await third.proc.exited;
    }
  }, 180_000);
});
