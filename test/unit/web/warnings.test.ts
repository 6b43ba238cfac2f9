import { describe, expect, test } from "bun:test";
import { healthWarnings, replicationText, STUCK_AFTER_MS } from "../../../web/warnings";

const now = Date.parse("2026-06-01T12:00:00Z");
const age = (ms: number) => `${Math.round(ms / 60_000)} min`;
const ok = { status: "ok", database: "ok" } as const;

describe("the Overview's health warnings", () => {
  test("none for a healthy server with nothing overdue", () => {
    expect(healthWarnings(ok, null, now, age)).toEqual([]);
    expect(healthWarnings(ok, new Date(now - STUCK_AFTER_MS).toISOString(), now, age)).toEqual([]);
    expect(healthWarnings({ ...ok, tls: { certificateExpiresAt: "2026-08-01T00:00:00Z", daysLeft: 60 } }, null, now, age)).toEqual([]);
  });

  test("database trouble, a message due too long, a certificate near or past its end", () => {
    expect(healthWarnings({ status: "unavailable", database: "error" }, null, now, age)[0]).toContain("database problem");
    expect(healthWarnings(ok, new Date(now - 25 * 60_000).toISOString(), now, age)).toEqual([
      "A message has been due for 25 min: is a phone switched on and asking for work?",
    ]);
    expect(healthWarnings({ ...ok, tls: { certificateExpiresAt: "2026-06-11T00:00:00Z", daysLeft: 9 } }, null, now, age)).toEqual([
      "The HTTPS certificate expires in 9 days (2026-06-11): whoever runs the Textwire server should renew it.",
    ]);
    expect(healthWarnings({ ...ok, tls: { certificateExpiresAt: "2026-05-30T00:00:00Z", daysLeft: -2 } }, null, now, age)[0]).toContain("expired on 2026-05-30");
  });

  test("backups: none before the first, none while on time or one run late, a warning once two runs are missed", () => {
    const every = 3_600;
    const backup = (ageSeconds: number | null) => ({ lastBackupAt: ageSeconds === null ? null : new Date(now - ageSeconds * 1000).toISOString(), ageSeconds, everySeconds: every });
    expect(healthWarnings({ ...ok, backup: backup(null) }, null, now, age)).toEqual([]);
    expect(healthWarnings({ ...ok, backup: backup(2 * every) }, null, now, age)).toEqual([]);
    expect(healthWarnings({ ...ok, backup: backup(2 * every + 60) }, null, now, age)).toEqual([
      'The last backup was made 121 min ago, though one is due every 60 min: check the server\'s log for "scheduled backup failed".',
    ]);
  });

  test("replication: no warning when off, starting or up to date; a plain one when behind or stalled", () => {
    const r = (state: "off" | "starting" | "ok" | "behind" | "stalled", lagSeconds: number | null) => ({ state, lagSeconds, lastSyncAt: null, target: state === "off" ? null : "file:///mnt/usb/tw" });
    for (const quiet of [r("off", null), r("starting", 3), r("ok", 0)]) expect(healthWarnings({ ...ok, replication: quiet }, null, now, age)).toEqual([]);
    expect(healthWarnings({ ...ok, replication: r("behind", 15 * 60) }, null, now, age)).toEqual([
      "Behind: file:///mnt/usb/tw is missing the last 15 min of changes. It usually catches up by itself; if not, check the server's log.",
    ]);
    expect(healthWarnings({ ...ok, replication: r("stalled", 120 * 60) }, null, now, age)[0]).toStartWith("Stalled: nothing has reached file:///mnt/usb/tw for 120 min.");
    expect(replicationText(r("off", null), age)).toBe("Replication is off: the database is only on this server's disk.");
    expect(replicationText(r("ok", 0), age)).toContain("Up to date");
  });
});
