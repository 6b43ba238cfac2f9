import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { defaultServeConfig } from "../../../src/config";
import { startServer } from "../../../src/server";
import { expectStatus, tempDir } from "../../helpers/server";
import { operatorKey } from "../../helpers/accounts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** This process's Worker threads (Linux names them "Worker"). */
const workerThreads = () => readdirSync("/proc/self/task").filter((t) => readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "Worker").length;

/** A migrated file database with one account and a queued message whose stored priority rank is unknown. */
function databaseTheQueueRefuses(): string {
  const dir = tempDir("textwire-boot-");
  dirs.push(dir);
  const path = join(dir, "t.db");
  const sqlite = openSqlite(path);
  migrate(sqlite);
  // arrange: a database no release writes (a queued text with an unknown priority rank), made before the server starts
  sqlite.query("INSERT INTO accounts (id, name, plan, created_at) VALUES ('a', 'A', 'standard', '2026-01-01T00:00:00.000Z')").run();
  sqlite
    .query(
      `INSERT INTO messages (id, account_id, content, recipient_phone, status, priority, priority_rank, scheduled_for, metadata, seq, created_at, updated_at)
       VALUES ('odd', 'a', 'x', '+14155552671', 'queued', 'normal', 9, '2026-01-01T00:00:00.000Z', '{}', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    )
    .run();
  sqlite.close();
  return path;
}

describe("boot: the Workers load while the queue is rebuilt", () => {
  test("a queue rebuild that refuses the boot stops the threads already started, and the file can be served once fixed", async () => {
    const path = databaseTheQueueRefuses();
    const config = defaultServeConfig({ db: path, port: 0, host: "127.0.0.1" });
    const before = workerThreads();
    await expect(startServer(config)).rejects.toThrow(TypeError);
    // The applier and checkpoint threads started early are gone again (a terminated Worker's
    // thread may take a moment to exit).
    for (let i = 0; i < 100 && workerThreads() > before; i++) await Bun.sleep(20);
    expect(workerThreads()).toBe(before);

    const fix = openSqlite(path);
    // arrange: the file fixed by hand, with the server stopped
    fix.query("UPDATE messages SET priority_rank = 2").run();
    fix.close();
    const key = operatorKey({ dbPath: path }, "a", "admin_access").apiKey;
    const running = await startServer(config);
    try {
      // The fixed text is in the rebuilt queue: a tool asking for work is handed it.
      const next = await fetch(`http://127.0.0.1:${running.port}/v1/messages/next`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify({ limit: 5 }) });
      expect(((await expectStatus(next, 200)).data.messages as Array<{ id: string }>).map((m) => m.id)).toEqual(["odd"]);
      // The applier and the checkpointer. Test files share this process: a thread another file
      // left (a backup's, ending) may still be counted for a moment, so wait for it to go.
      for (let i = 0; i < 100 && workerThreads() !== before + 2; i++) await Bun.sleep(20);
      expect(workerThreads()).toBe(before + 2);
      const health = await fetch(`http://127.0.0.1:${running.port}/health`);
      expect(health.status).toBe(200);
    } finally {
      await running.stop();
    }
  });
});
