/**
 * The Overview's health warnings, from /health and the queue: pure, so they are unit-tested.
 */
import type { Health, OverviewInfo } from "./api-types";

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

/** A status warning: what is wrong and what to do, with a link to the page that does it. */
export interface StatusWarning {
  id: string;
  text: string;
  link?: { href: string; text: string };
}

/**
 * The facts the status warnings read (GET /v1/overview). `cliCommand` is null for anyone but the
 * server's operator: only they are shown shell commands (docs/dashboard.md, "Roles").
 */
export type StatusFacts = Pick<OverviewInfo, "status" | "phones"> & { cliCommand: OverviewInfo["cliCommand"] | null };

/** Plain HTTP from another machine: passwords and texts cross the network readable by others on it. */
export function plainHttpWarning(f: StatusFacts): StatusWarning | null {
  if (!f.status.plainHttpFromOutside) return null;
  return {
    id: "plain-http",
    text: `This page is reached over plain HTTP from another machine, so your sign-in and your customers' texts cross the network unprotected. Whoever runs the Textwire server should turn on HTTPS${f.cliCommand ? ` (${f.cliCommand} tls init, then restart)` : ""} and use the https:// address.`,
  };
}

/** No phone connected: nothing is sent until one is. */
export function noPhoneWarning(f: StatusFacts): StatusWarning | null {
  if (!f.status.noPhone) return null;
  if (f.phones.total === 0) {
    return { id: "no-phone", text: "No phone is connected. Texts wait until a phone connects.", link: { href: "/devices/add", text: "Add a phone" } };
  }
  return {
    id: "no-phone",
    text: "No phone is connected right now. Texts wait until a phone connects: check that the phone is switched on, online, and has the SMSGate app running.",
    link: { href: "/devices", text: "See the phones" },
  };
}

/** Neither scheduled backups nor replication: a broken disk loses everything. */
export function backupsOffWarning(f: StatusFacts): StatusWarning | null {
  if (!f.status.backupsOff) return null;
  return {
    id: "backups-off",
    text: `Backups are off: if this server's disk breaks, your contacts and messages are lost. Whoever runs the Textwire server should turn on scheduled backups (in Settings → Server${f.cliCommand ? `, or ${f.cliCommand} serve --backup-dir FOLDER` : ""}) or replication.`,
    ...(f.cliCommand ? { link: { href: "/settings/server#backups", text: "Backup settings" } } : {}),
  };
}

/** Every status warning that applies, in the order the Overview shows them. */
export function statusWarnings(f: StatusFacts): StatusWarning[] {
  return [plainHttpWarning(f), noPhoneWarning(f), backupsOffWarning(f)].filter((w): w is StatusWarning => w !== null);
}
