import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GroupCommitWriter, SyncFailedError, WriterClosedError } from "../../../src/db/group-commit";
import { databaseBusy } from "../../../src/errors";

let db: Database;
let w: GroupCommitWriter;
beforeEach(() => {
  db = new Database(":memory:");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
  w = new GroupCommitWriter(db);
});
afterEach(() => db.close());

const ins = (db0: Database) => db0.prepare("INSERT INTO t (v) VALUES (?)");
const rows = () => (db.query("SELECT v FROM t ORDER BY id").all() as Array<{ v: string }>).map((r) => r.v);

describe("group commit", () => {
  test("jobs submitted in one turn share one transaction and resolve after it", async () => {
    const stmt = ins(db);
    const ps = Array.from({ length: 50 }, (_, i) => w.submit({ run: () => (stmt.run(`v${i}`), i) }));
    expect(rows()).toEqual([]); // nothing runs before the flush
    expect(await Promise.all(ps)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(w.stats.batches).toBe(1);
    expect(w.stats.largestBatch).toBe(50);
    expect(rows().length).toBe(50);
    expect(db.inTransaction).toBe(false);
  });

  test("a failing job fails alone; its partial writes are rolled back", async () => {
    const stmt = ins(db);
    const a = w.submit({ run: () => stmt.run("a") });
    const b = w.submit({
      run: () => {
        stmt.run("b-partial");
        stmt.run("a"); // UNIQUE violation
      },
    });
    const c = w.submit({ run: () => stmt.run("c") });
    await a;
    await expect(b).rejects.toThrow(/UNIQUE/);
    await c;
    expect(rows()).toEqual(["a", "c"]);
    expect(w.stats.batches).toBe(1);
  });

  test("later jobs of a batch see earlier ones' writes", async () => {
    const stmt = ins(db);
    const p1 = w.submit({ run: () => stmt.run("x") });
    const p2 = w.submit({ run: () => (db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n });
    await p1;
    expect(await p2).toBe(1);
  });

  test("a failed COMMIT rejects every job and undoes their in-memory effects", async () => {
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (pid INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)");
    const undone: number[] = [];
    const a = w.submit({ run: () => 1, undo: (r) => undone.push(r) });
    const b = w.submit({ run: () => (db.exec("INSERT INTO c VALUES (99)"), 2), undo: (r) => undone.push(r) });
    const settled = await Promise.allSettled([a, b]);
    expect(settled.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(undone.sort()).toEqual([1, 2]);
    expect(db.inTransaction).toBe(false);
    expect(db.query("SELECT count(*) AS n FROM c").get()).toEqual({ n: 0 });
  });

  test("stop() flushes pending jobs, then refuses new ones", async () => {
    const stmt = ins(db);
    const p = w.submit({ run: () => stmt.run("pending") });
    w.stop();
    expect(rows()).toEqual(["pending"]);
    await p;
    await expect(w.submit({ run: () => 1 })).rejects.toBeInstanceOf(WriterClosedError);
  });
});

describe("riders (background jobs)", () => {
  test("a rider joins the next batch a request causes, after its jobs: no transaction of its own", async () => {
    const stmt = ins(db);
    const rider = w.ride({ run: () => (stmt.run("rider"), "r") }, 5_000);
    await Bun.sleep(20);
    expect(rows()).toEqual([]); // waits for someone else's batch
    const job = w.submit({ run: () => (stmt.run("request"), "q") });
    expect(await Promise.all([job, rider])).toEqual(["q", "r"]);
    expect(w.stats.batches).toBe(1);
    expect(rows()).toEqual(["request", "rider"]);
  });

  test("with no request coming, a rider commits alone after maxWaitMs", async () => {
    const stmt = ins(db);
    const t0 = performance.now();
    expect(await w.ride({ run: () => (stmt.run("alone"), 1) }, 30)).toBe(1);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(rows()).toEqual(["alone"]);
  });

  test("stop() flushes riders; a closed writer refuses them", async () => {
    const stmt = ins(db);
    const p = w.ride({ run: () => (stmt.run("last"), 1) }, 60_000);
    w.stop();
    expect(await p).toBe(1);
    await expect(w.ride({ run: () => 1 }, 10)).rejects.toBeInstanceOf(WriterClosedError);
  });
});

describe("the commit's fsync off the main thread (commit sync: background)", () => {
  /** A flush of the -wal file the test finishes by hand. */
  function heldFlush() {
    const calls: Array<(err: unknown) => void> = [];
    return { calls, flushWal: (done: (err: unknown) => void) => void calls.push(done) };
  }
  const tick = () => new Promise((r) => setTimeout(r, 5));

  test("a batch is committed (visible, the lock free) at once, but resolves only once its flush returns", async () => {
    const f = heldFlush();
    const bw = new GroupCommitWriter(db, undefined, undefined, { mode: "background", flushWal: f.flushWal });
    const stmt = ins(db);
    let done = false;
    const p = bw.submit({ run: () => stmt.run("a") }).then(() => (done = true));
    await tick();
    expect(rows()).toEqual(["a"]);
    expect(db.inTransaction).toBe(false);
    expect(f.calls.length).toBe(1);
    expect(done).toBe(false);
    f.calls[0](null);
    await p;
    expect(done).toBe(true);
    expect(bw.stats.syncs).toBe(1);
  });

  test("batches committed while a flush is in flight share the next one, and settle in order", async () => {
    const f = heldFlush();
    const bw = new GroupCommitWriter(db, undefined, undefined, { mode: "background", flushWal: f.flushWal });
    const stmt = ins(db);
    const order: string[] = [];
    const a = bw.submit({ run: () => stmt.run("a") }).then(() => order.push("a"));
    await tick();
    const b = bw.submit({ run: () => stmt.run("b") }).then(() => order.push("b"));
    await tick();
    const c = bw.submit({ run: () => stmt.run("c") }).then(() => order.push("c"));
    await tick();
    expect(rows()).toEqual(["a", "b", "c"]);
    expect(f.calls.length).toBe(1); // b and c wait for the flush in flight to end
    f.calls[0](null);
    await a;
    await tick();
    expect(order).toEqual(["a"]);
    expect(f.calls.length).toBe(2); // one flush for both
    f.calls[1](null);
    await Promise.all([b, c]);
    expect(order).toEqual(["a", "b", "c"]);
    expect(bw.stats.batches).toBe(3);
    expect(bw.stats.syncs).toBe(2);
  });

  test("a failed flush rejects its jobs as not saved (SQLITE_IOERR_FSYNC, a 503), undoes their in-memory effects and reports the failure", async () => {
    const f = heldFlush();
    const bw = new GroupCommitWriter(db, undefined, undefined, { mode: "background", flushWal: f.flushWal });
    const failures: unknown[] = [];
    bw.onSyncFailure = (e) => failures.push(e);
    const undone: number[] = [];
    const a = bw.submit({ run: () => 1, undo: (r) => undone.push(r) });
    const failing = bw.submit({ run: () => { throw new Error("constraint"); } });
    await tick();
    f.calls[0](new Error("EIO: i/o error, fdatasync"));
    const err = await a.then(() => null, (e) => e);
    expect(err).toBeInstanceOf(SyncFailedError);
    expect(err.code).toBe("SQLITE_IOERR_FSYNC");
    expect(databaseBusy(err)?.status).toBe(503);
    expect(databaseBusy(err)?.headers?.["Retry-After"]).toBe("5");
    expect(undone).toEqual([1]);
    expect(failures.length).toBe(1); // the server stops here (deps); the writer itself goes on
    await expect(failing).rejects.toBeInstanceOf(SyncFailedError);
    const next = bw.submit({ run: () => 2 });
    await tick();
    f.calls[1](null);
    expect(await next).toBe(2);
  });

  test("durable() waits for the flush of everything committed so far; at once when nothing waits", async () => {
    const f = heldFlush();
    const bw = new GroupCommitWriter(db, undefined, undefined, { mode: "background", flushWal: f.flushWal });
    let ok = false;
    await bw.durable();
    const p = bw.submit({ run: () => 1 });
    await tick();
    const d = bw.durable().then(() => (ok = true));
    await tick();
    f.calls[0](null);
    await p;
    await tick();
    // The waiter may need the next flush (it came in while one was in flight): finish that too.
    if (!ok) f.calls[1]?.(null);
    await d;
    expect(ok).toBe(true);
  });

  test("the connection commits with synchronous=NORMAL inside a batch and is back to FULL outside it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gc-sync-"));
    const file = new Database(join(dir, "t.db"));
    try {
      file.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (v TEXT)");
      const bw = new GroupCommitWriter(file, undefined, undefined, { mode: "background" });
      const seen = await bw.submit({ run: () => (file.exec("INSERT INTO t VALUES ('x')"), (file.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous) });
      expect(seen).toBe(1); // NORMAL
      expect((file.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(2); // FULL
      expect(bw.stats.syncs).toBe(1); // a real fdatasync of the -wal file ran
      const inline = new GroupCommitWriter(file, undefined, undefined, { mode: "inline" });
      expect(await inline.submit({ run: () => (file.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous })).toBe(2);
      bw.stop();
      inline.stop();
    } finally {
      file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("stop() flushes synchronously what waits for a flush, and the jobs resolve", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gc-sync-"));
    const file = new Database(join(dir, "t.db"));
    try {
      file.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT)");
      const bw = new GroupCommitWriter(file, undefined, undefined, { mode: "background" });
      const p = bw.submit({ run: () => file.exec("INSERT INTO t VALUES ('y')") });
      bw.stop();
      await p;
      expect(file.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
    } finally {
      file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("waiting for the other writer's turn without blocking (beforeLock)", () => {
  test("the flush waits for the turn to end; requests arriving meanwhile join the same batch", async () => {
    const stmt = ins(db);
    let release!: () => void;
    let asked = 0;
    w.beforeLock = () => {
      asked++;
      return asked === 1 ? new Promise<void>((r) => (release = r)) : null;
    };
    const a = w.submit({ run: () => stmt.run("a") });
    await new Promise((r) => setTimeout(r, 5));
    expect(rows()).toEqual([]); // waiting, and this thread is free: more requests come in
    const b = w.submit({ run: () => stmt.run("b") });
    await new Promise((r) => setTimeout(r, 5));
    expect(rows()).toEqual([]);
    release();
    await Promise.all([a, b]);
    expect(rows()).toEqual(["a", "b"]);
    expect(w.stats.batches).toBe(1);
    expect(asked).toBe(1);
  });

  test("stop() during the wait writes at once; the wait's end then finds nothing left", async () => {
    const stmt = ins(db);
    let release!: () => void;
    w.beforeLock = () => new Promise<void>((r) => (release = r));
    const a = w.submit({ run: () => stmt.run("a") });
    await new Promise((r) => setTimeout(r, 5));
    w.stop();
    await a;
    expect(rows()).toEqual(["a"]);
    release();
    await new Promise((r) => setTimeout(r, 5));
    expect(w.stats.batches).toBe(1);
  });
});
