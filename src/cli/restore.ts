import type { ParsedArgs } from "../config";
import { BackupError, DatabaseLockedError, restoreDatabase } from "../services/backups";
import { ReplicaUrlError } from "../domain/replica-url";
import { LitestreamMissingError } from "../services/litestream";
import { ReplicaRestoreError, restoreFromReplica, type ReplicaRestoreResult } from "../services/standby";
import { dbPathOf, flagString, UsageError, type CliIO } from "./common";

export const RESTORE_HELP = `Usage: textwire restore IN_FILE [--json] [--db PATH]
       textwire restore --from-replica URL [--timestamp ISO] [--json] [--db PATH]

Checks IN_FILE (PRAGMA integrity_check; a Textwire schema no newer than this build's) and puts a
clean copy of it in place of the database. Refuses while a server holds the database (stop it
first). The replaced file is kept next to it as <db>.bak-<timestamp> (with its -wal/-shm, if any).
Older schemas are migrated the next time the server starts.

--from-replica URL takes the database from a continuous replica instead (what \`serve --replicate\`
or the dashboard's replication setting writes to): file:///folder, sftp://user@host/folder or
s3://bucket/folder?endpoint=… (S3 keys from LITESTREAM_ACCESS_KEY_ID/LITESTREAM_SECRET_ACCESS_KEY
or AWS_*). The newest state, or with --timestamp the state as of that moment (e.g.
2026-11-26T09:30:00Z; as far back as the replica keeps, 3 days). Then the same checks as above, and
\`textwire doctor --check\`: exit 1 if the derived data differs (run \`textwire doctor --rebuild\`).`;

export async function restoreCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  const db = dbPathOf(parsed, io.env, ["json", "from-replica", "timestamp"]);
  const json = parsed.flags.get("json") === true;
  const fromReplica = flagString(parsed, "from-replica");
  if (fromReplica !== undefined) {
    if (parsed.positionals.length > 1) throw new UsageError("usage: textwire restore --from-replica URL [--timestamp ISO] [--db PATH] (no IN_FILE with --from-replica)");
    return restoreReplicaCommand(fromReplica, db, flagString(parsed, "timestamp"), json, io);
  }
  if (parsed.flags.has("timestamp")) throw new UsageError("--timestamp goes with --from-replica");
  const input = parsed.positionals[1];
  if (!input || parsed.positionals.length > 2) throw new UsageError("usage: textwire restore IN_FILE [--db PATH]");
  try {
    const r = restoreDatabase(input, db);
    if (json) io.out(JSON.stringify(r));
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

/** An ISO 8601 moment with a time zone, as Litestream's -timestamp wants it (UTC). */
export function parseTimestamp(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text) || Number.isNaN(Date.parse(text))) {
    throw new UsageError(`--timestamp: expected a moment with its time zone, e.g. 2026-11-26T09:30:00Z (got "${text}")`);
  }
  return new Date(Date.parse(text)).toISOString();
}

export async function restoreReplicaCommand(url: string, db: string, timestampText: string | undefined, json: boolean, io: CliIO, verb = "restore"): Promise<number> {
  const timestamp = parseTimestamp(timestampText);
  try {
    const r = await restoreFromReplica(url, db, { timestamp });
    printReplicaRestore(r, json, io);
    return r.doctor.ok ? 0 : 1;
  } catch (err) {
    if (err instanceof ReplicaUrlError) throw new UsageError(`--from-replica: ${err.message}`);
    if (err instanceof BackupError || err instanceof DatabaseLockedError || err instanceof ReplicaRestoreError || err instanceof LitestreamMissingError) {
      io.err(`textwire ${verb}: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

export function printReplicaRestore(r: ReplicaRestoreResult, json: boolean, io: CliIO) {
  if (json) return io.out(JSON.stringify(r));
  io.out(`Restored the replica ${r.replica} (${r.asOf === "latest" ? "its newest state" : `as of ${r.asOf}`}) → ${r.restored} (schema version ${r.schemaVersion}; ${Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(", ")})`);
  io.out(r.previous ? `The replaced database is kept as ${r.previous}` : "There was no database there before.");
  if (r.doctor.ok) io.out("Derived data (analytics, counts, search) checked: all of it matches.");
  else {
    io.out("Derived data differs from a recomputation:");
    for (const d of r.doctor.differences) io.out(`  ${d.structure}: ${d.detail}`);
    io.out("Run `textwire doctor --rebuild` before starting the server.");
  }
}
