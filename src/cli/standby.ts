import type { ParsedArgs } from "../config";
import { createLogger } from "../lib/log";
import { OPTIONS, parseDuration } from "../config";
import { ReplicaUrlError } from "../domain/replica-url";
import { BackupError, DatabaseLockedError } from "../services/backups";
import { LitestreamMissingError, findLitestream } from "../services/litestream";
import { promoteStandby, ReplicaRestoreError, runStandby, STANDBY_EVERY_MS } from "../services/standby";
import { printReplicaRestore } from "./restore";
import { serveCommand } from "./serve";
import { dbPathOf, flagString, UsageError, type CliIO } from "./common";

export const STANDBY_HELP = `Usage: textwire standby --from-replica URL [--every 5s] [--db PATH]

A warm standby on a second machine: keeps PATH a whole, checked copy of the replica a running
server writes to (its --replicate address or the dashboard's replication setting), restoring it
again whenever the replica has something new (every --every, default ${STANDBY_EVERY_MS / 1000}s). No server may
run on PATH meanwhile. Stop it with Ctrl-C or SIGTERM; to take over, run \`textwire promote\`.`;

export const PROMOTE_HELP = `Usage: textwire promote [--db PATH] [--no-serve] [serve options…]

Turns a standby into the server: stops \`textwire standby\` on PATH (SIGTERM; it ends its round),
restores everything the replica holds one last time (integrity check and \`doctor --check\` as in
\`textwire restore --from-replica\`), then starts serving on PATH with the serve options given
(e.g. --port 8080 --replicate s3://bucket/new-folder). --no-serve stops after the restore and
prints the command to start. Make sure the old server is off first: two servers must never write
to the same replica.`;

export async function standbyCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  const db = dbPathOf(parsed, io.env, ["from-replica", "every", "log-format"]);
  const url = flagString(parsed, "from-replica");
  if (!url || parsed.positionals.length > 1) throw new UsageError("usage: textwire standby --from-replica URL [--every 5s] [--db PATH]");
  const every = flagString(parsed, "every");
  let everyMs = STANDBY_EVERY_MS;
  if (every !== undefined) {
    try {
      everyMs = parseDuration(every);
    } catch (err) {
      throw new UsageError(`--every: ${(err as Error).message}`);
    }
  }
  if (!findLitestream()) {
    io.err(`textwire standby: ${new LitestreamMissingError().message}`);
    return 1;
  }
  const format = flagString(parsed, "log-format") ?? (io.isTTY ? "pretty" : "json");
  if (format !== "json" && format !== "pretty") throw new UsageError(`--log-format: expected pretty or json, got "${format}"`);
  const logger = createLogger(format);
  let handle: ReturnType<typeof runStandby>;
  try {
    handle = runStandby(url, db, { everyMs, logger });
  } catch (err) {
    if (err instanceof ReplicaUrlError) throw new UsageError(`--from-replica: ${err.message}`);
    if (err instanceof DatabaseLockedError) {
      io.err(`textwire standby: ${err.message}`);
      return 1;
    }
    throw err;
  }
  io.out(`Standby: keeping ${db} a copy of the replica. \`textwire promote --db ${db}\` takes over.`);
  const onSignal = () => void handle.stop();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  await handle.done;
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  io.out("Standby stopped.");
  return 0;
}

export async function promoteCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  const db = dbPathOf(parsed, io.env, [...serveFlags(), "no-serve", "json"]);
  const noServe = parsed.flags.get("no-serve") === true;
  const json = parsed.flags.get("json") === true;
  if (parsed.positionals.length > 1) throw new UsageError("usage: textwire promote [--db PATH] [--no-serve] [serve options…]");
  try {
    const r = await promoteStandby(db);
    if (!json) io.out(r.standby === "stopped" ? "The standby was stopped." : "No standby was running; restoring the replica's newest state.");
    printReplicaRestore(r, json, io);
    if (!r.doctor.ok) {
      io.err("textwire promote: the derived data differs; run `textwire doctor --rebuild`, then `textwire serve`.");
      return 1;
    }
  } catch (err) {
    if (err instanceof BackupError || err instanceof DatabaseLockedError || err instanceof ReplicaRestoreError || err instanceof LitestreamMissingError) {
      io.err(`textwire promote: ${err.message}`);
      return 1;
    }
    throw err;
  }
  if (noServe) {
    if (!json) io.out(`Promoted. Start the server: textwire serve --db ${db}`);
    return 0;
  }
  const flags = new Map(parsed.flags);
  flags.delete("no-serve");
  flags.delete("json");
  return serveCommand({ positionals: ["serve"], flags, repeated: parsed.repeated }, io);
}

function serveFlags(): string[] {
  // Every serve option is accepted (and checked by serve itself).
  return OPTIONS.map((o) => o.flag);
}
