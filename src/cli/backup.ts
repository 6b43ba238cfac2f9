import type { ParsedArgs } from "../config";
import { BackupError, backupDatabase } from "../services/backups";
import { dbPathOf, UsageError, type CliIO } from "./common";

export const BACKUP_HELP = `Usage: textwire backup OUT_FILE [--json] [--db PATH]

Makes a consistent copy of the database (safe while \`textwire serve\` runs and takes writes:
SQLite's VACUUM INTO on its own connection), checks the copy with PRAGMA integrity_check and
prints its size, the row count of each main table and the time taken. OUT_FILE must not exist.
--json prints {"file","bytes","integrity","schemaVersion","rows","durationMs"} on one line.`;

export const formatBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : n < 1024 ** 3 ? `${(n / 1024 ** 2).toFixed(1)} MiB` : `${(n / 1024 ** 3).toFixed(2)} GiB`;

export function backupCommand(parsed: ParsedArgs, io: CliIO): number {
  const db = dbPathOf(parsed, io.env, ["json"]);
  const out = parsed.positionals[1];
  if (!out || parsed.positionals.length > 2) throw new UsageError("usage: textwire backup OUT_FILE [--db PATH]");
  try {
    const r = backupDatabase(db, out);
    if (parsed.flags.get("json") === true) io.out(JSON.stringify(r));
    else {
      io.out(`Backup written to ${r.file}`);
      io.out(`  size:       ${formatBytes(r.bytes)} (${r.bytes} bytes)`);
      io.out(`  integrity:  ${r.integrity}`);
      io.out(`  schema:     version ${r.schemaVersion}`);
      io.out(`  rows:       ${Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(", ")}`);
      io.out(`  time:       ${r.durationMs} ms`);
    }
    return 0;
  } catch (err) {
    if (err instanceof BackupError) {
      io.err(`textwire backup: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
