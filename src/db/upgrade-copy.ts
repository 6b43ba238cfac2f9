/**
 * A copy of the database before any migration (docs/operations.md, "Upgrading"): an upgrade that
 * goes wrong, or a new version that must be rolled back, starts again from the file as the old
 * version left it. `<db folder>/upgrade-backups/<db name>.schema-<version>.db`, made with
 * `VACUUM INTO` (consistent while the WAL holds unapplied pages), the newest few kept.
 */
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** Copies kept; older ones are removed when a new one is made. */
export const UPGRADE_COPIES_KEPT = 3;

export class UpgradeCopyError extends Error {}

export function upgradeCopyDir(dbPath: string): string {
  return join(dirname(resolve(dbPath)), "upgrade-backups");
}

/**
 * Copies the database as it is at schema `fromVersion`, before a migration runs; null for a new
 * (empty) database or one in memory. The copy of a version already made is kept as it was (a second
 * attempt must not replace the file the old version left with a half-way one).
 */
export function copyBeforeUpgrade(sqlite: Database, dbPath: string, fromVersion: number): string | null {
  if (dbPath === ":memory:" || fromVersion === 0) return null;
  const dir = upgradeCopyDir(dbPath);
  const name = `${basename(dbPath)}.schema-${fromVersion}.db`;
  const path = join(dir, name);
  if (!existsSync(path)) {
    const tmp = `${path}.partial`;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      rmSync(tmp, { force: true });
      sqlite.query("VACUUM INTO ?1").run(tmp);
      renameSync(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw new UpgradeCopyError(
        `Before upgrading, Textwire copies the database to ${dir}, and that failed (${(err as Error).message}). Nothing was changed. ` +
          "Free some disk space (the copy is as big as the database), then start again.",
      );
    }
  }
  prune(dir, basename(dbPath));
  return path;
}

function prune(dir: string, dbName: string) {
  const re = new RegExp(`^${dbName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.schema-(\\d+)\\.db$`);
  const copies = readdirSync(dir)
    .map((f) => ({ f, v: Number(re.exec(f)?.[1] ?? NaN) }))
    .filter((c) => Number.isFinite(c.v))
    .sort((a, b) => b.v - a.v);
  for (const c of copies.slice(UPGRADE_COPIES_KEPT)) rmSync(join(dir, c.f), { force: true });
}
