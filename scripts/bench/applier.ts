#!/usr/bin/env bun
/**
 * Intake applier benchmark: the applier's cost per submission, without HTTP
 * or a second thread. Builds deps on a temp file database without their lifecycle (no applier
 * Worker runs), posts N submissions through SubmissionService.submit (the webhook's own write job:
 * 5-field body, about half new contacts, FORMS forms), then applies the intake in batches of
 * APPLY_BATCH_MAX on a connection set up as the Worker's, and prints µs per row.
 *
 * Variants, each on a fresh copy of the seeded file, in interleaved rounds: row by row with
 * automatic checkpoints in the applier's COMMIT (the first design), row by row without, and in
 * chunks of 16/32/64 rows (one multi-row INSERT per table, services/intake/applier.ts) without.
 *
 *   bun scripts/bench/applier.ts [--rows 10000] [--forms 50] [--rounds 2] [--form-rows-ab]
 *
 * --form-rows-ab: the applier as it runs (chunks, no automatic checkpoint) recording each
 * submission and new contact into the form's rollup rows (migration 0022) against the same with
 * those records dropped (the cost before 0022), on copies of one seeded file.
 *
 * A realistic file: --existing N posts and applies N submissions first (deeper indexes, random
 * pages out of the page cache); --db PATH seeds into PATH and keeps it, and a later run with the
 * same PATH reuses it (rounds apply copies; the file is never changed). Other variant sets:
 * --breakdown (µs per row per statement kind, and the same with the contacts_fts triggers
 * dropped), --batch-sizes (rows per transaction 8…512: what the applier's batch size costs),
 * --tuning (page cache sizes, mmap; --tuning-code: no chunk savepoint; --tuning-more: chunks of
 * 64/128), --submissions-index-ab (migration 0024), --conversation-probe-ab (the conversation
 * upsert without its contact lookup against with it), --wal-pages (with any set: which tables and
 * indexes the commits wrote, per row), --current (only the applier as it runs, e.g. under `bun --cpu-prof`).
 * --search-ab: new contacts left pending for the search index (migration 0023) against the index
 * written by the contacts insert trigger (before 0023); for the first, the background indexing of
 * the pending contacts afterwards (src/db/stores/contacts/search-pending.ts) is timed on its own.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import type { Database } from "bun:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { createDeps } from "../../src/deps";
import { DEFAULT_SQLITE_CACHE_MB, defaultServeConfig } from "../../src/config";
import { IntakeApplier } from "../../src/services/intake/applier";
import { machineLine } from "./lib/proc";
import { phoneFor } from "./lib/phones";
import { derivedCounts } from "../../src/db/derived-counts";
import { INDEX_CHUNK_ROWS, PendingSearchIndex } from "../../src/db/stores/contacts/search-pending";

const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const ROWS = opt("rows", 10_000);
const FORMS = opt("forms", 50);
const ROUNDS = opt("rounds", 2);
/** --index-costs: chunks of 64 with each messages index (and the conversations trigger) dropped in turn. */
const INDEX_COSTS = argv.includes("--index-costs");
/** --schema-ab: chunks of 64 on migration 0019's schema against the one before it (same run). */
const SCHEMA_AB = argv.includes("--schema-ab");
const FORM_ROWS_AB = argv.includes("--form-rows-ab");
/** --existing N: N submissions posted and applied first (a realistic file: deeper, wider indexes); the rounds apply the next --rows. */
const EXISTING = opt("existing", 0);
/** --breakdown: time per statement kind per row, with the variants below. */
const BREAKDOWN = argv.includes("--breakdown");
/** --tuning: the applier connection's page cache sizes and mmap against it as running (--tuning-code, --tuning-more: see above). */
const TUNING = argv.includes("--tuning");
/** --wal-pages: the WAL's frames of each variant's first run, per table or index (dbstat), per row. */
const WAL_PAGES = argv.includes("--wal-pages");
const SEARCH_AB = argv.includes("--search-ab");
const quiet = { info() {}, warn() {}, error() {} };

/** Which b-trees the applier's commits wrote: each WAL frame's page mapped to its table or index. */
function printWalPages(c: Database, walPath: string, name: string, rows: number): void {
  if (!existsSync(walPath)) return;
  const wal = readFileSync(walPath);
  const pageSize = wal.readUInt32BE(8);
  const names = new Map<number, string>();
  for (const r of c.query("SELECT name, pageno FROM dbstat").all() as Array<{ name: string; pageno: number }>) names.set(r.pageno, r.name);
  const by = new Map<string, number>();
  let frames = 0;
  for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize, frames++) {
    const n = names.get(wal.readUInt32BE(off)) ?? "(freed or other)";
    by.set(n, (by.get(n) ?? 0) + 1);
  }
  console.log(`  WAL pages of "${name}": ${(frames / rows).toFixed(2)} per row applied (${frames} frames), the largest by table or index:`);
  for (const [n, k] of [...by].sort((x, y) => y[1] - x[1]).slice(0, 16)) console.log(`    ${n.padEnd(45)} ${(k / rows).toFixed(2).padStart(6)} pages/row`);
}
const dir = mkdtempSync(join(tmpdir(), "textwire-applier-"));

try {
  console.log(machineLine());
  // --db PATH: seed into PATH and keep it; a later run with the same PATH reuses it (never modified: rounds apply copies).
  const KEEP = argv.includes("--db") ? argv[argv.indexOf("--db") + 1] : null;
  const dbPath = KEEP ?? join(dir, "textwire.db");
  const reuse = KEEP !== null && existsSync(KEEP);
  let pending: number;
  if (reuse) {
    const s = openSqlite(dbPath);
    pending = (s.query("SELECT count(*) AS n FROM submission_intake").get() as { n: number }).n;
    s.close();
    console.log(`reusing ${dbPath}: ${pending} intake rows`);
  } else {
    const sqlite = openSqlite(dbPath);
    migrate(sqlite);
    let now = Date.parse("2030-03-04T15:00:00Z");
    const deps = createDeps(sqlite, defaultServeConfig({ db: dbPath }), () => now, quiet);
    const accountId = deps.accounts.createAccount({ name: "Bench" }).account.id;
    const forms: string[] = [];
    for (let i = 0; i < FORMS; i++) {
      const id = crypto.randomUUID();
      const fields = [
        { name: "firstName", type: "text", label: "First name", validation: { maxLength: 50 } },
        { name: "lastName", type: "text", label: "Last name" },
        { name: "email", type: "email", label: "E-mail" },
        { name: "company", type: "text", label: "Company", validation: { maxLength: 100 } },
      ];
      sqlite
        .query(
          `INSERT INTO forms (id, account_id, name, name_key, description, message_template, is_active, fields, settings, created_at, updated_at)
           VALUES (?1, ?2, ?3, lower(?3), NULL, ?4, 1, ?5, ?6, ?7, ?7)`,
        )
        .run(id, accountId, `Bench form ${i}`, "Hi {{firstName}} {{lastName}}, thanks for reaching {{formName}} about {{company}}. We will text you shortly.",
          JSON.stringify(fields), JSON.stringify({ timezone: "America/New_York", duplicateWindowMinutes: 0 }), new Date(now).toISOString());
      forms.push(id);
    }
    const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Eve", "Femi", "Gus", "Hana"];
    const LAST = ["Lee", "Smith", "Okafor", "García", "Ng", "Brown"];
    let fresh = 0;
    let posted = 0;
    const post = async (count: number) => {
      // 64 at a time, as 64 connections would: the group commit takes them in one transaction.
      for (let n = posted, end = posted + count; n < end; ) {
        const wave: Promise<unknown>[] = [];
        for (let k = 0; k < 64 && n < end; k++, n++) {
          const i = n % 2 === 0 || fresh === 0 ? fresh++ : Math.floor(Math.random() * fresh);
          const body = { phoneNumber: phoneFor(i), firstName: FIRST[i % 8], lastName: LAST[i % 6], email: `${FIRST[i % 8].toLowerCase().replace(/[^a-z]/g, "")}.${i}@example.com`, company: `Company ${i % 97}` };
          const form = deps.submissions.findForm(forms[n % FORMS])!;
          now += 7;
          wave.push(deps.submissions.submit(form, { body, rawJson: JSON.stringify(body), ipAddress: "127.0.0.1", userAgent: null }));
        }
        await Promise.all(wave);
      }
      posted += count;
    };
    if (EXISTING > 0) {
      const t = performance.now();
      await post(EXISTING);
      const a = openSqlite(dbPath, { cacheMb: DEFAULT_SQLITE_CACHE_MB });
      a.exec("PRAGMA synchronous = NORMAL");
      new IntakeApplier(a).drain();
      a.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      a.close();
      console.log(`existing: ${EXISTING} submissions posted and applied in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    const t0 = performance.now();
    await post(ROWS);
    const seeded = performance.now() - t0;
    pending = (sqlite.query("SELECT count(*) AS n FROM submission_intake").get() as { n: number }).n;
    console.log(`seeded ${ROWS} submissions through the write job in ${(seeded / 1000).toFixed(1)} s (${pending} intake rows, ${FORMS} forms, ~half new contacts)`);
    sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite.close();
  }

  /** The applier's connection as the Worker sets it up: no automatic checkpoint in its COMMIT. */
  const asRunning = (s: Database) => s.exec("PRAGMA wal_autocheckpoint = 0");
  const chunk64 = (s: Database, a: IntakeApplier) => (asRunning(s), (a.chunkRows = 64));
  // Each variant applies a fresh copy of the seeded file; rounds interleave the variants.
  const variants: Array<[string, (s: Database, a: IntakeApplier) => void, number?]> = [
    ["row by row, automatic checkpoints (before)", (_s, a) => (a.eventsWanted = () => true)],
    ["row by row, no automatic checkpoint", (s, a) => (asRunning(s), (a.eventsWanted = () => true))],
    ["chunks of 32 rows, no automatic checkpoint (after)", asRunning],
    ["chunks of 16 rows", (s, a) => (asRunning(s), (a.chunkRows = 16))],
    ["chunks of 64 rows", chunk64],
  ];
  if (INDEX_COSTS) {
    const probe = openSqlite(dbPath);
    const names = (probe.query("SELECT name FROM sqlite_master WHERE tbl_name = 'messages' AND type = 'index' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    const triggers = (probe.query("SELECT name FROM sqlite_master WHERE tbl_name = 'messages' AND type = 'trigger' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    probe.close();
    variants.length = 0;
    variants.push(["chunks of 64, every index", chunk64]);
    for (const n of names) variants.push([`without ${n}`, (s, a) => (s.exec(`DROP INDEX ${n}`), chunk64(s, a))]);
    for (const n of triggers) variants.push([`without trigger ${n}`, (s, a) => (s.exec(`DROP TRIGGER ${n}`), chunk64(s, a))]);
    variants.push(["without any messages index", (s, a) => (names.forEach((n) => s.exec(`DROP INDEX ${n}`)), chunk64(s, a))]);
  }
  if (SCHEMA_AB) {
    variants.length = 0;
    variants.push(["chunks of 64, migration 0019 (after)", chunk64]);
    variants.push([
      "chunks of 64, before 0019 (3 indexes + trigger back)",
      (s, a) => {
        s.exec(`DROP INDEX messages_account_status_scheduled_idx;
          CREATE INDEX messages_account_created_idx ON messages (account_id, created_at);
          CREATE INDEX messages_account_scheduled_idx ON messages (account_id, scheduled_for);
          CREATE INDEX messages_queued_idx ON messages (scheduled_for) WHERE status = 'queued';
          CREATE TRIGGER messages_conversation AFTER INSERT ON messages WHEN NEW.contact_id IS NOT NULL BEGIN
            INSERT INTO conversations (contact_id, account_id, last_message_at, unread_count) VALUES (NEW.contact_id, NEW.account_id, NEW.created_at, 0)
            ON CONFLICT (contact_id) DO UPDATE SET last_message_at = max(last_message_at, excluded.last_message_at);
          END;`);
        // The trigger writes the conversations: the recorded upsert is left out.
        const d = derivedCounts(s) as any;
        const prepared = d.prepared.bind(d);
        d.prepared = () => ({ ...prepared(), conversation: { run() {} } });
        chunk64(s, a);
      },
    ]);
  }
  if (FORM_ROWS_AB) {
    variants.length = 0;
    variants.push(["submissions + new contacts recorded (after 0022)", asRunning]);
    variants.push([
      "not recorded (before 0022)",
      (s) => {
        derivedCounts(s).recordFormRows = () => {};
        asRunning(s);
      },
    ]);
  }
  /** Time per statement kind (ms, summed over the runs of each variant). */
  const parts = new Map<string, Map<string, number>>();
  const timeParts = (name: string, a: IntakeApplier) => {
    const m = parts.get(name) ?? new Map<string, number>();
    parts.set(name, m);
    const wrap = (label: string, obj: any, method: string) => {
      const f = obj[method].bind(obj);
      obj[method] = (...args: unknown[]) => {
        const t = performance.now();
        try {
          return f(...args);
        } finally {
          m.set(label, (m.get(label) ?? 0) + performance.now() - t);
        }
      };
    };
    const x = a as any;
    wrap("intake read", x.store, "listAfter");
    wrap("intake mark + delete", x.store, "markApplied");
    wrap("contact read", x.contactsByPhones, "all");
    wrap("contact insert", x.contactInserts, "run");
    wrap("contact update", x.contactUpdates, "run");
    wrap("contact touch", x.contactTouches, "run");
    wrap("message insert", x.messageInserts, "run");
    wrap("submission insert", x.submissionInserts, "run");
    wrap("counts flush", x.derived, "flush");
    wrap("commit", x.commit, "run");
    wrap("chunk savepoint", x.chunkSavepoint, "run");
    wrap("chunk release", x.chunkRelease, "run");
    wrap("whole batch", x, "applyBatch");
  };
  if (BREAKDOWN) {
    variants.length = 0;
    variants.push(["as running (chunks of 32)", (s, a) => (asRunning(s), timeParts("as running (chunks of 32)", a))]);
    variants.push([
      "contacts_fts triggers dropped (f15-fts's effect)",
      (s, a) => {
        s.exec("DROP TRIGGER contacts_fts_insert; DROP TRIGGER contacts_fts_update; DROP TRIGGER contacts_fts_delete");
        asRunning(s);
        timeParts("contacts_fts triggers dropped (f15-fts's effect)", a);
      },
    ]);
  }
  if (TUNING) {
    variants.length = 0;
    variants.push(["as running (chunks of 32, 8 MiB cache)", asRunning]);
    for (const mb of [16, 32, 64]) variants.push([`page cache ${mb} MiB`, (s) => (asRunning(s), s.exec(`PRAGMA cache_size = -${mb * 1024}`))]);
    variants.push(["8 MiB cache + mmap 1 GiB", (s) => (asRunning(s), s.exec("PRAGMA mmap_size = 1073741824"))]);
    if (argv.includes("--tuning-code")) {
      variants.length = 1;
      variants.push([
        "no chunk savepoint",
        (s, a) => {
          asRunning(s);
          const x = a as any;
          for (const k of ["chunkSavepoint", "chunkRelease"]) x[k] = { run() {} };
        },
      ]);
      variants.push(["page cache 32 MiB", (s) => (asRunning(s), s.exec(`PRAGMA cache_size = -32768`))]);
    }
    if (argv.includes("--tuning-more")) {
      variants.push(["chunks of 64", chunk64]);
      variants.push(["chunks of 128", (s, a) => (asRunning(s), (a.chunkRows = 128))]);
    }
  }
  // --submissions-index-ab: migration 0024 (submissions (account_id, created_at) dropped) against the index kept.
  if (argv.includes("--submissions-index-ab")) {
    variants.length = 0;
    variants.push(["after 0024 (no submissions (account, created) index)", (s) => (asRunning(s), s.exec("DROP INDEX IF EXISTS submissions_account_created_idx"))]);
    variants.push([
      "before 0024 (the index kept)",
      (s) => (asRunning(s), s.exec("CREATE INDEX IF NOT EXISTS submissions_account_created_idx ON submissions (account_id, created_at)")),
    ]);
  }
  // --conversation-probe-ab: the conversation upsert as running (it checks that the contact
  // exists) against without that lookup (the applier's chunks wrote the contact themselves).
  if (argv.includes("--conversation-probe-ab")) {
    variants.length = 0;
    variants.push(["as running (with the contact lookup)", asRunning]);
    variants.push([
      "conversation upsert without the contact lookup",
      (s) => {
        asRunning(s);
        const st = (derivedCounts(s) as any).prepared();
        st.conversation = s.prepare(
          `INSERT INTO conversations (contact_id, account_id, last_message_at, unread_count) VALUES (?1, ?2, ?3, 0)
           ON CONFLICT (contact_id) DO UPDATE SET last_message_at = max(last_message_at, excluded.last_message_at)`,
        );
      },
    ]);
  }
  // --batch-sizes: rows per transaction, as the applier's batches are when it keeps up with the webhook (a few rows each).
  if (argv.includes("--batch-sizes")) {
    variants.length = 0;
    for (const n of [8, 32, 128, 512]) variants.push([`batches of ${n}`, asRunning, n]);
  }
  // --current: only the applier as it runs (e.g. under --cpu-prof).
  if (argv.includes("--current")) variants.splice(0, variants.length, ["as running (chunks of 32)", asRunning]);
  const PENDING = "new contacts pending for search (after 0023)";
  if (SEARCH_AB) {
    variants.length = 0;
    variants.push([PENDING, asRunning]);
    variants.push([
      "search index written by the insert trigger (before 0023)",
      (s) => {
        s.exec(`DROP TRIGGER contacts_fts_insert; DROP TRIGGER contacts_fts_update; DROP TRIGGER contacts_fts_delete;
          CREATE TRIGGER contacts_fts_insert AFTER INSERT ON contacts BEGIN
            INSERT INTO contacts_fts (rowid, search_text, custom_fields) VALUES (NEW.rowid, NEW.search_text, NEW.custom_fields);
          END;
          CREATE TRIGGER contacts_fts_update AFTER UPDATE OF search_text, custom_fields ON contacts
            WHEN OLD.search_text IS NOT NEW.search_text OR OLD.custom_fields IS NOT NEW.custom_fields BEGIN
            INSERT INTO contacts_fts (contacts_fts, rowid, search_text, custom_fields) VALUES ('delete', OLD.rowid, OLD.search_text, OLD.custom_fields);
            INSERT INTO contacts_fts (rowid, search_text, custom_fields) VALUES (NEW.rowid, NEW.search_text, NEW.custom_fields);
          END;`);
        asRunning(s);
      },
    ]);
  }
  /** --search-ab: indexing the pending contacts afterwards, µs and WAL bytes per contact. */
  const indexing: Array<{ us: number; wal: number; n: number }> = [];
  const results = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  /** CPU time (user + system) per row: less exposed than wall time to other work on a shared machine. */
  const cpuResults = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  /** The system (kernel) share of it: page reads from the OS cache and WAL writes. */
  const sysResults = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  /** WAL written per row (variants without automatic checkpoints keep every frame): load-independent. */
  const walResults = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const [name, setup, batch] = variants[(k + round) % variants.length];
      const copy = join(dir, `copy-${round}-${k}.db`);
      copyFileSync(dbPath, copy);
      // As the applier Worker's connection (services/intake/worker.ts).
      const c = openSqlite(copy, { cacheMb: DEFAULT_SQLITE_CACHE_MB });
      c.exec("PRAGMA synchronous = NORMAL");
      const applier = new IntakeApplier(c);
      setup(c, applier);
      const a0 = performance.now();
      const cpu0 = process.cpuUsage();
      while (applier.applyBatch(batch).applied > 0);
      const ms = performance.now() - a0;
      const cpu = process.cpuUsage(cpu0);
      cpuResults.get(name)!.push((cpu.user + cpu.system) / pending);
      sysResults.get(name)!.push(cpu.system / pending);
      walResults.get(name)!.push(existsSync(copy + "-wal") ? statSync(copy + "-wal").size / pending : 0);
      const messages = (c.query("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
      if (messages === 0) throw new Error("nothing applied");
      if (WAL_PAGES && round === 0) printWalPages(c, copy + "-wal", name, pending);
      results.get(name)!.push((ms * 1000) / pending);
      if (SEARCH_AB && name === PENDING) {
        const search = new PendingSearchIndex(c);
        const n = search.pendingCount();
        const wal0 = statSync(copy + "-wal").size;
        const i0 = performance.now();
        while (search.indexChunk() > 0);
        indexing.push({ us: ((performance.now() - i0) * 1000) / n, wal: (statSync(copy + "-wal").size - wal0) / n, n });
      }
      c.close();
      rmSync(copy, { force: true });
      rmSync(copy + "-wal", { force: true });
      rmSync(copy + "-shm", { force: true });
    }
  }
  console.log(`apply (${ROUNDS} interleaved rounds; µs per intake row, mean and each run; CPU µs per row, median and each run):`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name] of ROUNDS > 0 ? variants : []) {
    const r = results.get(name)!;
    const c = cpuResults.get(name)!;
    console.log(
      `  ${name.padEnd(56)} ${(r.reduce((a, b) => a + b, 0) / r.length).toFixed(1).padStart(7)} µs/row   (${r.map((x) => x.toFixed(0)).join(" / ")})   CPU ${median(c).toFixed(1)} µs/row (${c.map((x) => x.toFixed(0)).join(" / ")}; system ${median(sysResults.get(name)!).toFixed(0)})   WAL ${(median(walResults.get(name)!) / 1024).toFixed(1)} KiB/row`,
    );
  }
  for (const [name, m] of parts) {
    const perRow = (ms: number) => ((ms * 1000) / (pending * ROUNDS)).toFixed(1);
    const whole = m.get("whole batch") ?? 0;
    let known = 0;
    for (const [k, v] of m) if (k !== "whole batch") known += v;
    console.log(`  ${name}: µs/row per statement kind`);
    for (const [k, v] of [...m].sort((p, q) => q[1] - p[1])) console.log(`    ${k.padEnd(24)} ${perRow(v).padStart(7)}`);
    console.log(`    ${"the rest (JS, parse)".padEnd(24)} ${perRow(whole - known).padStart(7)}`);
  }
  for (const x of indexing) {
    console.log(`  then indexing the ${x.n} pending contacts in chunks of ${INDEX_CHUNK_ROWS}: ${x.us.toFixed(1)} µs and ${(x.wal / 1024).toFixed(2)} KiB of WAL per contact`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
