/**
 * Contacts benchmark: 100,000 contacts with 3 custom fields and tags.
 *
 *   ./node_modules/.bin/bun scripts/bench/contacts.ts [--contacts 100000] [--requests 300] [--parts export,import,list,cold] [--db PATH] [--cold-starts 15]
 *
 * `--parts` runs only some of the parts (the import needs the CSV export, which then runs alone).
 * `cold`: the first request after a start — for each sample a fresh server process, then one
 * request (a tags+status filter, a phone-digit search): nothing cached in the process, SQLite's
 * page cache empty. The "uncached" lines of `list` ask something new on a warm server instead.
 *
 * Measures, through the real HTTP server on loopback (run as a child process, so the RSS figures
 * are the server's own: VmHWM from /proc/<pid>/status, one fresh server per export):
 * - export as csv, json and xlsx: wall time reading the stream to its end, and the server's peak RSS;
 * - re-import of the CSV into an empty account (every row new), then onto the account it came
 *   from (every row an update): time and peak RSS of each;
 * - p50/p99 of list pages with search, tags and each sort, and of POST /contacts/search by a
 *   custom field.
 * Targets (2-core machine): CSV export < 2 s, XLSX < 8 s, export peak RSS < 150 MB, list/search p99 < 15 ms,
 * CSV import of 100k < 8 s.
 */
import { existsSync, mkdtempSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { AccountService } from "../../src/services/accounts";
import { contactSearchText } from "../../src/domain/contact-search";
import { normalizePhone } from "../../src/domain/phone";

const args = process.argv.slice(2);
const arg = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const N = arg("contacts", 100_000);
const REQUESTS = arg("requests", 300);
const PARTS = new Set((args.includes("--parts") ? args[args.indexOf("--parts") + 1] : "export,import,list,cold").split(","));
const COLD_STARTS = arg("cold-starts", 15);
const root = join(import.meta.dir, "..", "..");

console.log(`machine: ${cpus()[0]?.model ?? "unknown"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Bun ${Bun.version}, ${process.platform}`);

// --db PATH: seed there once and keep it (with PATH.json for the key); later runs reuse it.
const keepDb = args.includes("--db") ? args[args.indexOf("--db") + 1] : undefined;
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-contacts-"));
const dbPath = keepDb ?? join(dir, "bench.db");
const reuse = keepDb !== undefined && existsSync(dbPath) && existsSync(`${dbPath}.json`);

// ---- data ----
const FIRST = ["Maria", "John", "Aisha", "Chen", "Olga", "Pedro", "Fatima", "Liam", "Noah", "Emma", "Ava", "Mateo", "Yuki", "Ivan", "Sara", "Omar", "Lena", "Tom", "Nina", "Raj"];
const LAST = ["Lopez", "Smith", "Khan", "Wang", "Ivanova", "Silva", "Ali", "Murphy", "Brown", "Garcia", "Rossi", "Novak", "Kim", "Sato", "Meyer", "Dubois", "Jones", "Patel", "Cohen", "Berg"];
const TAGS = ["vip", "lead", "newsletter", "event", "partner", "cold", "warm", "trial"];
const STATUSES = ["new", "contacted", "responded", "converted"];
const PLANS = ["gold", "silver", "bronze"];
const phoneOf = (i: number) => `+1201${String(2_000_000 + i).padStart(7, "0")}`;
if (!normalizePhone(phoneOf(0)).ok || !normalizePhone(phoneOf(N - 1)).ok) throw new Error("bench phone range is not valid");

let t0 = performance.now();
const db = openSqlite(dbPath);
migrate(db);
const accounts = new AccountService(db, Date.now);
const big = { plan: "enterprise" as const, apiLimitPerHour: 1_000_000_000, apiBurstPerMinute: 1_000_000_000 };
// A reused database keeps its seeded account; the import always goes to a new, empty one.
const main = reuse ? (JSON.parse(readFileSync(`${dbPath}.json`, "utf8")) as { apiKey: string; account: { id: string } }) : accounts.createAccount({ name: "Bench", ...big });
const empty = accounts.createAccount({ name: "Empty", ...big });
if (reuse) {
  db.close();
  console.log(`reusing ${dbPath}`);
} else {
  const formIds: string[] = [];
  const insForm = db.query(`INSERT INTO forms (id, account_id, name, name_key, message_template, is_active, fields, settings, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'Hi {{firstName}}', 1, '[]', '{}', ?, ?)`);
  for (let f = 0; f < 5; f++) {
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    insForm.run(id, main.account.id, `Form ${f}`, `form ${f}`, now, now);
    formIds.push(id);
}
const insContact = db.query(`INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags,
  last_contacted_at, last_response_at, message_count, source, notes, search_text, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 0, 'bench', NULL, ?, ?, ?)`);
// mulberry32: deterministic, and unlike a bare LCG its low bits are not periodic.
let seed = 42;
const rnd = (n: number) => {
  let t = (seed = (seed + 0x6d2b79f5) | 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
};
const start = Date.now() - 365 * 86_400_000;
db.transaction(() => {
  for (let i = 0; i < N; i++) {
    const id = Bun.randomUUIDv7();
    const first = FIRST[rnd(FIRST.length)];
    const last = LAST[rnd(LAST.length)];
    const email = `${first}.${last}${i}@example.com`.toLowerCase();
    const phone = phoneOf(i);
    const tags = [...new Set([TAGS[rnd(TAGS.length)], TAGS[rnd(TAGS.length)]])];
    const created = new Date(start + Math.floor((i / N) * 365 * 86_400_000)).toISOString();
    const updated = new Date(Date.parse(created) + rnd(86_400_000)).toISOString();
    const status = STATUSES[rnd(4)];
    const cf = { company: `Company ${rnd(500)}`, plan: PLANS[rnd(3)], city: `City ${rnd(50)}` };
    insContact.run(
      id, main.account.id, phone, first, last, email, status, formIds[rnd(5)], JSON.stringify(cf), JSON.stringify(tags),
      status === "responded" || status === "converted" ? new Date(Date.parse(created) + rnd(7 * 86_400_000)).toISOString() : null,
      contactSearchText({ firstName: first, lastName: last, email, phoneNumber: phone }), created, updated,
    );
  }
})();
// Seeded contacts are indexed now, as a migrated database's are (new ones wait in
// contacts_fts_pending for the applier Worker, migration 0023).
db.exec("INSERT INTO contacts_fts (contacts_fts) VALUES ('rebuild')");
db.exec("DELETE FROM contacts_fts_pending");
db.exec("ANALYZE");
db.close();
if (keepDb) writeFileSync(`${dbPath}.json`, JSON.stringify({ apiKey: main.apiKey, account: { id: main.account.id } }));
console.log(`seeded ${N} contacts in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
}
if (process.env.BENCH_SEED_ONLY) {
  console.log(`database: ${dbPath}`);
  process.exit(0);
}

// ---- server as a child process ----
async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

interface Child {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

async function startChild(): Promise<Child> {
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), "serve", "--db", dbPath, "--port", String(port), "--host", "127.0.0.1", "--log-format", "json"], {
    stdout: "ignore",
    stderr: process.env.BENCH_VERBOSE ? "inherit" : "ignore",
    cwd: root,
  });
  const base = `http://127.0.0.1:${port}/v1`;
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`${base}/contacts?limit=1`, { headers: { Authorization: `Bearer ${main.apiKey}` } });
      if (r.status === 200) {
        await r.arrayBuffer();
        break;
      }
    } catch {}
    await Bun.sleep(50);
  }
  // Run from source, the server bundles and compresses the dashboard at start (~1 s of one core;
  // the binary embeds it ready): wait for that, so no request below is timed behind it.
  await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer();
  return {
    base,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

function memMb(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const fmt = (n: number) => n.toFixed(1);

// ---- exports ----
let csvText = "";
for (const format of PARTS.has("export") ? ["csv", "json", "xlsx"] : PARTS.has("import") ? ["csv"] : []) {
  const child = await startChild();
  const before = memMb(child.pid);
  t0 = performance.now();
  const res = await fetch(`${child.base}/contacts/export?format=${format}`, { headers: auth(main.apiKey) });
  if (res.status !== 200) throw new Error(`export ${format}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let bytes = 0;
  const keep: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (format === "csv") keep.push(value);
  }
  const secs = (performance.now() - t0) / 1000;
  const after = memMb(child.pid);
  if (format === "csv") csvText = Buffer.concat(keep).toString("utf8");
  console.log(
    `export ${format.padEnd(4)}: ${N} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${secs.toFixed(2)} s; server RSS before ${fmt(before.rss)} MB, peak ${fmt(after.hwm)} MB`,
  );
  await child.stop();
}

/**
 * New contacts are indexed for search by the applier Worker after they are written (migration
 * 0023): how long until none is pending, and what a search costs meanwhile (its pending contacts
 * are read by the exact test, not the index).
 */
async function searchIndexCatchUp(child: Child, key: string): Promise<void> {
  const ro = openSqlite(dbPath, { readonly: true });
  const pending = () => (ro.query("SELECT COUNT(*) AS n FROM contacts_fts_pending").get() as { n: number }).n;
  const t = performance.now();
  const first = pending();
  const times: number[] = [];
  let total = 0;
  while (pending() > 0) {
    const q = performance.now();
    const r = await fetch(`${child.base}/contacts?search=maria.lopez${times.length}`, { headers: auth(key) });
    const b = (await r.json()) as any;
    if (r.status !== 200) throw new Error(`search while indexing: ${r.status} ${JSON.stringify(b)}`);
    total = b.data.pagination.total;
    times.push(performance.now() - q);
    await Bun.sleep(100);
  }
  ro.close();
  const secs = (performance.now() - t) / 1000;
  const sorted = times.sort((a, b) => a - b);
  console.log(
    `  search index: ${first} contact(s) pending after the import, all indexed ${secs.toFixed(2)} s later` +
      (times.length ? `; a search meanwhile (${times.length} samples, total ${total}): p50 ${sorted[Math.floor(times.length / 2)].toFixed(1)} ms, max ${sorted[times.length - 1].toFixed(1)} ms` : ""),
  );
}

// ---- import: into an empty account (every row a new contact), then onto the seeded account (every row an update) ----
if (PARTS.has("import")) {
  for (const [label, key] of [["new", empty.apiKey], ["same", main.apiKey]] as const) {
    const child = await startChild();
    const before = memMb(child.pid);
    t0 = performance.now();
    const res = await fetch(`${child.base}/contacts/import`, { method: "POST", body: csvText, headers: { ...auth(key), "Content-Type": "text/csv" } });
    const body = (await res.json()) as any;
    const secs = (performance.now() - t0) / 1000;
    const after = memMb(child.pid);
    if (res.status !== 200) throw new Error(`import ${label}: ${res.status} ${JSON.stringify(body)}`);
    console.log(
      `import csv (${label === "new" ? "empty account" : "same account"}): ${(csvText.length / 2 ** 20).toFixed(1)} MiB → created ${body.data.created}, updated ${body.data.updated}, errors ${body.data.errors.length} in ${secs.toFixed(2)} s${secs < 8 ? "" : "  (over 8 s)"}; server RSS before ${fmt(before.rss)} MB, peak ${fmt(after.hwm)} MB`,
    );
    await searchIndexCatchUp(child, key);
    await child.stop();
  }
}

// ---- list / search latency ----
if (PARTS.has("list")) {
  const child = await startChild();
  const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
  async function measure(label: string, run: (i: number) => Promise<Response>) {
    for (let i = 0; i < 20; i++) await (await run(i)).arrayBuffer();
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      const r = await run(i);
      const b = (await r.json()) as any;
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${label}: ${r.status} ${JSON.stringify(b)}`);
      total = b.data.pagination.total;
    }
    const p50 = pct(times, 50);
    const p99 = pct(times, 99);
    console.log(`${label.padEnd(58)} total ${String(total).padStart(6)}  p50 ${p50.toFixed(2)} ms  p99 ${p99.toFixed(2)} ms${p99 < 15 ? "" : "  (over 15 ms)"}`);
  }
  const get = (q: string) => (i: number) => fetch(`${child.base}/contacts?${q.replace("{page}", String((i % 20) + 1))}`, { headers: auth(main.apiKey) });
  const post = (json: unknown) => () => fetch(`${child.base}/contacts/search`, { method: "POST", body: JSON.stringify(json), headers: { ...auth(main.apiKey), "Content-Type": "application/json" } });
  for (const sortBy of ["createdAt", "updatedAt", "firstName", "lastName"]) {
    for (const order of ["desc", "asc"]) await measure(`list sortBy=${sortBy}&order=${order} (pages 1-20)`, get(`sortBy=${sortBy}&order=${order}&page={page}`));
  }
  await measure("list search=maria (name)", get("search=maria"));
  await measure("list search=maria lopez (full name)", get("search=maria%20lopez"));
  await measure("list search=(201) 200-12 (phone digits)", get("search=(201)%20200-12"));
  await measure("list search=lopez12 (e-mail)", get("search=lopez12"));
  // Every request below asks something new, so no total comes from the count cache.
  await measure("uncached: list search=<different name+digits each time>", (i) => fetch(`${child.base}/contacts?search=${FIRST[i % 20].toLowerCase()}.${LAST[(i >> 3) % 20].toLowerCase()}${i}`, { headers: auth(main.apiKey) }));
  await measure("uncached: list search=(201) 20<different digits each time>", (i) => fetch(`${child.base}/contacts?search=${encodeURIComponent(`(201) 20${String(i).padStart(3, "0")}`)}`, { headers: auth(main.apiKey) }));
  await measure("uncached: list tags=<different pair each time>&status=new", (i) => fetch(`${child.base}/contacts?status=new&tags=${TAGS[i % 8]},${TAGS[(i >> 3) % 8]}&createdAfter=2020-01-${String((i % 28) + 1).padStart(2, "0")}`, { headers: auth(main.apiKey) }));
  await measure("uncached: search customFields.company=<different each time>", (i) => fetch(`${child.base}/contacts/search`, { method: "POST", body: JSON.stringify({ customFields: { company: `Company ${i}` } }), headers: { ...auth(main.apiKey), "Content-Type": "application/json" } }));
  await measure("list search=zzzz (no match)", get("search=zzzz"));
  await measure("list search=maria&sortBy=lastName", get("search=maria&sortBy=lastName&order=asc"));
  await measure("list tags=vip", get("tags=vip"));
  await measure("list tags=vip,lead", get("tags=vip,lead"));
  await measure("list tags=vip&sortBy=firstName", get("tags=vip&sortBy=firstName&order=asc"));
  await measure("list status=converted&sortBy=updatedAt", get("status=converted&sortBy=updatedAt"));
  await measure("list page=1000 (deep offset)", get("page=1000&limit=50"));
  await measure("search customFields.plan=gold", post({ customFields: { plan: "gold" } }));
  await measure("search customFields.company=Company 17", post({ customFields: { company: "Company 17" } }));
  await measure("search company + city", post({ customFields: { company: "Company 17", city: "City 3" } }));
  await measure("search customFields.plan=gold&tags=vip", post({ customFields: { plan: "gold" }, tags: ["vip"] }));
  await child.stop();
}

// ---- cold: the first request of a fresh server process ----
if (PARTS.has("cold")) {
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
  const cases: Array<[string, (i: number) => string]> = [
    ["cold: list tags=<pair>&status=new (first request after start)", (i) => `status=new&tags=${TAGS[i % 8]},${TAGS[(i + 3) % 8]}`],
    ["cold: list tags=<one tag>&status=<status> (first request)", (i) => `status=${STATUSES[i % 4]}&tags=${TAGS[(i * 3) % 8]}`],
    ["cold: list search=(201) 20<digits> (first request)", (i) => `search=${encodeURIComponent(`(201) 20${String(i * 7).padStart(3, "0")}`)}`],
  ];
  for (const [label, query] of cases) {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < COLD_STARTS; i++) {
      const child = await startChild();
      // startChild's readiness probe was GET /contacts?limit=1 (no filter): nothing of this one is cached.
      const t = performance.now();
      const r = await fetch(`${child.base}/contacts?${query(i)}`, { headers: auth(main.apiKey) });
      const b = (await r.json()) as any;
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${label}: ${r.status} ${JSON.stringify(b)}`);
      total = b.data.pagination.total;
      if (process.env.BENCH_VERBOSE) console.log(`  ${query(i)}: ${times[times.length - 1].toFixed(1)} ms`);
      await child.stop();
    }
    console.log(`${label.padEnd(58)} total ${String(total).padStart(6)}  p50 ${pct(times, 50).toFixed(2)} ms  max ${pct(times, 100).toFixed(2)} ms  (${COLD_STARTS} starts)${pct(times, 100) < 15 ? "" : "  (over 15 ms)"}`);
  }
}

rmSync(dir, { recursive: true, force: true });
