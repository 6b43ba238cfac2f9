#!/usr/bin/env bun
/**
 * The machine's ceilings for the webhook benchmark: a bare Bun.serve (no framework, no validation,
 * no template, no limits) doing the same durable writes per request as the product — form lookup,
 * contact upsert, message insert — through the same group-commit writer with the same settings
 * (WAL, temp_store=MEMORY, the same page cache, checkpoints on their own thread, and the server's
 * default commit sync: each batch's fsync off the main thread, its answers after it; or
 * `--commit-sync inline`, synchronous=FULL inside the COMMIT).
 *
 *   --schema ours     the real migrations: every index, FTS and trigger the product's writes pay for
 *   --schema minimal  just the four tables with their primary keys and the contacts' unique phone
 *
 * Prints "READY <port> <formId,formId,…>" when listening.
 *
 *   bun scripts/bench/lib/ceiling.ts --db /tmp/x.db --forms 50 [--schema ours|minimal] [--commit-sync background|inline]
 */
import { openSqlite } from "../../../src/db/open";
import { migrate } from "../../../src/db/migrate";
import { GroupCommitWriter } from "../../../src/db/group-commit";
import { Checkpointer } from "../../../src/db/checkpointer";
import { DEFAULT_SQLITE_CACHE_MB } from "../../../src/config";
import { silentLogger } from "../../../src/lib/log";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ""), process.argv[i + 1]);
const dbPath = args.get("db")!;
const sqlite = openSqlite(dbPath, { cacheMb: DEFAULT_SQLITE_CACHE_MB });
const MINIMAL_SCHEMA = `
CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT NOT NULL, plan TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE forms (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, name_key TEXT NOT NULL, message_template TEXT NOT NULL,
  is_active INTEGER NOT NULL, fields TEXT NOT NULL, settings TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE contacts (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, phone_number TEXT NOT NULL, first_name TEXT, last_name TEXT, email TEXT,
  status TEXT NOT NULL, form_id TEXT, custom_fields TEXT NOT NULL, tags TEXT NOT NULL, message_count INTEGER NOT NULL, search_text TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (account_id, phone_number));
CREATE TABLE messages (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, form_id TEXT, form_name TEXT, contact_id TEXT, content TEXT NOT NULL,
  recipient_phone TEXT NOT NULL, status TEXT NOT NULL, priority TEXT NOT NULL, priority_rank INTEGER NOT NULL, webhook_data TEXT, template_used TEXT,
  scheduled_for TEXT NOT NULL, metadata TEXT NOT NULL, seq INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
`;
if (args.get("schema") === "minimal") sqlite.exec(MINIMAL_SCHEMA);
else migrate(sqlite);
if (process.env.BENCH_PRAGMA) sqlite.exec(process.env.BENCH_PRAGMA);
const checkpointer = new Checkpointer(sqlite, dbPath, silentLogger);
await checkpointer.start();
const nForms = Number(args.get("forms") ?? 50);
const now = new Date().toISOString();
const accountId = Bun.randomUUIDv7();
sqlite.query("INSERT INTO accounts (id, name, plan, created_at) VALUES (?, 'Ceiling', 'standard', ?)").run(accountId, now);
const formIds: string[] = [];
for (let i = 0; i < nForms; i++) {
  const id = crypto.randomUUID();
  formIds.push(id);
  sqlite
    .query(
      "INSERT INTO forms (id, account_id, name, name_key, message_template, is_active, fields, settings, created_at, updated_at) VALUES (?, ?, ?, ?, 'Hi {{firstName}}', 1, '[]', '{}', ?, ?)",
    )
    .run(id, accountId, `Form ${i}`, `form ${i}`, now, now);
}

const writer = new GroupCommitWriter(sqlite, undefined, undefined, { mode: args.get("commit-sync") === "inline" ? "inline" : "background" });
const formById = sqlite.prepare("SELECT id, account_id, name, message_template, is_active FROM forms WHERE id = ?");
const contactByPhone = sqlite.prepare("SELECT id FROM contacts WHERE account_id = ? AND phone_number = ?");
const contactInsert = sqlite.prepare(
  `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields, tags, message_count, search_text, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, '', ?, ?)`,
);
const contactUpdate = sqlite.prepare("UPDATE contacts SET first_name = ?, last_name = ?, email = ?, updated_at = ? WHERE id = ?");
const messageInsert = sqlite.prepare(
  `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, status, priority, priority_rank,
     webhook_data, template_used, scheduled_for, metadata, seq, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 'normal', 2, ?, ?, ?, '{}', ?, ?, ?)`,
);
let seq = 0;

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const formId = path.split("/")[3];
    const text = await req.text();
    const body = JSON.parse(text);
    const form = formById.get(formId) as any;
    if (!form) return new Response('{"status":"error"}', { status: 404 });
    const ts = new Date().toISOString();
    const r = await writer.submit({
      run: () => {
        const existing = contactByPhone.get(form.account_id, body.phoneNumber) as any;
        let contactId: string;
        if (existing) {
          contactId = existing.id;
          contactUpdate.run(body.firstName ?? null, body.lastName ?? null, body.email ?? null, ts, contactId);
        } else {
          contactId = Bun.randomUUIDv7();
          contactInsert.run(contactId, form.account_id, body.phoneNumber, body.firstName ?? null, body.lastName ?? null, body.email ?? null, form.id, JSON.stringify({ company: body.company }), ts, ts);
        }
        const messageId = Bun.randomUUIDv7();
        messageInsert.run(messageId, form.account_id, form.id, form.name, contactId, `Hi ${body.firstName}`, body.phoneNumber, text, form.message_template, ts, ++seq, ts, ts);
        return { messageId, contactId };
      },
    });
    return new Response(JSON.stringify({ status: "success", data: r }), { headers: { "Content-Type": "application/json" } });
  },
});
console.log(`READY ${server.port} ${formIds.join(",")}`);
process.on("SIGTERM", async () => {
  if (process.env.BENCH_DEBUG) console.error("writer stats", JSON.stringify(writer.stats));
  writer.stop();
  await checkpointer.stop();
  server.stop(true);
  sqlite.close();
  process.exit(0);
});
