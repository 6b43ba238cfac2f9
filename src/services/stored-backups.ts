/**
 * The scheduled backups in --backup-dir, newest first (GET /v1/admin/backups): what an operator
 * can restore from with `textwire restore`. Only the files the scheduler writes are listed.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SCHEDULED_RE } from "./backups";

export interface StoredBackup {
  name: string;
  /** When the file was written (its modification time). */
  createdAt: string;
  bytes: number;
}

export function listStoredBackups(dir: string): StoredBackup[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    // Not made yet: the first scheduled run creates it.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const out: StoredBackup[] = [];
  for (const name of names) {
    if (!SCHEDULED_RE.test(name)) continue;
    try {
      const st = statSync(join(dir, name));
      if (st.isFile()) out.push({ name, createdAt: st.mtime.toISOString(), bytes: st.size });
    } catch {
      // Removed by retention between the listing and the stat.
    }
  }
  return out.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : b.name.localeCompare(a.name)));
}
