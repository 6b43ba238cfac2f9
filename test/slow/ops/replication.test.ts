import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expectStatus, formBody, startTestServer, tempDir } from "../../helpers/server";
import type { Logger } from "../../../src/lib/log";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const newDir = () => {
  const d = tempDir("textwire-repl-");
  dirs.push(d);
  return d;
};

async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const health = async (url: string) => (await (await fetch(`${url}/health`)).json()) as any;

describe("/health replication", () => {
  test("off without a replica: state off, no lag, no target", async () => {
    const ts = await startTestServer();
    try {
      expect((await health(ts.url)).replication).toEqual({ state: "off", lagSeconds: null, lastSyncAt: null, target: null });
      expect(await (await ts.api("/../metrics")).text()).toContain("textwire_replication_enabled 0");
    } finally {
      await ts.stop();
    }
  });

  test("with --replicate: ok once the replica holds everything, lag back to 0 after writes; /metrics has lag and errors", async () => {
    const replica = join(newDir(), "replica");
    const ts = await startTestServer({ replicate: `file://${replica}` });
    try {
      const first = await waitFor("first sync", async () => ((await health(ts.url)).replication.state === "ok" ? (await health(ts.url)).replication : null));
      expect(first.target).toBe(`file://${replica}`);
      expect(first.lagSeconds).toBe(0);
      expect(Date.parse(first.lastSyncAt)).toBeGreaterThan(Date.now() - 30_000);
      const form = await expectStatus(await ts.api("/forms", { method: "POST", json: formBody() }), 201);
      for (let i = 0; i < 20; i++) {
        await expectStatus(await fetch(`${ts.base}/forms/${form.data.form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: `+1415555${1000 + i}` }) }), 200);
      }
      await waitFor("caught up", async () => (await health(ts.url)).replication.lagSeconds === 0 && (await health(ts.url)).replication.state === "ok");
      // The replica folder is Litestream's layout: generations/<id>/{snapshots,wal}.
      expect(readdirSync(join(replica, "generations")).length).toBe(1);
      const metrics = await (await ts.api("/../metrics")).text();
      expect(metrics).toContain("textwire_replication_enabled 1");
      expect(metrics).toMatch(/^textwire_replication_lag_seconds [0-9.]+$/m);
      expect(metrics).toMatch(/^textwire_replication_sync_errors_total 0$/m);
      expect(metrics).toMatch(/^textwire_replication_last_sync_timestamp_seconds [1-9]\d+$/m);
    } finally {
      await ts.stop();
    }
  }, 40_000);
});

describe("restarts", () => {
  test("a server started again on an idle, replicated database confirms the replica current (its start-up write)", async () => {
    const dir = newDir();
    const replica = join(dir, "replica");
    const db = join(dir, "textwire.db");
    for (let run = 0; run < 2; run++) {
      const ts = await startTestServer({ db, replicate: `file://${replica}` }, { dir });
      try {
        // Nothing is written by the test on the second run: only the start-up write tells the new Litestream where the replica ends.
        const r = await waitFor("ok", async () => ((await health(ts.url)).replication.state === "ok" ? (await health(ts.url)).replication : null), 15_000);
        expect(r.lagSeconds).toBe(0);
      } finally {
        await ts.stop();
      }
    }
    // Litestream 0.3 may begin a new generation after a clean stop (the closed database's WAL is
    // gone): a full copy, still one replica (docs/api-decisions.md).
    expect(readdirSync(join(replica, "generations")).length).toBeGreaterThanOrEqual(1);
  }, 40_000);
});

describe("supervision", () => {
  test("a Litestream that dies is started again (logged); shutdown stops it (after its last sync)", async () => {
    const replica = join(newDir(), "replica");
    const { logger, lines } = capture();
    const ts = await startTestServer({ replicate: `file://${replica}` }, { logger });
    let pid = 0;
    try {
      const first = await waitFor("litestream running", () => ts.running.deps.replication.pid);
      process.kill(first, "SIGKILL");
      pid = await waitFor("a new litestream", () => {
        const p = ts.running.deps.replication.pid;
        return p && p !== first ? p : undefined;
      });
      expect(alive(pid)).toBe(true);
      expect(lines.some((l) => l.startsWith("warn litestream stopped unexpectedly; starting it again"))).toBe(true);
      // Its own log lines come through as Textwire's, prefixed.
      await waitFor("litestream's own lines", () => lines.some((l) => l.startsWith("info litestream: initialized db")));
      expect(ts.running.deps.replication.counters.restarts).toBe(1);
      // Database and replica are both under the temp folder here: the operator is told.
      expect(lines.some((l) => l.startsWith("warn the replica folder is on the same disk as the database"))).toBe(true);
      await waitFor("ok again", async () => (await health(ts.url)).replication.state === "ok");
      expect(existsSync(`${ts.dbPath}.litestream.pid`)).toBe(true);
    } finally {
      await ts.stop();
    }
    expect(alive(pid)).toBe(false);
    expect(existsSync(`${ts.dbPath}.litestream.pid`)).toBe(false);
    expect(lines.some((l) => l.startsWith("info litestream: signal received"))).toBe(true);
  }, 40_000);

  test("a stall past 60 s: /health says stalled, and one replication.stalled event goes to the operator's account", async () => {
    let offset = 0;
    const clock = () => Date.now() + offset;
    // Nothing listens on port 1: every upload fails, the replica never catches up.
    const ts = await startTestServer({ replicate: "sftp://nobody@127.0.0.1:1/replica", allowPrivateWebhookUrls: true }, { clock });
    try {
      await expectStatus(await ts.api("/webhook-endpoints", { method: "POST", json: { url: "http://127.0.0.1:9/hook", events: ["replication.stalled"], allowInsecure: true } }), 201);
      expect((await health(ts.url)).replication.state).toBe("starting");
      offset = 15_000;
      await waitFor("behind", async () => (await health(ts.url)).replication.state === "behind");
      offset = 61_000;
      const r = await waitFor("stalled", async () => ((await health(ts.url)).replication.state === "stalled" ? (await health(ts.url)).replication : null));
      expect(r.lagSeconds).toBeGreaterThan(60);
      expect(r.lastSyncAt).toBeNull();
      expect(r.target).toBe("sftp://nobody@127.0.0.1:1/replica");
      await Bun.sleep(600); // more polls in the same spell: no second event
      const events = ts.running.deps.sqlite.query("SELECT account_id, payload FROM events WHERE type = 'replication.stalled'").all() as any[];
      expect(events.length).toBe(1);
      expect(events[0].account_id).toBe(ts.accountId);
      expect(JSON.parse(events[0].payload).data.replication).toMatchObject({ target: "sftp://nobody@127.0.0.1:1/replica" });
    } finally {
      await ts.stop();
    }
  }, 40_000);
});

describe("GET/PUT /v1/admin/replication", () => {
  test("an operator sets, sees and clears the address; bad addresses are refused and change nothing", async () => {
    const replica = join(newDir(), "replica");
    const ts = await startTestServer();
    try {
      const before = await expectStatus(await ts.api("/admin/replication"), 200);
      expect(before.data).toMatchObject({ savedUrl: null, flagUrl: null, status: { state: "off", running: false } });
      for (const url of ["ftp://x/y", "file://relative/path", "s3://AK:SK@bucket/x", "sftp://host/x"]) {
        const bad = await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url } }), 400);
        expect(bad.code).toBe("VALIDATION_ERROR");
        expect(bad.errors[0].field).toBe("url");
        expect(JSON.stringify(bad)).not.toContain("SK@");
      }
      await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { nope: 1 } }), 400);
      expect((await expectStatus(await ts.api("/admin/replication"), 200)).data.savedUrl).toBeNull();

      const saved = await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url: `file://${replica}` } }), 200);
      expect(saved.data.savedUrl).toBe(`file://${replica}`);
      expect(saved.data.status).toMatchObject({ source: "setting", target: `file://${replica}` });
      await waitFor("replicating", async () => (await health(ts.url)).replication.state === "ok");
      expect(ts.running.deps.replication.pid).toBeDefined();

      const off = await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url: null } }), 200);
      expect(off.data).toMatchObject({ savedUrl: null, status: { state: "off", running: false } });
      expect(ts.running.deps.replication.pid).toBeUndefined();
    } finally {
      await ts.stop();
    }
  }, 40_000);

  test("a password is never shown back; non-operator keys are refused", async () => {
    const ts = await startTestServer();
    try {
      const r = await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url: "sftp://me:hunter2@127.0.0.1:1/x" } }), 200);
      expect(JSON.stringify(r)).not.toContain("hunter2");
      expect(r.data.savedUrl).toBe("sftp://me:***@127.0.0.1:1/x");
      expect(JSON.stringify(await health(ts.url))).not.toContain("hunter2");
      const created = await expectStatus(await ts.api("/api-keys", { method: "POST", json: { permission: "admin_access" } }), 201);
      const key = created.data.key ?? created.data.apiKey;
      await expectStatus(await ts.api("/admin/replication", { key }), 403);
      await expectStatus(await ts.api("/admin/replication", { method: "PUT", key, json: { url: null } }), 403);
      await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url: null } }), 200);
    } finally {
      await ts.stop();
    }
  }, 30_000);

  test("with --replicate the flag wins: saving is refused and the page is told", async () => {
    const replica = join(newDir(), "replica");
    const ts = await startTestServer({ replicate: `file://${replica}` });
    try {
      const r = await expectStatus(await ts.api("/admin/replication", { method: "PUT", json: { url: "file:///elsewhere" } }), 409);
      expect(r.code).toBe("INVALID_STATE");
      expect(r.message).toContain("--replicate");
      const got = await expectStatus(await ts.api("/admin/replication"), 200);
      expect(got.data).toMatchObject({ flagUrl: `file://${replica}`, savedUrl: null, status: { source: "flag" } });
    } finally {
      await ts.stop();
    }
  }, 30_000);
});
