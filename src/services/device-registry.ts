/**
 * The device registry (docs/phones.md): the account's phones as the dashboard and SMSGate's
 * third-party API see them — list, read, rename, limits, remove — the recipe phones (an API key
 * and X-Device-Id) created on first sight, whose leases a holder mark names, and each phone's
 * send rate. Presence is services/phone-presence.ts; the SMSGate mobile API, services/devices.ts.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { Logger } from "../lib/log";
import type { Changes } from "../lib/changes";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import type { LeaseService } from "./leases";
import type { DeviceEventHub } from "./device-events";
import type { PhonePresence } from "./phone-presence";
import type { SmsgateSettingsService } from "./smsgate-settings";
import type { CapacityView, FleetPhone, SendingCapacity } from "./sending-capacity";
import { DEVICE_NAME_MAX } from "./device-registration";
import { requestInboxExport } from "./inbox-export";
import { sendRateOf } from "../domain/smsgate-settings";
import { parseLimits, resolveLimits, type LimitsOverride } from "../domain/sending-budget";
import { patchDeviceLimits, type DeviceLimitsDoc } from "./device-limits";
import type { FieldError } from "../domain/submission";

export interface DeviceView {
  id: string;
  name: string;
  kind: "smsgate" | "recipe";
  appVersion: string | null;
  simCards: unknown[];
  lastSeenAt: string | null;
  lastIp: string | null;
  battery: number | null;
  sendRatePerMinute: number;
  sentToday: number;
  failedToday: number;
  online: boolean;
  /** Its own limits and its SIMs' as set (null keys: the account's). */
  limits: DeviceLimitsDoc;
  /** What it may still be handed in each window, and its pause (services/sending-capacity.ts). */
  capacity: CapacityView;
}

export class DeviceRegistry {
  /** Recipe devices by account + X-Device-Id. */
  private readonly recipes = new Map<string, DeviceRow>();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly config: { sendRatePerMinute: number },
    private readonly presence: PhonePresence,
    private readonly sending: SendingCapacity,
    private readonly events: DeviceEventHub,
    private readonly leases: LeaseService,
    private readonly changes: Changes,
    /** The account's SMSGate settings document (/3rdparty/v1/settings): it caps a phone's send rate. */
    private readonly smsgateSettings?: Pick<SmsgateSettingsService, "peek">,
  ) {}

  /**
   * The phone's send rate: its own (or the server's), and never more than the account's SMSGate
   * settings let the phone send, so nothing waits on the phone until its lease runs out.
   */
  sendRate(device: DeviceRow): number {
    const own = device.sendRatePerMinute ?? this.config.sendRatePerMinute;
    return this.smsgateSettings ? sendRateOf(own, this.smsgateSettings.peek(device.accountId)) : own;
  }

  /** How a device's leases are marked (lease_device_id): SMSGate by id, recipes by their X-Device-Id. */
  holderOf(device: DeviceRow): string {
    return device.kind === "recipe" ? device.externalId! : device.id;
  }

  /** The device holding leases marked `holder` (SMSGate by id, recipes by X-Device-Id), or null. */
  holderDevice(accountId: string, holder: string): DeviceRow | null {
    if (UUID_RE.test(holder)) {
      const d = store.findDevice(this.sqlite, holder);
      if (d && d.accountId === accountId && d.kind === "smsgate") return d;
    }
    return this.recipes.get(accountId + "\u0000" + holder) ?? store.findDeviceByExternalId(this.sqlite, accountId, holder);
  }

  /** Recipes (key + X-Device-Id): the device row, created on first sight with X-Device-Name. */
  recipe(accountId: string, externalId: string | null, name: string | null, ip: string, userAgent?: string | null): DeviceRow | null {
    if (!externalId) return null;
    const ext = externalId.trim().slice(0, DEVICE_NAME_MAX);
    if (!ext) return null;
    const key = accountId + "\u0000" + ext;
    let d: DeviceRow | null | undefined = this.recipes.get(key);
    if (!d) {
      d = store.findDeviceByExternalId(this.sqlite, accountId, ext);
      if (!d) {
        const at = iso(this.clock());
        d = {
          id: newId(), accountId, kind: "recipe", externalId: ext, name: (name?.trim() || ext).slice(0, DEVICE_NAME_MAX), tokenHash: null,
          signingKey: null, pushToken: null, simCards: [], appVersion: null, lastSeenAt: at, lastIp: ip, battery: null, sendRatePerMinute: null, sendingLimits: { limits: {}, sims: [] },
          createdAt: at, updatedAt: at,
        };
        store.insertDevice(this.sqlite, d);
      }
      this.recipes.set(key, d);
    }
    this.presence.touch(d, ip, userAgent);
    return d;
  }

  lastSeen(device: DeviceRow): string | null {
    return this.presence.lastSeen(device);
  }

  online(device: DeviceRow, now = this.clock(), connected?: Set<string>): boolean {
    return this.presence.online(device, now, connected);
  }

  view(d: DeviceRow, counts: Map<string, { sent: number; failed: number }>, now: number, connected: Set<string>): DeviceView {
    const sims = d.simCards;
    const c = counts.get(d.id);
    return {
      id: d.id, name: d.name, kind: d.kind, appVersion: d.appVersion, simCards: sims, lastSeenAt: this.lastSeen(d), lastIp: this.presence.lastIp(d),
      battery: d.battery, sendRatePerMinute: this.sendRate(d), sentToday: c?.sent ?? 0, failedToday: c?.failed ?? 0, online: this.online(d, now, connected),
      limits: d.sendingLimits, capacity: this.sending.capacity(d, now),
    };
  }

  /** The account's phones with their presence: see PhonePresence.fleet. */
  fleet(accountId: string): FleetPhone[] {
    return this.presence.fleet(accountId);
  }

  /** One phone as the API shows it (events' `device`). */
  viewOf(d: DeviceRow): DeviceView {
    const now = this.clock();
    return this.view(d, store.deviceDayCounts(this.sqlite, d.accountId, iso(now).slice(0, 10)), now, this.events.connectedDevices());
  }

  list(accountId: string): { devices: DeviceView[] } {
    const now = this.clock();
    const counts = store.deviceDayCounts(this.sqlite, accountId, iso(now).slice(0, 10));
    const connected = this.events.connectedDevices();
    return { devices: store.listDevices(this.sqlite, accountId).map((d) => this.view(d, counts, now, connected)) };
  }

  /** The account's own device (DEVICE_NOT_FOUND otherwise). */
  own(accountId: string, id: string): DeviceRow {
    const d = UUID_RE.test(id) ? store.findDevice(this.sqlite, id) : null;
    if (!d || d.accountId !== accountId) throw new AppError("DEVICE_NOT_FOUND", { details: { deviceId: id } });
    return d;
  }

  get(accountId: string, id: string): DeviceView {
    const now = this.clock();
    return this.view(this.own(accountId, id), store.deviceDayCounts(this.sqlite, accountId, iso(now).slice(0, 10)), now, this.events.connectedDevices());
  }

  /**
   * PATCH /v1/devices/<id>: name, sendRatePerMinute (null = the server default), `limits` (the
   * phone's own; null = the account's) and `sims: [{slot, limits}]` (a SIM's own; null removes).
   */
  update(accountId: string, id: string, body: { name?: unknown; sendRatePerMinute?: unknown; limits?: unknown; sims?: unknown }): DeviceView {
    const d = this.own(accountId, id);
    const errs: FieldError[] = [];
    const patch: Partial<DeviceRow> = {};
    if (body.name !== undefined) {
      if (typeof body.name !== "string" || !body.name.trim() || body.name.length > DEVICE_NAME_MAX) {
        errs.push({ field: "name", message: `name must be 1-${DEVICE_NAME_MAX} characters`, provided: body.name });
      } else patch.name = body.name.trim();
    }
    if (body.sendRatePerMinute !== undefined) {
      const r = body.sendRatePerMinute;
      if (r !== null && (typeof r !== "number" || !Number.isInteger(r) || r < 1 || r > 10_000)) {
        errs.push({ field: "sendRatePerMinute", message: "sendRatePerMinute must be a whole number from 1 to 10000, or null for the server default", requirement: "1-10000 or null", provided: r });
      } else patch.sendRatePerMinute = r as number | null;
    }
    if (body.limits !== undefined || body.sims !== undefined) {
      const doc = patchDeviceLimits(d.sendingLimits, body.limits, body.sims, errs);
      // What results must still nest with the account's own (an hour no smaller than a minute).
      if (doc) {
        const account = this.sending.settingsOf(accountId).limits;
        const whole = (field: string, ...levels: LimitsOverride[]) => {
          const r = parseLimits(resolveLimits(account, ...levels), field);
          if (!r.ok) errs.push(...r.errors);
        };
        whole("limits", doc.limits);
        doc.sims.forEach((sim, i) => whole(`sims[${i}].limits`, doc.limits, sim.limits));
      }
      if (doc && !errs.length) patch.sendingLimits = doc;
    }
    if (errs.length) throw validationError(errs);
    if (Object.keys(patch).length) {
      patch.updatedAt = nextUpdatedAt(this.clock(), d.updatedAt);
      store.updateDevice(this.sqlite, d.id, patch);
      for (const [k, r] of this.recipes) if (r.id === d.id) this.recipes.delete(k);
      // The app's own limits derive from them (GET /settings): it fetches them again.
      if (patch.sendRatePerMinute !== undefined || patch.sendingLimits !== undefined) this.events.emit(accountId, "SettingsUpdated", null, d.id);
      if (patch.sendingLimits !== undefined) this.events.notify(accountId);
      this.changes.device(accountId, "updated", this.clock());
    }
    return this.get(accountId, id);
  }

  /** DELETE /v1/devices/<id>: its token stops working at once and its leases go back to the queue. */
  remove(accountId: string, id: string): { deletedId: string } {
    const d = this.own(accountId, id);
    this.sqlite.transaction(() => {
      store.deleteDevice(this.sqlite, accountId, d.id);
      this.sending.forgetDevice(d.id);
    })();
    for (const [k, r] of this.recipes) if (r.id === d.id) this.recipes.delete(k);
    this.presence.forget(d.id);
    this.leases.forgetPhone(d.id);
    this.leases.releaseHolder(this.holderOf(d));
    this.changes.device(accountId, "removed", this.clock());
    return { deletedId: d.id };
  }

  /**
   * The account's phones as SMSGate's third-party API lists them (GET /3rdparty/v1/devices:
   * client-go's Device): `lastSeen` is never empty (a phone is seen when it registers).
   */
  smsgateDevices(accountId: string) {
    return store.listDevices(this.sqlite, accountId).map((d) => {
      const sims = d.simCards;
      return {
        id: d.id, name: d.name, createdAt: d.createdAt, updatedAt: d.updatedAt, lastSeen: this.lastSeen(d) ?? d.createdAt,
        ...(sims.length ? { simCards: sims } : {}),
      };
    });
  }

  /** POST …/inbox/export: see services/inbox-export.ts. */
  requestInboxExport(accountId: string, deviceId: string | null, sinceText: unknown, untilText: unknown): { deviceIds: string[] } {
    return requestInboxExport({ sqlite: this.sqlite, clock: this.clock, logger: this.logger, events: this.events, own: (id: string) => this.own(accountId, id) }, accountId, deviceId, sinceText, untilText);
  }
}
