/**
 * The Overview's health warnings, from /health and the queue: pure, so they are unit-tested.
 */
import type { Health } from "./api-types";

export type { Health };
/** What the warnings read of GET /health. */
export type HealthFacts = Pick<Health, "status" | "database" | "tls" | "backup" | "replication">;
/** Continuous replication with Litestream (off when no replica is set). */
export type ReplicationStatus = NonNullable<Health["replication"]>;

/** Replication in one plain sentence (Overview and Settings). */
export function replicationText(r: ReplicationStatus, age: (ms: number) => string): string {
  const lag = age((r.lagSeconds ?? 0) * 1000);
  switch (r.state) {
    case "off":
      return "Replication is off: the database is only on this server's disk.";
    case "starting":
      return `Starting: making the first copy to ${r.target}.`;
    case "ok":
      return `Up to date: every change is copied to ${r.target} within about a second.`;
    case "behind":
      return `Behind: ${r.target} is missing the last ${lag} of changes. It usually catches up by itself; if not, check the server's log.`;
    case "stalled":
      return `Stalled: nothing has reached ${r.target} for ${lag}. If the disk died now, that much would be lost: check the server's log (lines starting "litestream:").`;
  }
}

/** Due messages older than this with nobody sending them are worth a warning. */
export const STUCK_AFTER_MS = 10 * 60_000;
/** The server warns this many days before its certificate expires; so does the Overview. */
export const CERT_WARNING_DAYS = 30;
/** A scheduled backup this many intervals old means backups stopped (one missed run is not yet a warning). */
export const BACKUP_LATE_INTERVALS = 2;

export function healthWarnings(health: HealthFacts, oldestDueAt: string | null, now: number, age: (ms: number) => string): string[] {
  const out: string[] = [];
  if (health.status !== "ok" || health.database !== "ok") out.push("The server reports a database problem: check its log.");
  if (oldestDueAt && now - Date.parse(oldestDueAt) > STUCK_AFTER_MS) {
    out.push(`A message has been due for ${age(now - Date.parse(oldestDueAt))}: is a phone switched on and asking for work?`);
  }
  if (health.tls && health.tls.daysLeft < CERT_WARNING_DAYS) {
    const day = health.tls.certificateExpiresAt.slice(0, 10);
    out.push(
      health.tls.daysLeft < 0
        ? `The HTTPS certificate expired on ${day}: phones and browsers refuse the connection. Whoever runs the Textwire server must renew it.`
        : `The HTTPS certificate expires in ${health.tls.daysLeft} days (${day}): whoever runs the Textwire server should renew it.`,
    );
  }
  const r = health.replication;
  if (r && (r.state === "behind" || r.state === "stalled")) out.push(replicationText(r, age));
  const b = health.backup;
  if (b && b.ageSeconds !== null && b.ageSeconds > BACKUP_LATE_INTERVALS * b.everySeconds) {
    out.push(`The last backup was made ${age(b.ageSeconds * 1000)} ago, though one is due every ${age(b.everySeconds * 1000)}: check the server's log for "scheduled backup failed".`);
  }
  return out;
}
