/**
 * Whether each phone is there (docs/phones.md): when it was last seen and from where, kept in
 * memory and written through to SQLite at most every PRESENCE_WRITE_MS; online while its event
 * stream is open or it made a request within --device-offline-after. The fleet the sending rules
 * read (services/sending-capacity.ts) and the /health figures come from here.
 */
import type { Database } from "bun:sqlite";
import { iso, type Clock } from "../lib/clock";
import type { Changes } from "../lib/changes";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import type { DeviceEventHub } from "./device-events";
import type { LeaseService } from "./leases";
import type { FleetPhone } from "./sending-capacity";

/** Presence (last seen, last IP) is written to SQLite at most this often per device. */
export const PRESENCE_WRITE_MS = 30_000;
/** /health and /metrics recompute the oldest due message at most this often. */
export const HEALTH_CACHE_MS = 1_000;

export class PhonePresence {
  /** Presence in memory: written through to SQLite at most every PRESENCE_WRITE_MS. */
  private readonly seen = new Map<string, { at: number; ip: string; written: number }>();
  /** Last time any device asked for work (the stuck check). */
  private lastWorkRequestAt: number;
  private oldestCache: { at: number; value: string | null } | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly events: DeviceEventHub,
    private readonly leases: LeaseService,
    private readonly config: { deviceOfflineAfterMs: number; stuckAfterMs: number },
    changes: Changes,
  ) {
    this.lastWorkRequestAt = clock();
    changes.on("device", (c) => {
      if (c.what === "asked-for-work") this.lastWorkRequestAt = c.at;
    });
  }

  /** Marks the device present (every authenticated request); user agent gives the app version. */
  touch(device: DeviceRow, ip: string, userAgent?: string | null): void {
    const now = this.clock();
    const s = this.seen.get(device.id);
    const version = userAgent ? /^me\.capcom\.smsgateway\/(\S+)/.exec(userAgent)?.[1] ?? null : null;
    if (version && version !== device.appVersion) {
      store.updateDevice(this.sqlite, device.id, { appVersion: version });
      device.appVersion = version;
    }
    if (!s || now - s.written >= PRESENCE_WRITE_MS || s.ip !== ip) {
      store.updateDevice(this.sqlite, device.id, { lastSeenAt: iso(now), lastIp: ip });
      this.seen.set(device.id, { at: now, ip, written: now });
    } else s.at = now;
  }

  /** A phone just registered: seen now, its row already says so. */
  registered(id: string, ip: string, now: number): void {
    this.seen.set(id, { at: now, ip, written: now });
  }

  /** A removed phone. */
  forget(id: string): void {
    this.seen.delete(id);
  }

  /** Writes what is only in memory (the server stops). */
  flush(): void {
    for (const [id, s] of this.seen) if (s.at > s.written) store.updateDevice(this.sqlite, id, { lastSeenAt: iso(s.at), lastIp: s.ip });
  }

  lastSeen(device: DeviceRow): string | null {
    const s = this.seen.get(device.id);
    return s ? iso(s.at) : device.lastSeenAt;
  }

  lastIp(device: DeviceRow): string | null {
    return this.seen.get(device.id)?.ip ?? device.lastIp;
  }

  online(device: DeviceRow, now = this.clock(), connected?: Set<string>): boolean {
    if ((connected ?? this.events.connectedDevices()).has(device.id)) return true;
    const last = this.lastSeen(device);
    return last !== null && now - Date.parse(last) < this.config.deviceOfflineAfterMs;
  }

  /** The account's phones with their presence (the capacity model's and the hand-out rules' view). */
  fleet(accountId: string): FleetPhone[] {
    const now = this.clock();
    const connected = this.events.connectedDevices();
    return store.listDevices(this.sqlite, accountId).map((d) => {
      const last = this.lastSeen(d);
      return { device: d, online: this.online(d, now, connected), lastSeenMs: last ? Date.parse(last) : null, streaming: connected.has(d.id) && this.leases.phoneMayTake(d.id) };
    });
  }

  /** /health and /metrics figures (all accounts). */
  health(now = this.clock()): { devicesOnline: number; oldestDueSeconds: number | null; queue: "ok" | "stuck" } {
    const connected = this.events.connectedDevices();
    const devicesOnline = store.listDevices(this.sqlite).filter((d) => this.online(d, now, connected)).length;
    // The oldest due message walks the queued rows: computed at most once a second (monitors poll).
    if (!this.oldestCache || now - this.oldestCache.at >= HEALTH_CACHE_MS || now < this.oldestCache.at) {
      this.oldestCache = { at: now, value: store.oldestDue(this.sqlite, iso(now)) };
    }
    const oldest = this.oldestCache.value;
    const oldestDueSeconds = oldest === null ? null : Math.max(0, Math.floor((now - Date.parse(oldest)) / 1000));
    const stuck = oldest !== null && now - this.lastWorkRequestAt >= this.config.stuckAfterMs;
    return { devicesOnline, oldestDueSeconds, queue: stuck ? "stuck" : "ok" };
  }
}
