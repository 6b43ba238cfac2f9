/**
 * The newest scheduled backup in --backup-dir, for /health (and so the dashboard's Overview):
 * read from the folder itself, so it is right after a restart and whoever made the file. Named
 * `textwire-<UTC timestamp>.db` (backups.ts); the time is read from the name, not the file's
 * mtime, which a copy or restore of the folder changes.
 */
import { readdirSync } from "node:fs";

/** /health is polled by monitors: the folder is listed at most this often. */
export const LAST_BACKUP_CACHE_MS = 10_000;

const NAME = /^textwire-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})?Z\.db$/;

/** The time a scheduled backup's file name says it was made, or null for any other name. */
export function backupTimeOf(name: string): number | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], m[7] ? +m[7] : 0);
  return Number.isNaN(t) ? null : t;
}

/** The newest scheduled backup's time in `dir` (epoch ms), or null when there is none (or no folder yet). */
export function newestBackupAt(dir: string): number | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  let newest: number | null = null;
  for (const n of names) {
    const t = backupTimeOf(n);
    if (t !== null && (newest === null || t > newest)) newest = t;
  }
  return newest;
}

export interface BackupHealth {
  lastBackupAt: string | null;
  ageSeconds: number | null;
  everySeconds: number;
}

/** /health's `backup` block: cached for LAST_BACKUP_CACHE_MS. */
export function backupHealth(dir: string, everyMs: number, clock: () => number): () => BackupHealth {
  let cache: { at: number; newest: number | null } | undefined;
  return () => {
    const now = clock();
    if (!cache || now - cache.at >= LAST_BACKUP_CACHE_MS || now < cache.at) cache = { at: now, newest: newestBackupAt(dir) };
    const newest = cache.newest;
    return {
      lastBackupAt: newest === null ? null : new Date(newest).toISOString(),
      ageSeconds: newest === null ? null : Math.max(0, Math.floor((now - newest) / 1000)),
      everySeconds: Math.round(everyMs / 1000),
    };
  };
}
