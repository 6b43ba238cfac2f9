/**
 * Runs one backup job on a Worker (src/services/backup-worker.ts) and resolves with its result.
 * A fresh Worker per job: backups are rare (a download, a daily timer), and a thread that exists
 * only while it copies holds no connection and no memory the rest of the time.
 */
import { BackupError, type BackupResult } from "./backup-result";

export type BackupJob =
  | { op: "backup"; dbPath: string; outFile: string; now: number; durable?: boolean }
  | { op: "scheduled"; dbPath: string; dir: string; keep: number; now: number };

export type BackupReply = { ok: true; backup: BackupResult; removed: string[] } | { ok: false; message: string; backupError: boolean };

/**
 * In the compiled binary (scripts/build.ts lists the worker as a second entry point) modules live
 * under /$bunfs/root/, named by their path from src/, and a Worker is found by that name; from
 * source, the file next to this one.
 */
const WORKER_ENTRY = import.meta.url.includes("/$bunfs/") ? "./services/backup-worker.ts" : new URL("./backup-worker.ts", import.meta.url).href;

export function runBackupJob(job: BackupJob): Promise<{ backup: BackupResult; removed: string[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_ENTRY);
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      worker.terminate();
      fn();
    };
    worker.onmessage = (event: MessageEvent<BackupReply>) => {
      const r = event.data;
      finish(() => (r.ok ? resolve({ backup: r.backup, removed: r.removed }) : reject(r.backupError ? new BackupError(r.message) : new Error(r.message))));
    };
    worker.onerror = (event: ErrorEvent) => finish(() => reject(new Error(`backup worker failed: ${event.message}`)));
    worker.postMessage(job);
  });
}
