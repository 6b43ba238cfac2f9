import type { ParsedArgs } from "../config";
import { checkDerived, rebuildDerived, SHOWN_MAX } from "../services/doctor";
import { dbPathOf, UsageError, withDb, type CliIO } from "./common";

export const DOCTOR_HELP = `Usage: textwire doctor --check|--rebuild [--json] [--db PATH]

Derived data — the analytics rollups, the per-status message counts, the monthly usage behind
the quota, the contact search index — is kept up to date as messages are written; the webhook's
intake is emptied as it is applied. This command compares them with a recomputation from the
messages and contacts themselves (submissions still waiting in the intake are not a difference).

  --check    Print every difference (at most ${SHOWN_MAX} per structure) and exit 1 when there is any,
             0 when all match. Safe while the server runs.
  --rebuild  Recompute everything from scratch, printing progress. Writes wait meanwhile
             (seconds for a million messages); safe while the server runs.
--json prints {"ok","counts","differences"} (check) or {"durationMs"} (rebuild) on one line.`;

export function doctorCommand(parsed: ParsedArgs, io: CliIO): number {
  const path = dbPathOf(parsed, io.env, ["json", "check", "rebuild"]);
  const check = parsed.flags.get("check") === true;
  const rebuild = parsed.flags.get("rebuild") === true;
  if (check === rebuild || parsed.positionals.length > 1) throw new UsageError("usage: textwire doctor --check|--rebuild [--db PATH]");
  const json = parsed.flags.get("json") === true;
  return withDb(path, (sqlite) => {
    if (rebuild) {
      const r = rebuildDerived(sqlite, json ? undefined : io.out);
      if (json) io.out(JSON.stringify(r));
      return 0;
    }
    const r = checkDerived(sqlite);
    const total = Object.values(r.counts).reduce((a, b) => a + b, 0);
    if (json) {
      io.out(JSON.stringify({ ok: total === 0, counts: r.counts, differences: r.differences }));
      return total === 0 ? 0 : 1;
    }
    for (const s of r.structures) io.out(`${s.padEnd(17)} ${r.counts[s] === 0 ? "ok" : `${r.counts[s]} difference(s)`}`);
    for (const d of r.differences) io.out(`  ${d.structure}: ${d.detail}`);
    if (total > 0) io.out(`Run \`textwire doctor --rebuild\` to recompute the derived data.`);
    return total === 0 ? 0 : 1;
  });
}
