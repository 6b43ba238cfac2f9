import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { EMBEDDED_MIGRATIONS } from "./migrations.gen";

export interface Migration {
  idx: number;
  tag: string;
  sql: string;
}

export class SchemaTooNewError extends Error {
  constructor(readonly dbVersion: number, readonly appVersion: number) {
    super(
      `This database was written by a newer Textwire (schema version ${dbVersion}; this build knows ${appVersion}). ` +
        `Nothing was changed. Run the newer version, or restore a backup made by this one.`,
    );
  }
}

const LEDGER = "schema_migrations";
const FK_OFF = /^\s*PRAGMA\s+foreign_keys\s*=\s*(OFF|ON)\s*;?\s*$/i;

/** The schema version this build writes: the number of embedded migrations. */
export const SCHEMA_VERSION = EMBEDDED_MIGRATIONS.length;

export function schemaVersion(sqlite: Database): number {
  const row = sqlite.query("PRAGMA user_version").get() as { user_version: number };
  return row.user_version;
}

/**
 * Applies every pending migration in ONE transaction: a failure leaves the database as it was.
 * drizzle-kit's table rebuilds say `PRAGMA foreign_keys=OFF`, which SQLite ignores inside a
 * transaction — so a rebuild could cascade-delete child rows. We switch foreign keys off before
 * the transaction instead, drop those lines, and run `PRAGMA foreign_key_check` before commit.
 */
/** One pending migration applied (still inside the upgrade's transaction), for progress lines. */
export interface MigrationStep {
  tag: string;
  /** 1-based position among the pending migrations, and their number. */
  step: number;
  steps: number;
  ms: number;
}

export interface MigrateOptions {
  /** Called before the first pending migration (with their number) and after each one. */
  onStart?: (pending: { from: number; to: number; steps: number }) => void;
  onStep?: (step: MigrationStep) => void;
}

export function migrate(sqlite: Database, migrations: Migration[] = EMBEDDED_MIGRATIONS, opts: MigrateOptions = {}): { applied: string[]; version: number } {
  const current = schemaVersion(sqlite);
  if (current > migrations.length) throw new SchemaTooNewError(current, migrations.length);
  sqlite.exec(`CREATE TABLE IF NOT EXISTS ${LEDGER} (idx INTEGER PRIMARY KEY, tag TEXT NOT NULL, hash TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const known = new Set((sqlite.query(`SELECT tag FROM ${LEDGER}`).all() as Array<{ tag: string }>).map((r) => r.tag));
  const ours = new Set(migrations.map((m) => m.tag));
  for (const tag of known) if (!ours.has(tag)) throw new SchemaTooNewError(Math.max(current, known.size), migrations.length);

  const pending = migrations.filter((m) => !known.has(m.tag));
  if (pending.length === 0) {
    if (current !== migrations.length) sqlite.exec(`PRAGMA user_version = ${migrations.length}`);
    return { applied: [], version: migrations.length };
  }
  opts.onStart?.({ from: current, to: migrations.length, steps: pending.length });
  sqlite.exec("PRAGMA foreign_keys = OFF");
  try {
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      const record = sqlite.prepare(`INSERT INTO ${LEDGER} (idx, tag, hash, applied_at) VALUES (?, ?, ?, ?)`);
      for (const [i, m] of pending.entries()) {
        const t0 = performance.now();
        for (const stmt of m.sql.split("--> statement-breakpoint")) {
          const body = stmt
            .split("\n")
            .filter((line) => !FK_OFF.test(line))
            .join("\n")
            .trim();
          if (body) sqlite.exec(body);
        }
        record.run(m.idx, m.tag, createHash("sha256").update(m.sql).digest("hex"), new Date().toISOString());
        opts.onStep?.({ tag: m.tag, step: i + 1, steps: pending.length, ms: performance.now() - t0 });
      }
      const violations = sqlite.query("PRAGMA foreign_key_check").all();
      if (violations.length > 0) {
        throw new Error(`migration would break ${violations.length} foreign key reference(s); rolled back`);
      }
      sqlite.exec(`PRAGMA user_version = ${migrations.length}`);
      sqlite.exec("COMMIT");
    } catch (err) {
      sqlite.exec("ROLLBACK");
      throw err;
    }
  } finally {
    sqlite.exec("PRAGMA foreign_keys = ON");
  }
  return { applied: pending.map((m) => m.tag), version: migrations.length };
}
