import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { GroupCommitWriter, WriterClosedError } from "../../src/db/group-commit";

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
