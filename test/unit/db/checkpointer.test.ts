import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { CHECKPOINT_IDLE_MS, Checkpointer } from "../../../src/db/checkpointer";
import { buildServeConfig, ConfigError, parseArgs } from "../../../src/config";

/** The idle time these tests give the thread (the server's, CHECKPOINT_IDLE_MS, is minutes). */
const IDLE_MS = 1_000;
import { GroupCommitWriter } from "../../../src/db/group-commit";
import { WriteGate } from "../../../src/db/write-gate";
import { silentLogger } from "../../../src/lib/log";
import { startTestServer } from "../../helpers/server";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb() {
  const d = mkdtempSync(join(tmpdir(), "textwire-ckpt-"));
  dirs.push(d);
  return join(d, "t.db");
}
const walSize = (path: string) => (existsSync(path + "-wal") ? statSync(path + "-wal").size : 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 5_000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(20);
  return cond();
}
const pragma = (db: ReturnType<typeof openSqlite>, name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as object)[0];

describe("connection settings", () => {
  test("statement journals in memory and a sized page cache", () => {
    const db = openSqlite(tempDb(), { cacheMb: 8 });
    expect(pragma(db, "temp_store")).toBe(2);
    expect(pragma(db, "cache_size")).toBe(-8 * 1024);
    db.close();
    const plain = openSqlite(tempDb(), { tempStore: "file" });
    expect(pragma(plain, "temp_store")).toBe(0);
    expect(pragma(plain, "cache_size")).toBe(-2000); // SQLite's default
    plain.close();
  });
});

describe("transactions begin IMMEDIATE", () => {
  test("a transaction that reads, then writes after another connection truncated the WAL, commits (and nests)", () => {
    const path = tempDb();
    const a = openSqlite(path);
    a.exec("PRAGMA wal_autocheckpoint = 0");
    a.exec("CREATE TABLE t (x INTEGER)");
    const b = openSqlite(path);
    b.exec("PRAGMA busy_timeout = 50");
    a.run("INSERT INTO t VALUES (1)");
    b.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    let nestedRolledBack = false;
    const n = a.transaction(() => {
      a.query("SELECT count(*) FROM t").get();
      // Another connection's TRUNCATE now finds our write lock and gives up; it cannot reset the
      // WAL under us (with a DEFERRED transaction the INSERT below failed with SQLITE_BUSY_SNAPSHOT).
      const r = b.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
      expect(r.busy).toBe(1);
      a.run("INSERT INTO t VALUES (2)");
      try {
        a.transaction(() => {
          a.run("INSERT INTO t VALUES (3)");
          throw new Error("undo the nested part only");
        })();
      } catch {
        nestedRolledBack = true;
      }
      return (a.query("SELECT count(*) AS n FROM t").get() as { n: number }).n;
    }).deferred();
    expect(n).toBe(2);
    expect(nestedRolledBack).toBe(true);
    a.close();
    b.close();
  });
});

describe("background checkpoints", () => {
  test("a writer transaction that reads, waits while the WAL goes idle, then writes is never refused (no SQLITE_BUSY_SNAPSHOT)", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 5, idleMs: IDLE_MS });
    await cp.start();
    db.exec("CREATE TABLE t (x INTEGER)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    const count = db.prepare("SELECT count(*) AS n FROM t");
    let failures = 0;
    for (let i = 0; i < 25; i++) {
      ins.run(i); // frames in the WAL, about to be copied and found idle
      db.exec("BEGIN"); // deferred: reads first, as a group-commit job or an import slice does
      count.get();
      await sleep(30); // the checkpoint thread ticks several times while this transaction is open
      try {
        ins.run(-i);
        db.exec("COMMIT");
      } catch {
        failures++;
        db.exec("ROLLBACK");
      }
    }
    expect(failures).toBe(0);
    expect(await until(() => walSize(path) === 0)).toBe(true); // and the idle WAL is still truncated
    await cp.stop();
    db.close();
  });

  test("a WAL written a moment ago waits for the idle time before its pass (one pass for the pages of many commits), then is truncated", async () => {
    // docs/api-decisions.md, "Disk bytes, round four": the server waits CHECKPOINT_IDLE_MS.
    expect(CHECKPOINT_IDLE_MS).toBeGreaterThanOrEqual(60_000);
    const path = tempDb();
    const db = openSqlite(path);
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 10, idleMs: 1_500 });
    await cp.start();
    db.exec("CREATE TABLE t (x TEXT)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    // A commit every 100 ms for 0.8 s, then quiet: far fewer frames than a pass by size needs.
    for (let i = 0; i < 8; i++) {
      ins.run("x".repeat(300));
      await sleep(100);
    }
    const written = walSize(path);
    expect(written).toBeGreaterThan(0);
    await sleep(700);
    // Quiet for 0.7 s: no pass yet, every frame still in the WAL.
    expect((await cp.stats())!.passive).toBe(0);
    expect(walSize(path)).toBe(written);
    // Past the idle time: one pass for all of them, and the WAL goes back to 0 bytes.
    expect(await until(() => walSize(path) === 0)).toBe(true);
    const stats = (await cp.stats())!;
    expect(stats.truncate).toBe(1);
    expect(stats.passive).toBeLessThanOrEqual(2);
    await cp.stop();
    db.close();
  });

  test("a truncate asked for after the writer's connection closed is a no-op, not an uncaught error", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 20, idleMs: IDLE_MS });
    await cp.start();
    await cp.stop();
    db.close();
    // The Worker's "truncate" reply can still be queued when a test (or a stop) closes the database.
    expect(() => (cp as unknown as { truncate(): void }).truncate()).not.toThrow();
  });

  test("the writer never checkpoints; the thread folds an idle WAL and truncates it", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 20, idleMs: IDLE_MS });
    await cp.start();
    expect(pragma(db, "wal_autocheckpoint")).toBe(0);
    db.exec("CREATE TABLE t (x TEXT)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 50; i++) ins.run("x".repeat(4000));
    expect(walSize(path)).toBeGreaterThan(100_000);
    expect(await until(() => walSize(path) === 0)).toBe(true);
    const stats = await cp.stats();
    expect(stats!.truncate).toBeGreaterThan(0);
    await cp.stop();
    // Everything is in the main file: a fresh read-only reader sees all rows.
    db.close();
    const check = openSqlite(path, { readonly: true });
    expect((check.query("SELECT count(*) AS n FROM t").get() as any).n).toBe(50);
    check.close();
  });

  test("small commits are copied into the database file when the writer goes quiet, not at every tick (each page once, not once per commit)", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 10, idleMs: IDLE_MS });
    await cp.start();
    db.exec("CREATE TABLE t (x TEXT)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    // A commit every 20 ms for 0.6 s: sixty ticks, far fewer frames than CHECKPOINT_AFTER_PAGES.
    const end = Date.now() + 600;
    while (Date.now() < end) {
      ins.run("x".repeat(100));
      await sleep(20);
    }
    const during = (await cp.stats())!.passive;
    // Quiet now: past IDLE_MS the WAL is copied and truncated.
    expect(await until(() => walSize(path) === 0, IDLE_MS + 5_000)).toBe(true);
    const after = (await cp.stats())!;
    // Every tick ran a pass before; now none while commits keep coming (a stall of the machine
    // longer than IDLE_MS between two commits would allow one or two).
    expect(during).toBeLessThanOrEqual(2);
    expect(after.passive).toBeGreaterThan(during);
    expect(after.truncate).toBeGreaterThan(0);
    expect((db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBeGreaterThan(5);
    await cp.stop();
    db.close();
  });

  test("with replication on (Litestream's rules): an idle WAL is never truncated, copied by PASSIVE only", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 20, idleMs: IDLE_MS });
    cp.setReplication(true);
    await cp.start();
    db.exec("CREATE TABLE t (x TEXT)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 50; i++) ins.run("x".repeat(4000));
    const before = walSize(path);
    // Past IDLE_MS (the first pass of an idle WAL), then twenty ticks: without
    // replication the idle WAL is truncated by now.
    await sleep(IDLE_MS + 400);
    expect(walSize(path)).toBe(before);
    const stats = await cp.stats();
    expect(stats!.truncate).toBe(0);
    expect(stats!.forced).toBe(0);
    expect(stats!.passive).toBeGreaterThan(5);
    // Replication off again: our own rules, the idle WAL is folded and truncated.
    cp.setReplication(false);
    expect(await until(() => walSize(path) === 0)).toBe(true);
    await cp.stop();
    db.close();
  });

  test("with replication on, a closed gate waits for someone else to start the WAL over (Litestream's checkpoint), not for PASSIVE", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const gate = new WriteGate();
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 10, limitMb: 1, gate, idleMs: IDLE_MS });
    cp.setReplication(true);
    await cp.start();
    db.exec("CREATE TABLE t (x TEXT)");
    // Litestream's long read transaction: PASSIVE cannot copy past it.
    const reader = openSqlite(path);
    reader.exec("BEGIN");
    reader.query("SELECT count(*) FROM t").get();
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 400 && !gate.closed; i++) ins.run("x".repeat(4000));
    expect(await until(() => gate.closed, 2_000)).toBe(true);
    await sleep(200); // no progress possible: still closed (our own rules would have given up at once)
    expect(gate.closed).toBe(true);
    // What Litestream does at its checkpoint: lift the read lock, PASSIVE, then one write restarts the WAL.
    reader.exec("COMMIT");
    reader.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    reader.exec("INSERT INTO t VALUES ('seq')");
    expect(await until(() => !gate.closed, 2_000)).toBe(true);
    // Opened by Litestream's restart of the WAL, or by a pass of ours that found every frame
    // copied once the read lock was lifted (the worker's thread may get there between the two
    // statements above): never by a TRUNCATE or RESTART of ours, which would start a new generation.
    const st = (await cp.stats())!;
    expect(st.truncate).toBe(0);
    expect(st.forced).toBe(0);
    reader.close();
    await cp.stop();
    db.close();
  });

  test("under sustained group-commit writes the gate keeps the WAL near its limit, and nothing waits inside SQLite", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    const gate = new WriteGate();
    const cp = new Checkpointer(db, path, silentLogger, { everyMs: 10, limitMb: 1, gate, idleMs: IDLE_MS });
    await cp.start();
    db.exec("CREATE TABLE t (x TEXT)");
    const ins = db.prepare("INSERT INTO t VALUES (?)");
    const writer = new GroupCommitWriter(db, silentLogger, gate);
    let largest = 0;
    let written = 0;
    // A fixed amount (16 MiB), not a time: a loaded machine writes it more slowly, that is all.
    const TOTAL_BYTES = 16 * 1_048_576;
    // Eight request-like loops, each waiting for its write as a webhook request does.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (written * 3000 < TOTAL_BYTES) {
          await writer.submit({
            run: () => {
              for (let i = 0; i < 3; i++) ins.run("y".repeat(3000));
              written += 3;
            },
          });
          largest = Math.max(largest, walSize(path));
        }
      }),
    );
    const stats = await cp.stats();
    await cp.stop();
    writer.stop();
    // Every acknowledged row is there.
    expect((db.query("SELECT count(*) AS n FROM t").get() as any).n).toBe(written);
    db.close();
    expect(stats!.gated).toBeGreaterThan(0);
    // The writers paused instead of being made to wait in SQLite's busy handler: a RESTART (at 4×
    // the limit) is the rare exception on a starved machine, not the way the WAL is bounded.
    expect(stats!.forced).toBeLessThan(stats!.gated);
    expect(gate.stats.holds).toBeGreaterThan(0);
    // The WAL restarted along the way: without a restart it would hold all of it (over 20 MiB: each
    // 3,000-byte row takes a 4 KiB page). How close it stays to its 1 MiB limit depends on the
    // checkpoint thread's share of the CPU: a quiet machine keeps it under 8 MiB, one with a load
    // average of 20 came to 15 MiB.
    expect(largest).toBeLessThan(TOTAL_BYTES);
  });

  test("a closed gate holds a flush without blocking the thread; opening it commits everything waiting", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    db.exec("CREATE TABLE t (x INTEGER)");
    const gate = new WriteGate();
    const writer = new GroupCommitWriter(db, silentLogger, gate);
    new Int32Array(gate.shared)[0] = 1; // as the checkpoint thread closes it
    expect(gate.closed).toBe(true);
    let done = 0;
    const jobs = [1, 2, 3].map((x) => writer.submit({ run: () => db.run("INSERT INTO t VALUES (?)", [x]) }).then(() => done++));
    await sleep(30); // the event loop runs (this timer fires); the writes wait
    expect(done).toBe(0);
    expect((db.query("SELECT count(*) AS n FROM t").get() as any).n).toBe(0);
    gate.opened();
    await Promise.all(jobs);
    expect(done).toBe(3);
    expect(writer.stats.batches).toBe(1); // what waited goes in one transaction
    // stop() never waits for the gate: shutdown flushes whatever is pending.
    new Int32Array(gate.shared)[0] = 1;
    const late = writer.submit({ run: () => db.run("INSERT INTO t VALUES (4)") });
    writer.stop();
    await late;
    expect((db.query("SELECT count(*) AS n FROM t").get() as any).n).toBe(4);
    db.close();
  });

  test("a flush held by a gate that never opens goes after the bound (the thread may be gone)", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    db.exec("CREATE TABLE t (x INTEGER)");
    const gate = new WriteGate();
    const writer = new GroupCommitWriter(db, silentLogger, gate);
    new Int32Array(gate.shared)[0] = 1; // closed, and nobody will open it
    const t0 = Date.now();
    await writer.submit({ run: () => db.run("INSERT INTO t VALUES (1)") });
    const { GATE_MAX_WAIT_MS } = await import("../../../src/db/write-gate");
    // It went at all: a gate that never opens would otherwise hold it past the test's timeout.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(GATE_MAX_WAIT_MS - 50);
    expect((db.query("SELECT count(*) AS n FROM t").get() as any).n).toBe(1);
    writer.stop();
    db.close();
  });

  test("a writer never waits on a closed gate longer than its bound (the thread may be gone)", async () => {
    const gate = new WriteGate();
    new Int32Array(gate.shared)[0] = 1;
    const t0 = Date.now();
    const { GATE_MAX_WAIT_MS } = await import("../../../src/db/write-gate");
    await gate.wait();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(GATE_MAX_WAIT_MS - 50);
    expect(gate.stats.holds).toBe(1);
  });

  test("a failed thread puts SQLite's automatic checkpoints back", async () => {
    const path = tempDb();
    const db = openSqlite(path);
    // A database the worker cannot open (gone): it reports failure, the writer checkpoints itself.
    const cp = new Checkpointer(db, join(path, "missing", "x.db"), silentLogger, { everyMs: 20, idleMs: IDLE_MS });
    await cp.start();
    expect(pragma(db, "wal_autocheckpoint")).toBe(1000);
    await cp.stop();
    db.close();
  });

  test("--checkpoint-idle-ms: unset, the thread waits CHECKPOINT_IDLE_MS; a number of ms is taken; under a second or not a number is refused", () => {
    const config = (...argv: string[]) => buildServeConfig(parseArgs(argv), {}, false);
    expect(config().checkpointIdleMs).toBeUndefined();
    expect(config("--checkpoint-idle-ms", "60000").checkpointIdleMs).toBe(60_000);
    for (const bad of ["500", "0", "-1", "soon", "99999999999"]) expect(() => config("--checkpoint-idle-ms", bad)).toThrow(ConfigError);
  });

  test("the server runs it; --checkpoint inline keeps SQLite's own", async () => {
    const bg = await startTestServer();
    expect(pragma(bg.running.deps.sqlite, "wal_autocheckpoint")).toBe(0);
    expect(pragma(bg.running.deps.sqlite, "temp_store")).toBe(2);
    await bg.stop();
    const inline = await startTestServer({ checkpoint: "inline", sqliteCacheMb: 0, sqliteTempStore: "file" });
    expect(pragma(inline.running.deps.sqlite, "wal_autocheckpoint")).toBe(1000);
    expect(pragma(inline.running.deps.sqlite, "temp_store")).toBe(0);
    await inline.stop();
  });
});
