/**
 * Worker entry point for backups made inside the server (the admin download and the scheduled
 * ones). `VACUUM INTO` and `integrity_check` are synchronous SQLite calls that take about a second
 * per 100 MB; here they run on their own thread with their own connection, so the webhook path
 * keeps answering. Listed as an entry point in scripts/build.ts so the compiled binary carries it.
 */
import { setPriority } from "node:os";
import { BackupError, backupDatabase, runScheduledBackup } from "./backups";
import type { BackupJob, BackupReply } from "./backup-thread";

declare const self: Worker;

// The lowest CPU priority, for this thread only (on Linux a thread's nice value is its own): on a
// small box the copy then takes the CPU the request path leaves over, not the other way round.
try {
  setPriority(19);
} catch {
  // Not permitted or not supported: the backup still runs, at normal priority.
}

self.onmessage = (event: MessageEvent<BackupJob>) => {
  const job = event.data;
  const clock = () => job.now;
  let reply: BackupReply;
  try {
    if (job.op === "backup") reply = { ok: true, backup: backupDatabase(job.dbPath, job.outFile, clock, { durable: job.durable }), removed: [] };
    else reply = { ok: true, ...runScheduledBackup(job.dbPath, job.dir, job.keep, clock) };
  } catch (err) {
    reply = { ok: false, message: (err as Error)?.message ?? String(err), backupError: err instanceof BackupError };
  }
  self.postMessage(reply);
};
