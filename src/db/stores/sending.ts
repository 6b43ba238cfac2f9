/**
 * Store for the sending budgets (migration 0040): hand-outs (the rolling windows' truth), pauses
 * of phones and SIMs, and the phone and SIM each number last exchanged texts with. Every
 * statement on send_handouts, send_pauses and contact_senders is here.
 */
import type { Database } from "bun:sqlite";
import type { sendHandouts, sendPauses, contactSenders } from "../schema/devices";

export type HandoutRow = typeof sendHandouts.$inferSelect;
export type PauseRow = typeof sendPauses.$inferSelect;
export type ContactSenderRow = typeof contactSenders.$inferSelect;

export function sendingStore(sqlite: Database) {
  const s = {
    insertHandout: sqlite.query<never, [string, number, number, number, string]>(
      "INSERT INTO send_handouts (device_id, slot, at, parts, recipient) VALUES (?1, ?2, ?3, ?4, ?5)",
    ),
    handoutsSince: sqlite.query<HandoutRow, [number]>(
      "SELECT device_id AS deviceId, slot, at, parts, recipient FROM send_handouts WHERE at > ?1 ORDER BY at",
    ),
    pruneHandouts: sqlite.query<never, [number]>("DELETE FROM send_handouts WHERE at <= ?1"),
    deleteDeviceHandouts: sqlite.query<never, [string]>("DELETE FROM send_handouts WHERE device_id = ?1"),
    pauses: sqlite.query<PauseRow, []>("SELECT device_id AS deviceId, slot, until, reason, failures, since FROM send_pauses"),
    upsertPause: sqlite.query<never, [string, number, number, string, number, number]>(
      `INSERT INTO send_pauses (device_id, slot, until, reason, failures, since) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (device_id, slot) DO UPDATE SET until = excluded.until, reason = excluded.reason, failures = excluded.failures, since = excluded.since`,
    ),
    deletePause: sqlite.query<never, [string, number]>("DELETE FROM send_pauses WHERE device_id = ?1 AND slot = ?2"),
    deleteDevicePauses: sqlite.query<never, [string]>("DELETE FROM send_pauses WHERE device_id = ?1"),
    sender: sqlite.query<ContactSenderRow, [string, string]>(
      "SELECT account_id AS accountId, phone, device_id AS deviceId, slot, at FROM contact_senders WHERE account_id = ?1 AND phone = ?2",
    ),
    upsertSender: sqlite.query<never, [string, string, string, number, number]>(
      `INSERT INTO contact_senders (account_id, phone, device_id, slot, at) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (account_id, phone) DO UPDATE SET device_id = excluded.device_id, slot = excluded.slot, at = excluded.at
       WHERE excluded.at >= contact_senders.at`,
    ),
    sendersOf: sqlite.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM contact_senders WHERE account_id = ?1 AND device_id = ?2"),
    deleteDeviceSenders: sqlite.query<never, [string]>("DELETE FROM contact_senders WHERE device_id = ?1"),
  };
  return {
    insertHandout: (h: HandoutRow) => void s.insertHandout.run(h.deviceId, h.slot, h.at, h.parts, h.recipient),
    handoutsSince: (at: number): HandoutRow[] => s.handoutsSince.all(at),
    pruneHandouts: (before: number): number => s.pruneHandouts.run(before).changes,
    pauses: (): PauseRow[] => s.pauses.all(),
    upsertPause: (p: PauseRow) => void s.upsertPause.run(p.deviceId, p.slot, p.until, p.reason, p.failures, p.since),
    deletePause: (deviceId: string, slot: number) => void s.deletePause.run(deviceId, slot),
    sender: (accountId: string, phone: string): ContactSenderRow | null => s.sender.get(accountId, phone) ?? null,
    /** Records who last exchanged texts with `phone`; an older exchange never overwrites a newer one. */
    setSender: (r: ContactSenderRow) => void s.upsertSender.run(r.accountId, r.phone, r.deviceId, r.slot, r.at),
    /** A removed phone: its windows, pauses and contacts go (its contacts get the phone with most budget). */
    forgetDevice(deviceId: string): void {
      s.deleteDeviceHandouts.run(deviceId);
      s.deleteDevicePauses.run(deviceId);
      s.deleteDeviceSenders.run(deviceId);
    },
  };
}

export type SendingStore = ReturnType<typeof sendingStore>;
