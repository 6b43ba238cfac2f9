import type { ParsedArgs } from "../config";
import { openSqlite } from "../db/open";
import { migrate } from "../db/migrate";
import { copyBeforeUpgrade } from "../db/upgrade-copy";
import { PageSizeBusyError, rewritePageSize } from "../db/page-size";
import { dbPathOf, type CliIO } from "./common";

export const MIGRATE_HELP = `Usage: textwire migrate [--json] [--db PATH]

Applies pending schema migrations (in one transaction) and exits. An existing database is first
copied to <db folder>/upgrade-backups/<name>.schema-<version>.db (the newest 3 are kept), as serve does.
A database made before 1 KiB pages is then rewritten with them, once (a full copy of the file: run it
with the server stopped; a kill mid-way leaves the file as it was).`;

export function migrateCommand(parsed: ParsedArgs, io: CliIO): number {
  const path = dbPathOf(parsed, io.env, ["json"]);
  const sqlite = openSqlite(path);
  try {
    const json = parsed.flags.get("json") === true;
    const r = migrate(sqlite, undefined, {
      onStart: (p) => {
        const copy = copyBeforeUpgrade(sqlite, path, p.from);
        if (copy && !json) io.out(`Copied the database (schema ${p.from}) to ${copy} first.`);
      },
      onStep: (s) => {
        if (!json) io.out(`  ${s.step} of ${s.steps}: ${s.tag} (${(s.ms / 1000).toFixed(1)} s)`);
      },
    });
    if (!json) io.out(r.applied.length ? `Applied ${r.applied.length} migration(s): ${r.applied.join(", ")}. Schema version ${r.version}.` : `Up to date. Schema version ${r.version}.`);
    // Closed for good (its statements finalized): the rewrite needs the file to itself.
    sqlite.close(true);
    let pageSizeFrom: number | null;
    try {
      pageSizeFrom = rewritePageSize(path, (line) => (json ? undefined : io.out(line)));
    } catch (err) {
      if (!(err instanceof PageSizeBusyError)) throw err;
      io.err(`The page size was left as it was: ${err.message}.`);
      return 1;
    }
    if (json) io.out(JSON.stringify({ applied: r.applied, schemaVersion: r.version, pageSizeFrom }));
    return 0;
  } finally {
    sqlite.close();
  }
}
