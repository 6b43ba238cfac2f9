import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../../src/db/migrate";
import { IN_MEMORY_BYTES } from "../../../src/lib/file-response";
import { VERSION } from "../../../src/version";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";
import { newApiKey } from "../../helpers/reads";
import { newAccount, operatorKey } from "../../helpers/accounts";

let s: TestServer;
let standardKey: string;

beforeAll(async () => {
  s = await startTestServer();
  standardKey = await newApiKey(s, "standard_access");
});
afterAll(() => s.stop());

/** Backup copies being built or sent (the memory-backed scratch directory and the temp directory). */
const scratchCopies = () =>
  [tmpdir(), "/dev/shm"].filter((d) => existsSync(d)).reduce((n, d) => n + readdirSync(d).filter((f) => f.startsWith("textwire-backup-")).length, 0);
/** Descriptors this process (the test server runs in it) still holds on a backup copy. */
const openScratchCopies = () =>
  readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((l) => l.includes("textwire-backup-"));

describe("GET /health", () => {
  test("no key needed; status, version, schema version, uptime, database ok — and no account data", async () => {
    const res = await fetch(`${s.url}/health`);
    const body = await expectStatus(res, 200);
    expect(body).toEqual({ status: "ok", version: VERSION, schemaVersion: SCHEMA_VERSION, uptimeSeconds: expect.any(Number), database: "ok", devicesOnline: 0, oldestDueSeconds: null, queue: "ok",
      intake: { pending: 0, oldestPendingMs: 0, lagP99Ms: expect.any(Number), applier: "ok" },
      replication: { state: "off", lagSeconds: null, lastSyncAt: null, target: null },
    });
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(JSON.stringify(body)).not.toContain(s.accountId);
  });

  test("503 when the database check fails", async () => {
    const t = await startTestServer();
    try {
      t.running.deps.sqlite.close(); // arrange: the database unusable, as a failed disk leaves it
      const body = await expectStatus(await fetch(`${t.url}/health`), 503);
      expect(body).toMatchObject({ status: "unavailable", database: "error" });
    } finally {
      await t.stop().catch(() => {});
    }
  });
});

describe("GET /metrics", () => {
  test("needs an operator key: 401 without, 403 with a standard key or another account's admin key", async () => {
    await expectStatus(await fetch(`${s.url}/metrics`), 401);
    const body = await expectStatus(await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${standardKey}` } }), 403);
    expect(body).toMatchObject({ code: "PERMISSION_ERROR", details: { endpoint: "GET /metrics", required: "operator", current: "standard_access" } });
    const tenant = newAccount(s, { name: "Tenant B" });
    const res = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
    const refused = await expectStatus(res, 403);
    expect(refused).toMatchObject({ code: "PERMISSION_ERROR", details: { endpoint: "GET /metrics", required: "operator", current: "admin_access" } });
    expect(refused.message).toContain("textwire keys create");
  });

  test("Prometheus text: requests by route pattern and status, latency histogram, queue, webhook outcomes, 429s, database size", async () => {
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    await expectStatus(await s.api(`/forms/${f.id}`), 200);
    await expectStatus(await s.api(`/forms/${crypto.randomUUID()}`), 404);
    await expectStatus(await s.api(`/forms`, { key: null }), 401);
    s.running.deps.metrics.count("textwire_custom_events_total", { kind: "test" }, 3); // arrange: a counter of the server's own that no request moves
    // A webhook-path request, whatever the webhook module answers today, is counted by outcome.
    const wh = await fetch(`${s.base}/forms/${crypto.randomUUID()}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    // A rate-limited key.
    const tight = newAccount(s, { name: "tight", apiBurstPerMinute: 1 });
    await fetch(`${s.base}/forms`, { headers: { Authorization: `Bearer ${tight.apiKey}` } });
    const limited = await fetch(`${s.base}/forms`, { headers: { Authorization: `Bearer ${tight.apiKey}` } });

    const res = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain('textwire_http_requests_total{method="POST",route="/v1/forms",status="201"} 1');
    expect(text).toContain('textwire_http_requests_total{method="GET",route="/v1/forms/:id",status="200"} 1');
    expect(text).toContain('textwire_http_requests_total{method="GET",route="/v1/forms/:id",status="404"} 1');
    expect(text).toMatch(/textwire_http_requests_total\{method="GET",route="\/v1\/forms",status="401"\} \d+/);
    expect(text).not.toContain(f.id); // ids never become labels
    expect(text).toContain("# TYPE textwire_http_request_duration_seconds histogram");
    expect(text).toMatch(/textwire_http_request_duration_seconds_bucket\{route="\/v1\/forms\/:id",le="\+Inf"\} 2/);
    expect(text).toMatch(/textwire_http_request_duration_seconds_count\{route="\/v1\/forms\/:id"\} 2/);
    for (const p of ["urgent", "high", "normal", "low"]) expect(text).toContain(`textwire_queue_depth{priority="${p}"} 0`);
    const reason = wh.status === 200 ? 'reason="accepted",result="accepted"' : `result="rejected"`;
    expect(text).toMatch(new RegExp(`textwire_webhook_submissions_total\\{[^}]*${reason.replace(/"/g, '"')}[^}]*\\} 1`));
    expect(limited.status).toBe(429);
    expect(text).toContain('textwire_rate_limited_total{kind="api"} 1');
    expect(text).toContain('textwire_custom_events_total{kind="test"} 3');
    const size = Number(/^textwire_database_bytes (\d+)$/m.exec(text)?.[1]);
    expect(size).toBeGreaterThan(4096);
    expect(text).toContain(`textwire_schema_version ${SCHEMA_VERSION}`);
  });

  test("queue depth follows the queue", async () => {
    const depth = async () => {
      const text = await (await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).text();
      return Number(/^textwire_queue_depth\{priority="high"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await depth();
    const queued = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155550188", content: "urgent-ish", priority: "high" } }), 201)).data.messageId;
    expect(await depth()).toBe(before + 1);
    await expectStatus(await s.api(`/messages/${queued}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
    expect(await depth()).toBe(before);
  });

  test("--metrics=false: 404", async () => {
    const t = await startTestServer({ metrics: false });
    try {
      const body = await expectStatus(await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${t.adminKey}` } }), 404);
      expect(body.code).toBe("NOT_FOUND");
    } finally {
      await t.stop();
    }
  });
});

describe("POST /v1/admin/backup", () => {
  test("operator only", async () => {
    await expectStatus(await s.api("/admin/backup", { method: "POST", key: null }), 401);
    const body = await expectStatus(await s.api("/admin/backup", { method: "POST", key: standardKey }), 403);
    expect(body.code).toBe("PERMISSION_ERROR");
  });

  test("two accounts: the other account's admin key gets 403 and no bytes; an operator key made with the CLI's option works", async () => {
    const tenant = newAccount(s, { name: "Tenant with secrets" });
    // Tenant B stores a contact; account A's form exists: neither may leave through B's key.
    const res = await s.api("/admin/backup", { method: "POST", key: tenant.apiKey });
    const body = await expectStatus(res, 403);
    expect(body).toMatchObject({ code: "PERMISSION_ERROR", details: { endpoint: "POST /admin/backup", required: "operator", current: "admin_access" } });
    expect(body.message).toContain("--operator");
    // The first start's key is the operator's: the server-wide /metrics answer it.
    const first = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } });
    expect(first.status).toBe(200);
    await first.text();
    const notOperator = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
    expect(notOperator.status).toBe(403);
    await notOperator.text();
    // An operator key of any account (`textwire keys create --operator`) downloads the whole database.
    const op = operatorKey(s, tenant.account.id, "admin_access", { operator: true });
    expect(op).toMatchObject({ permission: "admin_access", operator: true });
    const ok = await s.api("/admin/backup", { method: "POST", key: op.apiKey });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    const m = await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${op.apiKey}` } });
    expect(m.status).toBe(200);
    await m.text();
  });

  test("streams a fresh, openable database file and removes its temporary copy", async () => {
    await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "In the backup" }) }), 201);
    const tempsBefore = scratchCopies();
    const res = await s.api("/admin/backup", { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=textwire-\d{8}T\d{6}Z\.db$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(new TextDecoder().decode(bytes.slice(0, 15))).toBe("SQLite format 3");
    const file = join(s.dir, "downloaded.db");
    writeFileSync(file, bytes);
    // answer: the backup the API answered with is a database file, opened as the owner would open it
    const db = new Database(file, { readonly: true });
    expect((db.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
    expect((db.query("SELECT count(*) AS n FROM forms WHERE name = 'In the backup'").get() as any).n).toBe(1);
    db.close();
    await Bun.sleep(50);
    expect(scratchCopies()).toBe(tempsBefore);
    // The server closed the copy after the last byte: no descriptor keeps its memory or disk.
    expect(openScratchCopies()).toEqual([]);
  });

  test("the copy is removed while a slow client is still downloading, and the download is whole", async () => {
    // Over the size sent from memory: this copy is sent by the server from the file.
    // arrange: 12 MiB of rows at once (thousands of requests through the API)
    s.running.deps.sqlite.exec("CREATE TABLE IF NOT EXISTS bench_pad (x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12) INSERT INTO bench_pad SELECT randomblob(1048576) FROM n");
    const tempsBefore = scratchCopies();
    const res = await s.api("/admin/backup", { method: "POST" });
    expect(res.status).toBe(200);
    const length = Number(res.headers.get("content-length"));
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    chunks.push(first.value!);
    // Removed from the directory while the rest is still to come (the server holds it open).
    const end = Date.now() + 5_000;
    while (scratchCopies() !== tempsBefore && Date.now() < end) await Bun.sleep(10);
    expect(scratchCopies()).toBe(tempsBefore);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const bytes = Buffer.concat(chunks);
    expect(bytes.length).toBe(length);
    const file = join(s.dir, "slow.db");
    writeFileSync(file, bytes);
    // answer: the downloaded backup, opened as the owner would open it
    const db = new Database(file, { readonly: true });
    expect((db.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
    expect((db.query("SELECT count(*) AS n FROM bench_pad").get() as any).n).toBe(12);
    expect(bytes.length).toBeGreaterThan(IN_MEMORY_BYTES);
    db.close();
    await Bun.sleep(50);
    expect(openScratchCopies()).toEqual([]);
  });

  test("a JSON body is not required (curl -X POST with no body works)", async () => {
    const res = await fetch(`${s.base}/admin/backup`, { method: "POST", headers: { Authorization: `Bearer ${s.adminKey}` } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });
});
