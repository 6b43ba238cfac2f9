#!/usr/bin/env bun
/**
 * Messages benchmark: 1,000,000 messages over 5 forms (and 50,000 contacts) in one account, each
 * with its submission (form stats count them per day, from the rollups: migration 0022),
 * bulk-inserted with a prepared statement in one transaction, then p50/p99 of:
 *   - a list page (page 1, limit 50) with each filter and each sort,
 *   - analytics for 30d and 1y (and 1y for one form), the overview's 1d and 7d, form stats 1y,
 *   - `next` (lease one message).
 * Calls go through the service functions the routes call (deps.messages / deps.analytics /
 * deps.leases) on a server started with startServer — no HTTP in the timing, so the figures are
 * the database + service cost. A final section times a list page through real HTTP on loopback.
 *
 * List pages are timed twice: "counts cached" (no write between calls: the per-filter counts are
 * reused) and "after a write" (a one-row write before each call, as under live traffic: counts
 * come from message_counts when the filters allow, else are recounted).
 *
 * Analytics 1y is timed in UTC and in zones whose days do not start on a UTC hour or move with
 * daylight saving (target: < 20 ms p99 in any zone).
 *
 *   bun scripts/bench/messages.ts [--rows 1000000] [--keep] [--db PATH] [--only analytics]
 *
 * --db PATH seeds the database there once and reuses it on later runs (seeding takes minutes);
 * --only analytics times the analytics and form-stats cases alone.
 */
import os from "node:os";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, defaultServeConfig } from "../../src/config";
import { startServer } from "../../src/server";
import { loadQueuedEntries } from "../../src/services/queue-sync";
import { rebuildDerived } from "../../src/services/doctor";

const { flags } = parseArgs(process.argv.slice(2), new Set(["keep"]));
const ROWS = Number(flags.get("rows") ?? 1_000_000);
const FORMS = 5;
const CONTACTS = 50_000;
const DAY = 86_400_000;

const keepDb = typeof flags.get("db") === "string" ? (flags.get("db") as string) : undefined;
const only = flags.get("only");
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-"));
const dbPath = keepDb ?? join(dir, "bench.db");
const reuse = keepDb !== undefined && existsSync(keepDb);
const running = await startServer(defaultServeConfig({ db: dbPath, port: 0, host: "127.0.0.1", sendRatePerMinute: 1_000_000_000 }));
const { deps } = running;
const sqlite = deps.sqlite;
// A fresh server has no account until setup: the bench makes its own (a kept --db has it already).
const accountId =
  (sqlite.query("SELECT id FROM accounts LIMIT 1").get() as { id: string } | null)?.id ??
  deps.accounts.createAccount({ name: "Bench", plan: "enterprise", apiLimitPerHour: 100_000_000, apiBurstPerMinute: 100_000_000 }).account.id;
// The bench's own HTTP calls must not meet the per-key API limits.
sqlite.query("UPDATE accounts SET plan = 'enterprise', api_limit_per_hour = 100000000, api_burst_per_minute = 100000000 WHERE id = ?").run(accountId);
const apiKey = deps.accounts.createKey(accountId, "admin_access").apiKey;
const now = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------- data
let t = performance.now();
const formIds: string[] = [];
const contactIds: string[] = [];
if (reuse) {
  formIds.push(...(sqlite.query("SELECT id FROM forms WHERE account_id = ? ORDER BY name").values(accountId) as string[][]).map((r) => r[0]));
  contactIds.push(...(sqlite.query("SELECT id FROM contacts WHERE account_id = ? ORDER BY created_at LIMIT 1000").values(accountId) as string[][]).map((r) => r[0]));
} else sqlite.transaction(() => {
  const f = sqlite.query(
    `INSERT INTO forms (id, account_id, name, name_key, message_template, fields, settings, created_at, updated_at)
     VALUES (?1, ?2, ?3, lower(?3), 'Hi {{firstName}}', '[{"name":"firstName","type":"text"}]', '{}', ?4, ?4)`,
  );
  for (let i = 0; i < FORMS; i++) {
    const id = crypto.randomUUID();
    formIds.push(id);
    f.run(id, accountId, `Form ${i}`, iso(now - 400 * DAY));
  }
  const c = sqlite.query(
    `INSERT INTO contacts (id, account_id, phone_number, first_name, status, form_id, search_text, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'Ann', 'contacted', ?4, '', ?5, ?5)`,
  );
  for (let i = 0; i < CONTACTS; i++) {
    const id = Bun.randomUUIDv7();
    contactIds.push(id);
    c.run(id, accountId, `+1415${String(1_000_000 + i).padStart(7, "0")}`, formIds[i % FORMS], iso(now - 400 * DAY + i * 1000));
  }
  const m = sqlite.query(
    `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name, status, priority,
       priority_rank, webhook_data, template_used, scheduled_for, sent_at, failure_reason, metadata, seq, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, 'Hi Ann, thanks for your request!', '+14155552671', 'Ann', ?6, ?7, ?8, '{"firstName":"Ann"}',
       'Hi {{firstName}}', ?9, ?10, ?11, '{"source":"webhook"}', ?12, ?9, ?9)`,
  );
  const s = sqlite.query("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6)");
  const prios = ["urgent", "high", "normal", "low"] as const;
  const reasons = ["invalid-phone", "rate-limit", "network-error"];
  for (let i = 0; i < ROWS; i++) {
    // Oldest first, spread over the last 365 days; newest 2% still queued.
    const created = now - 365 * DAY + Math.floor((i / ROWS) * 365 * DAY);
    const r = (i * 2654435761) % 100;
    const status = i >= ROWS * 0.98 ? "queued" : r < 85 ? "sent" : r < 95 ? "failed" : "cancelled";
    const pr = (i * 40503) % 10 === 0 ? 0 : (i * 40503) % 10 < 3 ? 1 : (i * 40503) % 10 < 9 ? 2 : 3;
    const form = i % FORMS;
    const messageId = Bun.randomUUIDv7();
    s.run(crypto.randomUUID(), accountId, formIds[form], contactIds[i % CONTACTS], messageId, iso(created));
    m.run(
      messageId,
      accountId,
      formIds[form],
      `Form ${form}`,
      contactIds[i % CONTACTS],
      status,
      prios[pr],
      pr,
      iso(created),
      status === "sent" ? iso(created + 30_000 + (i % 600) * 1000) : null,
      status === "failed" ? reasons[i % 3] : null,
      i + 1,
    );
  }
})();
const insertMs = performance.now() - t;
// The bulk insert bypasses the writers' recorded counts: build the derived data once, as the
// migration does for an existing database (and `textwire doctor --rebuild`).
t = performance.now();
if (!reuse) rebuildDerived(sqlite);
const derivedMs = performance.now() - t;
t = performance.now();
const entries = loadQueuedEntries(sqlite);
deps.queue.rebuild(entries);
const queued = entries.length;
const rebuildMs = performance.now() - t;
const rowCount = (sqlite.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n;

// ---------------------------------------------------------------- timing
function pct(samples: number[], p: number) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const rows: Array<[string, number, number, number]> = [];
function bench(name: string, n: number, fn: () => unknown, between?: () => void) {
  fn(); // warm the statement cache
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    between?.();
    const s = performance.now();
    fn();
    samples.push(performance.now() - s);
  }
  rows.push([name, n, pct(samples, 50), pct(samples, 99)]);
}
/** A one-row write: invalidates the cached list counts, as any write does. */
const touch = () => sqlite.query("UPDATE messages SET updated_at = updated_at WHERE rowid = 1").run();

const week = iso(now - 7 * DAY);
const half = iso(now - 180 * DAY);
const listCases: Array<[string, Record<string, string | number>]> = [
  ["no filter (createdAt desc)", {}],
  ["status=sent", { status: "sent" }],
  ["status=queued", { status: "queued" }],
  ["priority=urgent", { priority: "urgent" }],
  ["createdAfter=7d ago", { createdAfter: week }],
  ["createdBefore=180d ago", { createdBefore: half }],
  ["formId", { formId: formIds[2] }],
  ["contactId", { contactId: contactIds[123] }],
  ["sortBy=createdAt asc", { sortBy: "createdAt", order: "asc" }],
  ["sortBy=scheduledFor", { sortBy: "scheduledFor" }],
  ["sortBy=sentAt", { sortBy: "sentAt" }],
  ["sortBy=priority", { sortBy: "priority" }],
  ["sortBy=priority asc", { sortBy: "priority", order: "asc" }],
];
const all = only !== "analytics";
if (all) {
  for (const [name, q] of listCases) bench(`list ${name} (counts cached)`, 300, () => deps.messages.list(accountId, q as any));
  for (const [name, q] of listCases) bench(`list ${name} (after a write: counts recomputed)`, 15, () => deps.messages.list(accountId, q as any), touch);
  bench("list page 100 (offset 4950)", 100, () => deps.messages.list(accountId, { page: 100 }));
}

const ANALYTICS_RUNS = 30;
for (const period of ["30d", "1y"]) bench(`analytics ${period}`, ANALYTICS_RUNS, () => deps.analytics.messages(accountId, { period }, Date.now()));
// Zones whose local days start off the UTC hour (+5:30, +5:45, −3:30 with DST) or move with DST.
for (const zone of ["America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Adelaide", "America/St_Johns"]) {
  bench(`analytics 1y, ${zone}`, ANALYTICS_RUNS, () => deps.analytics.messages(accountId, { period: "1y", timezone: zone }, Date.now()));
}
bench("analytics 1y, one form", ANALYTICS_RUNS, () => deps.analytics.messages(accountId, { period: "1y", formId: formIds[1] }, Date.now()));
bench("analytics 1y, one form, Asia/Kolkata", ANALYTICS_RUNS, () => deps.analytics.messages(accountId, { period: "1y", formId: formIds[1], timezone: "Asia/Kolkata" }, Date.now()));
// The dashboard's overview asks for 1d and 7d in the browser's zone.
for (const period of ["1d", "7d"]) bench(`analytics ${period}, Australia/Adelaide (overview)`, ANALYTICS_RUNS, () => deps.analytics.messages(accountId, { period, timezone: "Australia/Adelaide" }, Date.now()));
bench("forms/<id>/stats 1y", ANALYTICS_RUNS, () => deps.analytics.formStats(accountId, formIds[1], { period: "1y" }, Date.now()));
bench("forms/<id>/stats 1y, Asia/Kolkata", ANALYTICS_RUNS, () => deps.analytics.formStats(accountId, formIds[1], { period: "1y", timezone: "Asia/Kolkata" }, Date.now()));
if (all) {
  bench("next (lease 1)", 2_000, () => deps.leases.next(accountId, { limit: 1, leaseSeconds: 300 }));
  bench("next (lease 10)", 500, () => deps.leases.next(accountId, { limit: 10, leaseSeconds: 300 }));
}

// Through HTTP on loopback (key in the path), for the whole request cost.
const httpSamples: number[] = [];
for (let i = 0; i < (all ? 301 : 0); i++) {
  const s = performance.now();
  const res = await fetch(`http://127.0.0.1:${running.port}/v1/messages/${apiKey}?status=sent&limit=50`);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  if (i > 0) httpSamples.push(performance.now() - s);
}
if (all) rows.push(["HTTP GET /messages/<KEY>?status=sent (loopback)", 300, pct(httpSamples, 50), pct(httpSamples, 99)]);

const cpu = os.cpus()[0]?.model ?? "unknown cpu";
console.log(`machine: ${cpu}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Bun ${Bun.version}, ${os.platform()}`);
console.log(`rows: ${rowCount.toLocaleString("en-US")} messages (each with its submission), ${FORMS} forms, ${CONTACTS.toLocaleString("en-US")} contacts; insert ${(insertMs / 1000).toFixed(1)} s; derived data rebuilt in ${(derivedMs / 1000).toFixed(1)} s; queue rebuild ${queued.toLocaleString("en-US")} queued in ${rebuildMs.toFixed(0)} ms`);
console.log("timings via service functions (except the HTTP line); ms");
const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${"case".padEnd(w)}  ${"n".padStart(5)}  ${"p50".padStart(8)}  ${"p99".padStart(8)}`);
for (const [name, n, p50, p99] of rows) console.log(`${name.padEnd(w)}  ${String(n).padStart(5)}  ${p50.toFixed(2).padStart(8)}  ${p99.toFixed(2).padStart(8)}`);
await running.stop();
if (!flags.has("keep") || keepDb) rmSync(dir, { recursive: true, force: true });
else console.log(`database kept in ${dir}`);
