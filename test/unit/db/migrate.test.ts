import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { recordMessageInsert } from "../../../src/db/derived-counts";
import { checkDerived, rebuildDerived } from "../../../src/services/doctor";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "../../../src/db/open";
import { migrate, schemaVersion, SchemaTooNewError, SCHEMA_VERSION, type Migration } from "../../../src/db/migrate";
import { EMBEDDED_MIGRATIONS } from "../../../src/db/migrations.gen";
import { tempDir } from "../../helpers/server";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function dbPath() {
  const d = tempDir();
  dirs.push(d);
  return join(d, "t.db");
}

/** Fills a migrated database with accounts, forms, contacts, messages. */
function fill(sqlite: Database, contacts = 200) {
  const now = new Date().toISOString();
  sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', ?)", [now]);
  sqlite.run(
    "INSERT INTO forms (id, account_id, name, name_key, message_template, fields, created_at, updated_at) VALUES ('f1', 'a1', 'F', 'f', 'hi', '[]', ?, ?)",
    [now, now],
  );
  const c = sqlite.prepare("INSERT INTO contacts (id, account_id, phone_number, form_id, created_at, updated_at) VALUES (?, 'a1', ?, 'f1', ?, ?)");
  const m = sqlite.prepare(
    "INSERT INTO messages (id, account_id, form_id, contact_id, content, recipient_phone, scheduled_for, seq, created_at, updated_at) VALUES (?, 'a1', 'f1', ?, 'x', ?, ?, ?, ?, ?)",
  );
  sqlite.transaction(() => {
    for (let i = 0; i < contacts; i++) {
      const phone = `+1201555${String(i).padStart(4, "0")}`;
      c.run(`c${i}`, phone, now, now);
      for (let j = 0; j < 3; j++) m.run(`m${i}-${j}`, `c${i}`, phone, now, i * 3 + j, now, now);
    }
  })();
}

const counts = (sqlite: Database) =>
  Object.fromEntries(["accounts", "forms", "contacts", "messages"].map((t) => [t, (sqlite.query(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n]));

/** What drizzle-kit writes for a column change SQLite cannot ALTER: a full table rebuild. */
function rebuildContacts(sqlite: Database): Migration {
  const create = (sqlite.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'contacts'").get() as { sql: string }).sql;
  return {
    idx: 999,
    tag: "9999_rebuild_contacts",
    sql: [
      "PRAGMA foreign_keys=OFF;",
      create.replace(/CREATE TABLE [`"]?contacts[`"]?/, "CREATE TABLE `__new_contacts`") + ";",
      "INSERT INTO `__new_contacts` SELECT * FROM `contacts`;",
      "DROP TABLE `contacts`;",
      "ALTER TABLE `__new_contacts` RENAME TO `contacts`;",
      "CREATE UNIQUE INDEX `contacts_account_phone_idx` ON `contacts` (`account_id`,`phone_number`);",
      "PRAGMA foreign_keys=ON;",
    ].join("--> statement-breakpoint\n"),
  };
}

describe("migrate", () => {
  test("an empty database reaches the current schema version with WAL and foreign keys on", () => {
    const sqlite = openSqlite(dbPath());
    const r = migrate(sqlite);
    expect(r.applied.length).toBe(EMBEDDED_MIGRATIONS.length);
    expect(schemaVersion(sqlite)).toBe(SCHEMA_VERSION);
    expect((sqlite.query("PRAGMA journal_mode").get() as any).journal_mode).toBe("wal");
    expect((sqlite.query("PRAGMA foreign_keys").get() as any).foreign_keys).toBe(1);
    expect((sqlite.query("PRAGMA synchronous").get() as any).synchronous).toBe(2); // FULL
    expect((sqlite.query("PRAGMA busy_timeout").get() as any).timeout).toBeGreaterThan(0);
    expect(migrate(sqlite).applied).toEqual([]);
    sqlite.close();
  });

  test("a table-rebuild migration on a database full of rows cascade-deletes nothing", () => {
    const sqlite = openSqlite(dbPath());
    migrate(sqlite);
    fill(sqlite);
    const before = counts(sqlite);
    expect(before.messages).toBe(600);
    const r = migrate(sqlite, [...EMBEDDED_MIGRATIONS, rebuildContacts(sqlite)]);
    expect(r.applied).toEqual(["9999_rebuild_contacts"]);
    expect(counts(sqlite)).toEqual(before);
    expect((sqlite.query("PRAGMA foreign_keys").get() as any).foreign_keys).toBe(1);
    sqlite.close();
  });

  test("a migration that would leave dangling references is rolled back", () => {
    const sqlite = openSqlite(dbPath());
    migrate(sqlite);
    fill(sqlite, 5);
    const before = counts(sqlite);
    const dangling: Migration = { idx: 999, tag: "9999_dangling", sql: "PRAGMA foreign_keys=OFF;--> statement-breakpoint\nDELETE FROM contacts WHERE id = 'c1';" };
    expect(() => migrate(sqlite, [...EMBEDDED_MIGRATIONS, dangling])).toThrow(/foreign key/);
    expect(counts(sqlite)).toEqual(before);
    sqlite.close();
  });

  test("a database from a newer schema is refused and left byte-for-byte untouched", () => {
    const path = dbPath();
    const sqlite = openSqlite(path);
    migrate(sqlite);
    sqlite.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite.close();
    const bytes = readFileSync(path);
    const again = openSqlite(path);
    expect(() => migrate(again)).toThrow(SchemaTooNewError);
    again.close();
    expect(Buffer.compare(readFileSync(path), bytes)).toBe(0);
  });

  test("a database with a migration this build does not know is refused", () => {
    const sqlite = openSqlite(dbPath());
    migrate(sqlite);
    sqlite.run("INSERT INTO schema_migrations (idx, tag, hash, applied_at) VALUES (50, '0050_future', 'x', 'now')");
    expect(() => migrate(sqlite)).toThrow(SchemaTooNewError);
    sqlite.close();
  });

  test("an upgrade reports its start and each step (what the server logs and `textwire migrate` prints); an up-to-date database reports nothing", () => {
    const sqlite = openSqlite(dbPath());
    const older = EMBEDDED_MIGRATIONS.slice(0, SCHEMA_VERSION - 3);
    migrate(sqlite, older);
    const seen: string[] = [];
    const opts = {
      onStart: (p: { from: number; to: number; steps: number }) => seen.push(`start ${p.from}->${p.to} (${p.steps})`),
      onStep: (s: { tag: string; step: number; steps: number; ms: number }) => {
        expect(s.ms).toBeGreaterThanOrEqual(0);
        seen.push(`${s.step}/${s.steps} ${s.tag}`);
      },
    };
    migrate(sqlite, EMBEDDED_MIGRATIONS, opts);
    const last3 = EMBEDDED_MIGRATIONS.slice(-3).map((m) => m.tag);
    expect(seen).toEqual([`start ${SCHEMA_VERSION - 3}->${SCHEMA_VERSION} (3)`, `1/3 ${last3[0]}`, `2/3 ${last3[1]}`, `3/3 ${last3[2]}`]);
    seen.length = 0;
    migrate(sqlite, EMBEDDED_MIGRATIONS, opts);
    expect(seen).toEqual([]);
    sqlite.close();
  });

  test("the server says it is upgrading an existing database, step by step; a new database is created without such lines", async () => {
    const { startTestServer } = await import("../../helpers/server");
    const lines = (): { logger: any; out: string[] } => {
      const out: string[] = [];
      const log = (msg: string, fields?: Record<string, unknown>) => out.push(`${msg} ${JSON.stringify(fields ?? {})}`);
      return { logger: { info: log, warn: log, error: log }, out };
    };
    const fresh = lines();
    const a = await startTestServer({}, { logger: fresh.logger });
    await a.stop();
    expect(fresh.out.filter((l) => l.includes("upgrad"))).toEqual([]);
    const path = dbPath();
    const old = openSqlite(path);
    migrate(old, EMBEDDED_MIGRATIONS.slice(0, SCHEMA_VERSION - 2));
    old.close();
    const up = lines();
    const b = await startTestServer({ db: path }, { logger: up.logger });
    await b.stop();
    // First a copy of the file as it was (src/db/upgrade-copy.ts), then the steps.
    expect(up.out[0]).toStartWith("copied the database before upgrading it");
    const said = up.out.filter((l) => l.includes("upgrad") && !l.startsWith("copied the database"));
    expect(said[0]).toContain("upgrading the database; leave the server running");
    expect(said[0]).toContain(`"toSchema":${SCHEMA_VERSION}`);
    expect(said.slice(1).map((l) => JSON.parse(l.slice(l.indexOf("{"))).step)).toEqual(["1 of 2", "2 of 2"]);
  });
});

describe("0004 monthly_usage", () => {
  test("is filled from the messages already there, then kept by the writers' recorded inserts (0015), never decreased", () => {
    const sqlite = openSqlite(dbPath());
    const before = EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0004");
    migrate(sqlite, before);
    fill(sqlite, 10); // 30 messages created now
    migrate(sqlite);
    const month = new Date().toISOString().slice(0, 7);
    const usage = () => (sqlite.query("SELECT n FROM monthly_usage WHERE account_id = 'a1' AND month = ?").get(month) as { n: number }).n;
    expect(usage()).toBe(30);
    const now = new Date().toISOString();
    sqlite.run(
      "INSERT INTO messages (id, account_id, content, recipient_phone, scheduled_for, seq, created_at, updated_at) VALUES ('extra', 'a1', 'x', '+12015550100', ?, 999, ?, ?)",
      [now, now, now],
    );
    recordMessageInsert(sqlite, { accountId: "a1", formId: null, contactId: null, status: "queued", priorityRank: 2, createdAt: now, sentAt: null, failureReason: null });
    sqlite.run("DELETE FROM messages WHERE id IN ('extra', 'm0-0')");
    expect(usage()).toBe(31);
    sqlite.close();
  });
});

describe("0010 opt-outs, consent and conversations", () => {
  test("existing contacts get a consent record and a conversation row; submissions may lack a message", () => {
    const sqlite = openSqlite(dbPath());
    // 0035 indexes the conversations table that 0010 makes: it comes with it.
    const later = ["0010_opt_outs_consent_conversations", "0035_page_counts"];
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => !later.includes(m.tag)));
    fill(sqlite, 5);
    sqlite.run("INSERT INTO contacts (id, account_id, phone_number, created_at, updated_at) VALUES ('lonely', 'a1', '+12015559999', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
    sqlite.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES ('s1', 'a1', 'f1', 'c0', 'm0-0', 1, '2026-01-01T00:00:00.000Z')");
    const { applied } = migrate(sqlite);
    expect(applied).toEqual(later);
    const c0 = sqlite.query("SELECT consent, opted_out, created_at FROM contacts WHERE id = 'c0'").get() as any;
    expect(JSON.parse(c0.consent)).toEqual({ source: "webhook", formId: "f1", at: c0.created_at });
    expect(c0.opted_out).toBe(0);
    expect(JSON.parse((sqlite.query("SELECT consent FROM contacts WHERE id = 'lonely'").get() as any).consent)).toEqual({ source: "api", at: "2026-01-01T00:00:00.000Z" });
    expect((sqlite.query("SELECT count(*) AS n FROM conversations").get() as any).n).toBe(5);
    expect(sqlite.query("SELECT message_id FROM submissions WHERE id = 's1'").get()).toEqual({ message_id: "m0-0" });
    sqlite.run("INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES ('s2', 'a1', 'f1', 'c0', NULL, 0, '2026-01-01T00:00:00.000Z')");
    // The triggers keep conversations from here on.
    sqlite.run(
      "INSERT INTO messages (id, account_id, contact_id, content, recipient_phone, scheduled_for, seq, created_at, updated_at) VALUES ('later', 'a1', 'lonely', 'x', '+12015559999', '2030-01-01T00:00:00.000Z', 999, '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z')",
    );
    expect(sqlite.query("SELECT last_message_at, unread_count FROM conversations WHERE contact_id = 'lonely'").get()).toEqual({ last_message_at: "2030-01-01T00:00:00.000Z", unread_count: 0 });
    sqlite.close();
  });
});

describe("0005 operator keys and the latest lease", () => {
  test("the oldest account's live admin keys become operator keys; a tenant's do not; held lease tokens are kept as the latest", () => {
    const sqlite = openSqlite(dbPath());
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0005"));
    fill(sqlite, 1);
    const later = new Date(Date.now() + 1000).toISOString();
    sqlite.run("INSERT INTO accounts (id, name, created_at) VALUES ('a2', 'Tenant', ?)", [later]);
    const key = sqlite.prepare("INSERT INTO api_keys (id, account_id, key_hash, last4, permission, created_at, revoked_at) VALUES (?, ?, ?, 'abcd', ?, ?, ?)");
    key.run("k-admin", "a1", "h1", "admin_access", later, null);
    key.run("k-std", "a1", "h2", "standard_access", later, null);
    key.run("k-revoked", "a1", "h3", "admin_access", later, later);
    key.run("k-tenant", "a2", "h4", "admin_access", later, null);
    sqlite.run("UPDATE messages SET lease_token = 'tok-1', lease_expires_at = ? WHERE id = 'm0-0'", [later]);
    migrate(sqlite);
    const op = Object.fromEntries((sqlite.query("SELECT id, operator FROM api_keys").all() as Array<{ id: string; operator: number }>).map((r) => [r.id, r.operator]));
    expect(op).toEqual({ "k-admin": 1, "k-std": 0, "k-revoked": 0, "k-tenant": 0 });
    const lease = (id: string) => (sqlite.query("SELECT last_lease_token AS t FROM messages WHERE id = ?").get(id) as { t: string | null }).t;
    expect(lease("m0-0")).toBe("tok-1");
    expect(lease("m0-1")).toBeNull();
    sqlite.close();
  });
});

describe("0015 message rollups", () => {
  test("existing messages are rolled up once; the wide analytics indexes and the insert triggers are gone", () => {
    const sqlite = openSqlite(dbPath());
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0015"));
    fill(sqlite, 20);
    sqlite.run("UPDATE messages SET status = 'sent', sent_at = strftime('%Y-%m-%dT%H:%M:%fZ', julianday(created_at) + 0.001) WHERE rowid % 3 = 0");
    sqlite.run("UPDATE messages SET status = 'failed', failure_reason = 'rate-limit' WHERE rowid % 3 = 1");
    const { applied } = migrate(sqlite);
    expect(applied).toContain("0015_message_rollups");
    expect(checkDerived(sqlite).differences).toEqual([]);
    const total = sqlite.query("SELECT SUM(queued + sent + failed + cancelled) AS n FROM message_rollups WHERE account_id = 'a1' AND form_id = '*' AND level = 0 AND reason = ''").get();
    expect(total).toEqual({ n: 60 });
    const names = (type: string) => (sqlite.query("SELECT name FROM sqlite_master WHERE type = ?").all(type) as Array<{ name: string }>).map((r) => r.name);
    expect(names("index")).not.toContain("messages_account_status_created_sent_idx");
    expect(names("index")).not.toContain("messages_form_status_created_idx");
    expect(names("trigger")).not.toContain("messages_count_insert");
    expect(names("trigger")).not.toContain("messages_usage_insert");
    sqlite.close();
  });
});

describe("0021 reason rows on their own levels", () => {
  test("existing reason rows move to levels 3-5; the recreated triggers and the rebuild write them there", () => {
    const sqlite = openSqlite(dbPath());
    // fill's raw inserts record no counts: 0015 builds the rollups from them (today's rebuild
    // writes 0022's columns, which this schema has not got yet); nothing has failed, so no reason rows.
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0015"));
    fill(sqlite, 20);
    migrate(sqlite, EMBEDDED_MIGRATIONS.filter((m) => m.tag < "0021"));
    sqlite.run("UPDATE messages SET status = 'failed', failure_reason = 'rate-limit' WHERE rowid % 3 = 1");
    const reasonLevels = () => (sqlite.query("SELECT DISTINCT level FROM message_rollups WHERE reason <> '' ORDER BY level").values() as number[][]).map((r) => r[0]);
    expect(reasonLevels()).toEqual([0, 1, 2]);
    const { applied } = migrate(sqlite);
    expect(applied).toContain("0021_rollup_reason_levels");
    expect(reasonLevels()).toEqual([3, 4, 5]);
    expect(checkDerived(sqlite).differences).toEqual([]);
    // Status changes, a re-keyed message and deletes after the upgrade go through the new triggers.
    sqlite.run("UPDATE messages SET failure_reason = 'carrier' WHERE status = 'failed' AND rowid % 2 = 0");
    sqlite.run("UPDATE messages SET status = 'failed', failure_reason = NULL WHERE status = 'queued' AND rowid % 5 = 0");
    sqlite.run("UPDATE messages SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', julianday(created_at) - 1.3) WHERE rowid % 7 = 0");
    sqlite.run("DELETE FROM messages WHERE rowid % 4 = 0");
    expect(reasonLevels()).toEqual([3, 4, 5]);
    expect(checkDerived(sqlite).differences).toEqual([]);
    const failed = sqlite.query("SELECT COUNT(*) AS n FROM messages WHERE status = 'failed'").get() as { n: number };
    const byReason = sqlite.query("SELECT SUM(failed) AS n FROM message_rollups WHERE account_id = 'a1' AND form_id = '*' AND level = 3").get() as { n: number };
    expect(failed.n).toBeGreaterThan(0);
    expect(byReason.n).toBe(failed.n);
    sqlite.close();
  });
});
