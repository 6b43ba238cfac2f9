#!/usr/bin/env bun
/**
 * The SQLite settings (docs/api-decisions.md, "The webhook path: measurement, SQLite
 * settings, lean request path"), A/B on the write path alone: no HTTP and no load
 * generator, so the figures move much less with the rest of a shared machine. Each variant has its
 * own database (the real migrations) and writes what a webhook submission writes — contact upsert
 * (half new), message insert — in group-commit batches of 64 through the product's
 * GroupCommitWriter; variants take turns in short slices (interleaved), and each prints
 * µs per request (write job + commit + fsync), and its peak WAL size.
 *
 *   bun scripts/bench/sqlite-settings.ts [--seconds 12] [--batch 64] [--cache-sweep]
 *
 * --cache-sweep compares page cache sizes (2–32 MiB) instead of the three settings.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { openSqlite, type OpenOptions } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { GroupCommitWriter } from "../../src/db/group-commit";
import { Checkpointer } from "../../src/db/checkpointer";
import { DEFAULT_SQLITE_CACHE_MB } from "../../src/config";
import { silentLogger } from "../../src/lib/log";
import { machineLine } from "./lib/proc";
import { phoneFor } from "./lib/phones";

const argv = process.argv.slice(2);
const opt = (name: string, def: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : def);
const SECONDS = opt("seconds", 12);
const BATCH = opt("batch", 64);
const SLICE_MS = 400;
const dir = mkdtempSync(join(tmpdir(), "textwire-bench-sqlite-"));

interface Variant {
  name: string;
  open: OpenOptions;
  background: boolean;
}
const CACHE_SWEEP: Variant[] = [2, 4, 8, 16, 32].map((mb) => ({ name: `page cache ${mb} MiB`, open: { cacheMb: mb }, background: true }));
const SETTINGS: Variant[] = [
  { name: "defaults (memory, 8 MiB, background)", open: { cacheMb: DEFAULT_SQLITE_CACHE_MB }, background: true },
  { name: "temp_store file", open: { cacheMb: DEFAULT_SQLITE_CACHE_MB, tempStore: "file" }, background: true },
  { name: "page cache 2 MiB", open: {}, background: true },
  { name: "checkpoints inline", open: { cacheMb: DEFAULT_SQLITE_CACHE_MB }, background: false },
  { name: "all three off (the old defaults)", open: { tempStore: "file" }, background: false },
];
const VARIANTS = argv.includes("--cache-sweep") ? CACHE_SWEEP : SETTINGS;

interface Setup {
  v: Variant;
  path: string;
  sqlite: Database;
  writer: GroupCommitWriter;
  checkpointer?: Checkpointer;
  job: (i: number) => void;
  requests: number;
  ms: number;
  peakWal: number;
}

async function setUp(v: Variant, k: number): Promise<Setup> {
  const path = join(dir, `v${k}.db`);
  const sqlite = openSqlite(path, v.open);
  migrate(sqlite);
  let checkpointer: Checkpointer | undefined;
  if (v.background) {
    checkpointer = new Checkpointer(sqlite, path, silentLogger);
    await checkpointer.start();
  }
  const now = new Date().toISOString();
  const accountId = Bun.randomUUIDv7();
  sqlite.query("INSERT INTO accounts (id, name, plan, created_at) VALUES (?, 'Bench', 'standard', ?)").run(accountId, now);
  const formId = crypto.randomUUID();
  sqlite
    .query("INSERT INTO forms (id, account_id, name, name_key, message_template, is_active, fields, settings, created_at, updated_at) VALUES (?, ?, 'F', 'f', 'Hi', 1, '[]', '{}', ?, ?)")
    .run(formId, accountId, now, now);
  const contactByPhone = sqlite.prepare("SELECT id FROM contacts WHERE account_id = ? AND phone_number = ?");
  const contactInsert = sqlite.prepare(
    `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags, message_count, search_text, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?)`,
  );
  const contactUpdate = sqlite.prepare("UPDATE contacts SET first_name = ?, email = ?, updated_at = ? WHERE id = ?");
  const messageInsert = sqlite.prepare(
    `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, status, priority, priority_rank,
       webhook_data, template_used, scheduled_for, metadata, seq, created_at, updated_at)
     VALUES (?, ?, ?, 'F', ?, ?, ?, 'queued', 'normal', 2, ?, 'Hi', ?, '{"source":"webhook"}', ?, ?, ?)`,
  );
  let seq = 0;
  let fresh = 0;
  const job = (i: number) => {
    const n = i % 2 === 0 || fresh === 0 ? fresh++ : Math.floor(Math.random() * fresh);
    const phone = phoneFor(n);
    const ts = new Date().toISOString();
    const existing = contactByPhone.get(accountId, phone) as { id: string } | null;
    let contactId: string;
    if (existing) {
      contactId = existing.id;
      contactUpdate.run(`Ann ${n}`, `ann.${n}@example.com`, ts, contactId);
    } else {
      contactId = Bun.randomUUIDv7();
      contactInsert.run(contactId, accountId, phone, `Ann ${n}`, "Lee", `ann.${n}@example.com`, formId, '{"company":"Acme"}', `ann ${n} lee ${phone}`, ts, ts);
    }
    messageInsert.run(Bun.randomUUIDv7(), accountId, formId, contactId, `Hi Ann ${n}, thanks for reaching us.`, phone, `{"phoneNumber":"${phone}"}`, ts, ++seq, ts, ts);
  };
  return { v, path, sqlite, writer: new GroupCommitWriter(sqlite), checkpointer, job, requests: 0, ms: 0, peakWal: 0 };
}

const walSize = (p: string) => {
  try {
    return statSync(p + "-wal").size;
  } catch {
    return 0;
  }
};

try {
  const setups: Setup[] = [];
  for (let k = 0; k < VARIANTS.length; k++) setups.push(await setUp(VARIANTS[k], k));
  let i = 0;
  const end = performance.now() + SECONDS * 1000;
  for (let round = 0; performance.now() < end; round++) {
    for (let k = 0; k < setups.length; k++) {
      const s = setups[(k + round) % setups.length];
      const sliceEnd = performance.now() + SLICE_MS;
      while (performance.now() < sliceEnd) {
        const t0 = performance.now();
        const batch: Promise<unknown>[] = [];
        for (let b = 0; b < BATCH; b++) batch.push(s.writer.submit({ run: () => s.job(i++) }));
        await Promise.all(batch);
        s.ms += performance.now() - t0;
        s.requests += BATCH;
        s.peakWal = Math.max(s.peakWal, walSize(s.path));
      }
      // Between slices the background checkpointer catches up as it would between bursts.
      await Bun.sleep(20);
    }
  }
  console.log(machineLine());
  console.log(`write path only: contact upsert (half new) + message insert on our schema, batches of ${BATCH}, ${SECONDS} s in interleaved ${SLICE_MS} ms slices`);
  const base = setups[0].ms / setups[0].requests;
  for (const s of setups) {
    const us = (s.ms / s.requests) * 1000;
    console.log(
      `${s.v.name.padEnd(38)} ${us.toFixed(1).padStart(7)} µs/request   ${String(Math.round(1e6 / us)).padStart(6)} req/s   ×${(base / (s.ms / s.requests)).toFixed(2)} of the defaults' speed   ${String(s.requests).padStart(7)} requests   peak WAL ${(s.peakWal / 1_048_576).toFixed(1)} MB`,
    );
  }
  for (const s of setups) {
    s.writer.stop();
    await s.checkpointer?.stop();
    s.sqlite.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
