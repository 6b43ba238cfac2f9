import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate, schemaVersion, SCHEMA_VERSION, SchemaTooNewError, type Migration } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { lockPathOf } from "../../../src/services/backups";
import { formBody, tempDir } from "../../helpers/server";

const ROOT = join(import.meta.dir, "../../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const dirs: string[] = [];
const dir = () => {
  const d = tempDir("textwire-life-");
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Spawns `textwire serve`, resolves with its port and admin key once the listen line is out. */
async function spawnServe(db: string) {
  // serve prints a setup address on an empty database: the key comes as a headless install makes it.
  let firstKey = "";
  if (!existsSync(db)) {
    const cli = async (args: string[]) => {
      const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), ...args, "--json", "--db", db], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`${args.join(" ")}: ${await new Response(p.stderr).text()}`);
      return JSON.parse(await new Response(p.stdout).text());
    };
    const { accountId } = await cli(["accounts", "create", "--name", "Default account"]);
    firstKey = (await cli(["keys", "create", "--account", accountId, "--operator"])).apiKey;
  }
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--host", "127.0.0.1", "--db", db, "--log-format", "json"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, TEXTWIRE_PORT: "", TEXTWIRE_DB: "" },
  });
  const reader = proc.stdout.getReader();
  let out = "";
  const dec = new TextDecoder();
  while (!/Textwire listening on \S+/.test(out)) {
    const { done, value } = await reader.read();
    if (done) throw new Error("serve exited early: " + out + (await new Response(proc.stderr).text()));
    out += dec.decode(value);
  }
  const port = Number(/Textwire listening on https?:\/\/[^:]+:(\d+)/.exec(out)![1]);
  const key = firstKey;
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  return { proc, port, key };
}

describe("graceful shutdown", () => {
  test("SIGTERM during a stream of writes: exit 0, every acknowledged submission is in the database", async () => {
    const d = dir();
    const db = join(d, "t.db");
    const { proc, port, key } = await spawnServe(db);
    const acknowledged: string[] = [];
    let stop = false;
    let errors = 0;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}-${crypto.randomUUID().slice(0, 6)}`;
        try {
          const res = await fetch(`http://127.0.0.1:${port}/v1/forms`, {
            method: "POST",
            headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
            body: JSON.stringify(formBody({ name })),
          });
          if (res.status === 201) acknowledged.push(name);
          else await res.text();
        } catch {
          errors++; // refused once the listener has closed: not acknowledged, fine
          if (errors > 50) return;
          await Bun.sleep(5);
        }
      }
    };
    const workers = [0, 1, 2, 3, 4, 5].map(worker);
    while (acknowledged.length < 40) await Bun.sleep(5);
    proc.kill("SIGTERM");
    const code = await proc.exited;
    stop = true;
    await Promise.all(workers);
    expect(code).toBe(0);
    expect(existsSync(lockPathOf(db))).toBe(false);
    const sqlite = new Database(db, { readonly: true });
    const names = new Set((sqlite.query("SELECT name FROM forms").all() as Array<{ name: string }>).map((r) => r.name));
    sqlite.close();
    const lost = acknowledged.filter((n) => !names.has(n));
    expect(lost).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);
  }, 30_000);

  test("SIGINT also exits 0", async () => {
    const d = dir();
    const { proc, port } = await spawnServe(join(d, "i.db"));
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
  }, 30_000);
});

describe("migrations", () => {
  test("a failing migration rolls back everything: the old database is untouched", () => {
    const d = dir();
    const path = join(d, "m.db");
    const sqlite = openSqlite(path);
    migrate(sqlite);
    sqlite.exec("INSERT INTO accounts (id, name, plan, created_at) VALUES ('a1', 'A', 'standard', '2026-01-01T00:00:00.000Z')");
    const tablesBefore = sqlite.query("SELECT name, sql FROM sqlite_master ORDER BY name").all();
    const broken: Migration[] = [
      ...EMBEDDED_MIGRATIONS,
      { idx: 100, tag: "0100_good_part", sql: "CREATE TABLE extra_one (x INTEGER);\n--> statement-breakpoint\nALTER TABLE accounts ADD COLUMN nickname TEXT;" },
      { idx: 101, tag: "0101_broken", sql: "CREATE TABLE extra_two (y INTEGER);\n--> statement-breakpoint\nTHIS IS NOT SQL;" },
    ];
    expect(() => migrate(sqlite, broken)).toThrow();
    expect(schemaVersion(sqlite)).toBe(SCHEMA_VERSION);
    expect(sqlite.query("SELECT name, sql FROM sqlite_master ORDER BY name").all()).toEqual(tablesBefore);
    expect((sqlite.query("SELECT count(*) AS n FROM schema_migrations").get() as any).n).toBe(EMBEDDED_MIGRATIONS.length);
    expect((sqlite.query("SELECT name FROM accounts WHERE id = 'a1'").get() as any).name).toBe("A");
    // Still usable, and the same list minus the broken one applies cleanly.
    expect(migrate(sqlite, broken.slice(0, -1)).applied).toEqual(["0100_good_part"]);
    expect(schemaVersion(sqlite)).toBe(SCHEMA_VERSION + 1);
    sqlite.close();
  });

  test("a database written by a newer version is refused by serve, byte for byte untouched", async () => {
    const d = dir();
    const path = join(d, "newer.db");
    const sqlite = openSqlite(path);
    migrate(sqlite);
    sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite.exec("PRAGMA journal_mode = DELETE"); // a header that opening in WAL mode would rewrite
    sqlite.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
    sqlite.close();
    const before = readFileSync(path);
    const p = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "serve", "--port", "0", "--db", path], { cwd: ROOT, env: { ...process.env, TEXTWIRE_PORT: "" } });
    expect(p.exitCode).not.toBe(0);
    expect(p.stderr.toString()).toContain("newer Textwire");
    expect(p.stdout.toString()).not.toContain("listening");
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(path + "-wal")).toBe(false);
    expect(existsSync(lockPathOf(path))).toBe(false);
    // migrate refuses the same way, in process too.
    const again = openSqlite(":memory:");
    again.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    expect(() => migrate(again)).toThrow(SchemaTooNewError);
    again.close();
  });

  test("--version reports the schema version", () => {
    const p = Bun.spawnSync([BUN, join(ROOT, "src/main.ts"), "--version", "--json"], { cwd: ROOT });
    expect(JSON.parse(p.stdout.toString())).toEqual({ version: expect.any(String), schemaVersion: SCHEMA_VERSION });
  });
});

describe("stop() drains in-flight requests", () => {
  test("a request whose body is still arriving when stop begins is answered and durable; new connections are refused", async () => {
    const { startTestServer } = await import("../../helpers/server");
    const s = await startTestServer();
    const body = JSON.stringify(formBody({ name: "Arrived during shutdown" }));
    let push!: (chunk: string | null) => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(new TextEncoder().encode(chunk)));
      },
    });
    push(body.slice(0, 20));
    const pending = fetch(`${s.base}/forms`, {
      method: "POST",
      headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" },
      body: stream,
      duplex: "half",
    });
    await Bun.sleep(100);
    let stopped = false;
    const stopping = s.running.stop().then(() => (stopped = true));
    await Bun.sleep(100);
    expect(stopped).toBe(false); // still waiting for the in-flight request
    let refused = false;
    await fetch(`${s.url}/health`).catch(() => (refused = true));
    expect(refused).toBe(true);
    push(body.slice(20));
    push(null);
    const res = await pending;
    expect(res.status).toBe(201);
    await stopping;
    const db = new Database(s.dbPath, { readonly: true });
    expect((db.query("SELECT count(*) AS n FROM forms WHERE name = 'Arrived during shutdown'").get() as any).n).toBe(1);
    db.close();
    rmSync(s.dir, { recursive: true, force: true });
  });

  test("a parked long-poll answers 204 at once: stop does not wait out its ?wait", async () => {
    const { startTestServer } = await import("../../helpers/server");
    const s = await startTestServer();
    const poll = s.api("/messages/next?wait=10");
    await Bun.sleep(100);
    expect(s.running.deps.leases.waiting(s.accountId)).toBe(1);
    const t0 = performance.now();
    await s.running.stop();
    // Well before the 10 s wait ends, loaded machine included: the stop did not wait it out.
    expect(performance.now() - t0).toBeLessThan(8_000);
    expect((await poll).status).toBe(204);
    rmSync(s.dir, { recursive: true, force: true });
  }, 20_000);
});
