import { existsSync } from "node:fs";
import type { ParsedArgs } from "../config";
import { openSqlite } from "../db/open";
import { eventsAfter, lastEventSeq } from "../db/stores/events";
import { hasTable } from "../db/database-info";
import { dbPathOf, flagInt, flagString, UsageError, type CliIO } from "./common";

export const EVENTS_HELP = `Usage: textwire events tail [--account ID] [--type TYPE] [--json] [--db PATH]

Prints outbound events as they happen (for debugging a receiver), by reading the database of a
running server: one line per event with its time, type, id and account, then its data. Starts
at the newest event and waits for more until Ctrl-C. Only events some endpoint subscribes to
are stored, so add an endpoint first (events ["*"] to see them all).
  --account ID   only this account's events
  --type TYPE    only this type (e.g. message.sent)
  --json         print each event's body exactly as it is sent, one JSON object per line`;

/** How often the database is read for new events. */
export const TAIL_POLL_MS = 250;

export async function eventsCommand(parsed: ParsedArgs, io: CliIO, opts: { signal?: AbortSignal } = {}): Promise<number> {
  const db = dbPathOf(parsed, io.env, ["json", "account", "type", "poll-ms"]);
  const sub = parsed.positionals[1];
  if (sub !== "tail" || parsed.positionals.length > 2) throw new UsageError("usage: textwire events tail [--account ID] [--type TYPE] [--json] [--db PATH]");
  const account = flagString(parsed, "account");
  const type = flagString(parsed, "type");
  const pollMs = flagInt(parsed, "poll-ms") ?? TAIL_POLL_MS;
  const json = parsed.flags.get("json") === true;
  if (db !== ":memory:" && !existsSync(db)) {
    io.err(`textwire events: no database at ${db} (give --db, or start the server first)`);
    return 1;
  }
  const sqlite = openSqlite(db, { readonly: true });
  try {
    if (!hasTable(sqlite, "events")) {
      io.err("textwire events: this database has no events yet (start the server once so it migrates)");
      return 1;
    }
    let after = lastEventSeq(sqlite);
    io.err(`Waiting for events${account ? ` of account ${account}` : ""}${type ? ` of type ${type}` : ""} (Ctrl-C to stop)…`);
    let stop = false;
    const onSignal = () => (stop = true);
    process.once("SIGINT", onSignal);
    opts.signal?.addEventListener("abort", onSignal);
    try {
      while (!stop) {
        for (const e of eventsAfter(sqlite, after, 500)) {
          after = e.seq;
          if (account && e.account_id !== account) continue;
          if (type && e.type !== type) continue;
          if (json) io.out(e.payload);
          else {
            io.out(`${e.created_at}  ${e.type.padEnd(18)} ${e.id}  account ${e.account_id}\n  ${JSON.stringify(e.data)}`);
          }
        }
        await Bun.sleep(pollMs);
      }
    } finally {
      process.off("SIGINT", onSignal);
    }
    return 0;
  } finally {
    sqlite.close();
  }
}
