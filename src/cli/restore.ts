import type { ParsedArgs } from "../config";
import { BackupError, DatabaseLockedError, restoreDatabase } from "../services/backups";
import { dbPathOf, UsageError, type CliIO } from "./common";

export const RESTORE_HELP = `Usage: textwire restore IN_FILE [--json] [--db PATH]

Checks IN_FILE (PRAGMA integrity_check; a Textwire schema no newer than this build's) and puts a
clean copy of it in place of the database. Refuses while a server holds the database (stop it
first). The replaced file is kept next to it as <db>.bak-<timestamp> (with its -wal/-shm, if any).
Older schemas are migrated the next time the server starts.`;

export function restoreCommand(parsed: ParsedArgs, io: CliIO): number {
  const db = dbPathOf(parsed, io.env, ["json"]);
  const input = parsed.positionals[1];
  if (!input || parsed.positionals.length > 2) throw new UsageError("usage: textwire restore IN_FILE [--db PATH]");
  try {
    const r = restoreDatabase(input, db);
    if (parsed.flags.get("json") === true) io.out(JSON.stringify(r));
    else {
      io.out(`Restored ${r.from} → ${r.restored} (schema version ${r.schemaVersion}; ${Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(", ")})`);
      io.out(r.previous ? `The replaced database is kept as ${r.previous}` : "There was no database there before.");
    }
    return 0;
  } catch (err) {
    if (err instanceof BackupError || err instanceof DatabaseLockedError) {
      io.err(`textwire restore: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
