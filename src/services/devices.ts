/**
 * Phones: the device registry (list, rename, remove, recipes), per-device limits and send
 * rates, presence and offline release, and the figures /health and /metrics show. Its other
 * jobs have their own modules: registering (device-registration.ts), a phone's reports and phone
 * callbacks (phone-reports.ts), its event stream (device-events.ts). Leasing goes through
 * LeaseService (leaseToPhone: the same rules as /v1/messages/next, with the phone's own rate).
 *
 * Kept whole at a little over 450 lines: presence and the recipe cache are one in-memory state
 * that authentication, the offline sweep and the device views all read.
 */
import { choosePublicAddress, type PublicAddress } from "../domain/public-address";
import type { Database } from "bun:sqlite";

import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { Logger } from "../lib/log";
import { BucketRegistry, perMinute, type LimitResult } from "../limits/token-bucket";
import type { Priority } from "../queue/priority-queue";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import type { MessageRow } from "../db/message-rows";
import type { LeaseService, LeasedMessage, PhoneAsking } from "./leases";
import { LEASE_SECONDS_DEFAULT } from "./leases";
import type { MessageService } from "./messages";
import type { Metrics } from "./metrics";
import type { DeviceEventHub } from "./device-events";
import { emitEvent } from "./events";
import type { Changes } from "../lib/changes";
import { CALLBACK_DEDUPE_MS, CALLBACK_EVENTS, PhoneReports, type InboundReceiver } from "./phone-reports";
import { createRegistrationToken, deviceOfToken, DEVICE_NAME_MAX, registerPhone } from "./device-registration";
import { mobileApiUrls } from "../domain/mobile-api-urls";
import { machineAddresses } from "../tls/local-ca";
import { phoneSettingsFrom, sendRateOf, type PhoneSettings } from "../domain/smsgate-settings";
import type { SmsgateSettingsService } from "./smsgate-settings";
import type { CapacityView, FleetPhone, SendingCapacity } from "./sending-capacity";
import type { SendingEstimator } from "./sending-estimate";
import type { PhonePresence } from "./phone-presence";
import { requestInboxExport } from "./inbox-export";
import { SendingFailures } from "./sending-failures";
import { appMessageSettings, parseLimits, resolveLimits, type LimitsOverride } from "../domain/sending-budget";
import { clampToBudget, patchDeviceLimits, readDeviceLimits, slotsOf, type DeviceLimitsDoc } from "./device-limits";
import type { FieldError } from "../domain/submission";

export type { InboundReceiver };

/** GET /message hands out at most this many messages (the app's own page size). */
export const MOBILE_MESSAGES_MAX = 100;
/** How often the offline sweep looks for silent devices that hold leases. */
export const OFFLINE_SWEEP_MS = 1_000;
/** SMSGate's ping interval we ask for (never more than half the offline window). */
export const PING_INTERVAL_SECONDS_MAX = 60;
/** SMSGate priority: 100 and up skips the phone's own delays and limits. */
export const APP_PRIORITY: Record<Priority, number> = { urgent: 100, high: 50, normal: 0, low: -50 };

export interface DevicesConfig {
  sendRatePerMinute: number;
  deviceOfflineAfterMs: number;
  stuckAfterMs: number;
  deviceLimitPerMinute: number;
  publicUrl?: string;
  trustProxy?: boolean;
}

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

/** What the phones need from the rest of the server, given by the wiring (src/wiring/phones.ts). */
export interface DeviceLinks {
  /** SMSGate's sms:received becomes an inbound message. */
  inbound: InboundReceiver | undefined;
  /** The account's SMSGate settings document (/3rdparty/v1/settings). */
  smsgateSettings: Pick<SmsgateSettingsService, "peek"> | undefined;
  /** The address phones are given (flag > Settings → Server address > the request's own). */
  publicAddress: (origin: string) => PublicAddress;
  /**
   * A text sent through SMSGate's third-party API: the SIM and delivery-report choice its client
   * made, recorded as handed out (services/thirdparty-messages.ts); null for any other text.
   */
  smsgateHandedOut: (messageId: string, now: number) => { simNumber: number | null; withDeliveryReport: boolean } | null;
  /**
   * The phone or SIM an SMSGate-API request named for a text (deviceId, simNumber), which wins over
   * every other choice (services/thirdparty-messages.ts); null for any other text.
   */
  smsgateRequested: (messageId: string) => { deviceId: string | null; simNumber: number | null } | null;
}

export class DeviceService {
  /** A phone's reports and phone callbacks (services/phone-reports.ts). */
  private readonly reports: PhoneReports;
  private readonly requests: BucketRegistry;
  /** Recipe devices by account + X-Device-Id. */
  private readonly recipes = new Map<string, DeviceRow>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Budgets, windows, pauses and sticky senders (services/sending-capacity.ts). */
  readonly sending: SendingCapacity;
  /** When queued texts go out, from the phones' real capacity (services/sending-estimate.ts). */
  readonly estimator: SendingEstimator;
  /** Pauses after failures, failover, device.paused / device.resumed (services/sending-failures.ts). */
  readonly failures: SendingFailures;

  readonly events: DeviceEventHub;
  /** Who is there: last seen, online, the fleet (services/phone-presence.ts). */
  private readonly presence: PhonePresence;
  /** The phones' links to the rest of the server. */
  private readonly links: DeviceLinks;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly leases: LeaseService,
    messages: MessageService,
    private readonly config: DevicesConfig,
    metrics: () => Metrics,
    private readonly logger: Logger,
    /** Phones' reports are announced once per batch, after commit, as the phone's ("device"). */
    private readonly changes: Changes,
    parts: { events: DeviceEventHub; presence: PhonePresence; sending: SendingCapacity; estimator: SendingEstimator },
    links: Partial<DeviceLinks> = {},
  ) {
    this.events = parts.events;
    this.presence = parts.presence;
    this.sending = parts.sending;
    this.estimator = parts.estimator;
    this.links = {
      inbound: links.inbound,
      smsgateSettings: links.smsgateSettings,
      publicAddress: links.publicAddress ?? ((origin) => choosePublicAddress(this.config.publicUrl, null, origin)),
      smsgateHandedOut: links.smsgateHandedOut ?? (() => null),
      smsgateRequested: links.smsgateRequested ?? (() => null),
    };
    this.failures = new SendingFailures(sqlite, clock, logger, this.sending, leases, {
      view: (d) => this.viewOf(d),
      released: (d, n) => n > 0 && this.logger.warn("phone paused: its leased texts went back to the queue", { deviceId: d.id, name: d.name, released: n }),
      wake: (accountId) => this.events.notify(accountId),
      holderOf: (d) => this.holderOf(d),
    });
    this.reports = new PhoneReports(sqlite, clock, logger, metrics, messages, leases, changes, this);
    this.requests = new BucketRegistry({ clock, capacity: config.deviceLimitPerMinute, refillPerMs: perMinute(config.deviceLimitPerMinute) });
    // New work may be waiting: the account's phones hear MessageEnqueued.
    changes.on("message", (c) => {
      if (c.what === "queued") this.events.notify(c.accountId);
    });
    leases.onCancel((accountId, messageId, holder) => {
      const device = this.holderDevice(accountId, holder);
      if (device) this.events.emit(accountId, "MessageCancelled", { messageId }, device.id);
    });
  }

  lifecycle() {
    return {
      name: "device-offline-sweep",
      start: () => {
        this.sending.load();
        this.timer = setInterval(() => {
          this.sweepOffline();
          this.notePresence();
          // A locked database (another process past the busy timeout) must not stop the timer: next second.
          try {
            this.failures.sweep();
            this.sending.prune();
          } catch (err) {
            this.logger.warn("sending budgets: sweep deferred", { error: String(err).slice(0, 200) });
          }
        }, OFFLINE_SWEEP_MS);
        (this.timer as { unref?: () => void }).unref?.();
        store.pruneCallbackEvents(this.sqlite, iso(this.clock() - CALLBACK_DEDUPE_MS));
      },
      stop: () => {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        this.events.stop();
        this.presence.flush();
      },
    };
  }

  // ------------------------------------------------------------ registration

  /**
   * POST /v1/devices/registration-tokens: the token, and the addresses a phone can type into the
   * app (`origin`: the request's own, as the browser sees the server).
   */
  createRegistrationToken(accountId: string, body: { reusable?: unknown; expiresInHours?: unknown } = {}, origin = "") {
    const created = createRegistrationToken(this.sqlite, this.clock, accountId, body);
    const address = this.links.publicAddress(origin);
    const urls = mobileApiUrls({ publicUrl: address.source === "request" ? undefined : address.url, origin, behindProxy: this.config.trustProxy ?? false, addresses: machineAddresses() });
    return { ...created, mobileApiUrls: urls };
  }

  /** POST /device: a registration token (Bearer) makes a new SMSGate device of its account. */
  register(presented: string | null, body: Record<string, unknown>, ip: string) {
    const now = this.clock();
    const r = registerPhone(this.sqlite, now, presented, body, ip);
    this.presence.registered(r.id, ip, now);
    this.logger.info("device registered", { deviceId: r.id, accountId: r.login, name: r.name });
    this.changes.device(r.login, "registered", now);
    return { id: r.id, token: r.token, login: r.login, password: null };
  }

  /** The device a Bearer device token belongs to, or null. */
  authenticate(presented: string | null): DeviceRow | null {
    return deviceOfToken(this.sqlite, presented);
  }

  /** Marks the device present (every authenticated request): see PhonePresence.touch. */
  touch(device: DeviceRow, ip: string, userAgent?: string | null): void {
    this.presence.touch(device, ip, userAgent);
  }

  /** SMSGate's sms:received becomes an inbound message (services/phone-reports.ts). */
  get inbound(): InboundReceiver | undefined {
    return this.links.inbound;
  }

  /** Per-device request limiter (--device-limit-per-minute); takes one token. */
  limit(deviceKey: string): LimitResult {
    return this.requests.take(deviceKey);
  }

  /** PATCH /device: push token (ignored) and SIM cards. */
  patch(device: DeviceRow, body: Record<string, unknown>): void {
    if (typeof body.id === "string" && body.id !== device.id) {
      throw new AppError("PERMISSION_ERROR", { message: "This token belongs to another device", details: { deviceId: body.id } });
    }
    const patch: Partial<DeviceRow> = { updatedAt: nextUpdatedAt(this.clock(), device.updatedAt) };
    if (Array.isArray(body.simCards)) patch.simCards = JSON.stringify(body.simCards.slice(0, 8));
    if (typeof body.pushToken === "string") patch.pushToken = body.pushToken.slice(0, 4096);
    store.updateDevice(this.sqlite, device.id, patch);
    this.changes.device(device.accountId, "updated", this.clock());
  }

  deviceInfo(device: DeviceRow | null, ip: string) {
    return {
      externalIp: ip,
      device: device ? { id: device.id, name: device.name, createdAt: device.createdAt, updatedAt: device.updatedAt, lastSeen: this.lastSeen(device) } : null,
    };
  }

  // ------------------------------------------------------------ messages

  /**
   * The phone's send rate: its own (or the server's), and never more than the account's SMSGate
   * settings let the phone send, so nothing waits on the phone until its lease runs out.
   */
  private sendRate(device: DeviceRow): number {
    const own = device.sendRatePerMinute ?? this.config.sendRatePerMinute;
    return this.links.smsgateSettings ? sendRateOf(own, this.links.smsgateSettings.peek(device.accountId)) : own;
  }

  /** How a device's leases are marked (lease_device_id): SMSGate by id, recipes by their X-Device-Id. */
  holderOf(device: DeviceRow): string {
    return device.kind === "recipe" ? device.externalId! : device.id;
  }

  private holderDevice(accountId: string, holder: string): DeviceRow | null {
    if (UUID_RE.test(holder)) {
      const d = store.findDevice(this.sqlite, holder);
      if (d && d.accountId === accountId && d.kind === "smsgate") return d;
    }
    return this.recipes.get(accountId + "\u0000" + holder) ?? store.findDeviceByExternalId(this.sqlite, accountId, holder);
  }

  /** The phone as the leasing service sees it: its holder mark and its own send rate. */
  private asking(device: DeviceRow): PhoneAsking {
    return {
      id: device.id, accountId: device.accountId, holder: this.holderOf(device), sendRatePerMinute: this.sendRate(device),
      gate: () => {
        const now = this.clock();
        const r = this.sending.readiness(device, now);
        if (!r.ready) return { waitMs: r.waitMs };
        return this.sending.gateFor(device, now, (id) => this.links.smsgateRequested(id), (other) => this.events.nudgeLater(device.accountId, other, 0));
      },
    };
  }

  /** Leases up to `limit` due messages to the device (LeaseService.leaseToPhone); a held-back phone is nudged later. */
  leaseTo(device: DeviceRow, limit: number, leaseSeconds = LEASE_SECONDS_DEFAULT): LeasedMessage[] {
    return this.leases.leaseToPhone(this.asking(device), limit, leaseSeconds, (ms) => this.events.nudgeLater(device.accountId, device.id, ms));
  }

  /** GET /v1/messages/<KEY>/next?wait= for a recipe phone (LeaseService.waitLeaseToPhone). */
  waitLease(device: DeviceRow, leaseSeconds: number, waitSeconds: number): Promise<LeasedMessage | null> {
    return this.leases.waitLeaseToPhone(this.asking(device), leaseSeconds, waitSeconds);
  }

  /** GET /message: the app's Message items. `order` (lifo | fifo) orders within each priority of the batch. */
  appMessages(device: DeviceRow, order: string | undefined) {
    if (order !== undefined && order !== "lifo" && order !== "fifo") {
      throw validationError([{ field: "order", message: "order must be lifo or fifo", requirement: "lifo | fifo", provided: order }]);
    }
    const leased = this.leaseTo(device, MOBILE_MESSAGES_MAX);
    if (order === "lifo" || order === undefined) {
      // Queue order is priority, then oldest first; LIFO reverses the age order inside each priority.
      leased.sort((a, b) => APP_PRIORITY[b.priority] - APP_PRIORITY[a.priority] || (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    }
    if (leased.length === 0) return [];
    const now = this.clock();
    return this.sqlite.transaction(() =>
      leased.map((m) => {
        const smsgate = this.links.smsgateHandedOut(m.id, now);
        return {
          id: m.id,
          textMessage: { text: m.content },
          phoneNumbers: [m.recipientPhone],
          simNumber: smsgate?.simNumber ?? m.sim ?? null,
          withDeliveryReport: smsgate?.withDeliveryReport ?? true,
          isEncrypted: false,
          priority: APP_PRIORITY[m.priority],
          createdAt: m.createdAt,
        };
      }),
    )();
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
          signingKey: null, pushToken: null, simCards: "[]", appVersion: null, lastSeenAt: at, lastIp: ip, battery: null, sendRatePerMinute: null, sendingLimits: null,
          createdAt: at, updatedAt: at,
        };
        store.insertDevice(this.sqlite, d);
      }
      this.recipes.set(key, d);
    }
    this.touch(d, ip, userAgent);
    return d;
  }

  /** A send result the phone reported: pauses and failover (services/sending-failures.ts). */
  sendResult(device: DeviceRow, row: MessageRow, result: "sent" | "failed", reason: string | null): void {
    this.failures.reported(device, row, result, reason);
  }

  /** A text from `from` arrived on this phone and SIM (sticky sender: services/sending-capacity.ts). */
  textReceived(device: DeviceRow, from: string, simNumber: number | null): void {
    if (!/^\+\d{6,15}$/.test(from)) return;
    const slots = slotsOf(device);
    const slot = simNumber !== null && slots.includes(simNumber) ? simNumber : slots[0];
    this.sending.noteExchange(device.accountId, from, device.id, slot, this.clock());
  }

  /** Counts a report of the device in its per-day and Prometheus figures. */
  countResult(device: DeviceRow, status: "sent" | "failed"): void {
    this.reports.countResult(device, status);
  }

  /** PATCH /message: see PhoneReports.applyStates. */
  applyStates(device: DeviceRow, items: unknown[]): Promise<void> {
    return this.reports.applyStates(device, items);
  }

  /** POST /api/mobile/v1/webhooks/<device id>: see PhoneReports.receiveCallback. */
  receiveCallback(deviceId: string, raw: string, signature: string | null, timestamp: string | null, ip: string): { duplicate: boolean; event: string } {
    return this.reports.receiveCallback(deviceId, raw, signature, timestamp, ip);
  }

  // ------------------------------------------------------------ settings, phone callbacks

  /**
   * GET /settings in the app's own (snake_case) shape: Textwire's, with the account's SMSGate
   * settings document over them (domain/smsgate-settings.ts, phoneSettingsFrom).
   */
  settings(device: DeviceRow): PhoneSettings {
    const rate = this.sendRate(device);
    const budget = this.sending.limits(device);
    const fromBudget = appMessageSettings(budget);
    const interval = Math.max(Math.floor(60 / rate), fromBudget.send_interval_min);
    const ping = Math.max(5, Math.min(PING_INTERVAL_SECONDS_MAX, Math.floor(this.config.deviceOfflineAfterMs / 2_000)));
    const own: PhoneSettings = {
      messages: { send_interval_min: interval, send_interval_max: Math.max(interval, fromBudget.send_interval_max), limit_period: "PerMinute", limit_value: Math.min(rate, fromBudget.limit_value) },
      ping: { interval_seconds: ping },
      webhooks: { signing_key: device.signingKey },
      gateway: { notification_channel: "SSE_ONLY" },
    };
    const merged = this.links.smsgateSettings ? phoneSettingsFrom(own, this.links.smsgateSettings.peek(device.accountId), ping) : own;
    return { ...merged, messages: clampToBudget(merged.messages, budget) };
  }

  /** GET /webhooks: the phone callbacks — Textwire's own receiver for the events it uses. */
  callbacks(device: DeviceRow, origin: string) {
    const base = this.links.publicAddress(origin).url.replace(/^http:/, "https:");
    const url = `${base}/api/mobile/v1/webhooks/${device.id}`;
    return CALLBACK_EVENTS.map((event) => ({ id: `textwire-${event.replace(":", "-")}`, url, event }));
  }

  // ------------------------------------------------------------ registry

  private lastSeen(device: DeviceRow): string | null {
    return this.presence.lastSeen(device);
  }

  online(device: DeviceRow, now = this.clock(), connected?: Set<string>): boolean {
    return this.presence.online(device, now, connected);
  }

  private view(d: DeviceRow, counts: Map<string, { sent: number; failed: number }>, now: number, connected: Set<string>): DeviceView {
    let sims: unknown[] = [];
    try {
      sims = JSON.parse(d.simCards);
    } catch {}
    const c = counts.get(d.id);
    return {
      id: d.id, name: d.name, kind: d.kind, appVersion: d.appVersion, simCards: sims, lastSeenAt: this.lastSeen(d), lastIp: this.presence.lastIp(d),
      battery: d.battery, sendRatePerMinute: this.sendRate(d), sentToday: c?.sent ?? 0, failedToday: c?.failed ?? 0, online: this.online(d, now, connected),
      limits: readDeviceLimits(d.sendingLimits), capacity: this.sending.capacity(d, now),
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

  /**
   * What the account's connected phones can send a minute together, capped by the account's own
   * send rate (leasing applies both): the broadcast confirmation's estimate.
   */
  sendingCapacity(accountId: string): { phonesConnected: number; ratePerMinute: number } {
    const now = this.clock();
    const connected = this.events.connectedDevices();
    const online = store.listDevices(this.sqlite, accountId).filter((d) => this.online(d, now, connected));
    const phones = online.reduce((sum, d) => sum + this.sendRate(d), 0);
    return { phonesConnected: online.length, ratePerMinute: online.length ? Math.min(phones, this.config.sendRatePerMinute) : 0 };
  }

  list(accountId: string): { devices: DeviceView[] } {
    const now = this.clock();
    const counts = store.deviceDayCounts(this.sqlite, accountId, iso(now).slice(0, 10));
    const connected = this.events.connectedDevices();
    return { devices: store.listDevices(this.sqlite, accountId).map((d) => this.view(d, counts, now, connected)) };
  }

  private own(accountId: string, id: string): DeviceRow {
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
      const doc = patchDeviceLimits(readDeviceLimits(d.sendingLimits), body.limits, body.sims, errs);
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
      if (doc && !errs.length) patch.sendingLimits = doc.sims.length || Object.keys(doc.limits).length ? JSON.stringify(doc) : null;
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
      let sims: unknown = [];
      try {
        sims = JSON.parse(d.simCards);
      } catch {}
      return {
        id: d.id, name: d.name, createdAt: d.createdAt, updatedAt: d.updatedAt, lastSeen: this.lastSeen(d) ?? d.createdAt,
        ...(Array.isArray(sims) && sims.length ? { simCards: sims } : {}),
      };
    });
  }

  /** POST …/inbox/export: see services/inbox-export.ts. */
  requestInboxExport(accountId: string, deviceId: string | null, sinceText: unknown, untilText: unknown): { deviceIds: string[] } {
    return requestInboxExport({ sqlite: this.sqlite, clock: this.clock, logger: this.logger, events: this.events, own: (id: string) => this.own(accountId, id) }, accountId, deviceId, sinceText, untilText);
  }

  // ------------------------------------------------------------ offline, health

  /** Releases at once the leases of devices silent for --device-offline-after. */
  sweepOffline(now = this.clock()): number {
    let released = 0;
    const connected = this.events.connectedDevices();
    for (const h of store.leaseHolders(this.sqlite)) {
      const d = this.holderDevice(h.accountId, h.holder);
      if (!d || this.online(d, now, connected)) continue;
      const n = this.leases.releaseHolder(h.holder);
      if (n > 0) this.logger.warn("device offline: its leased messages went back to the queue", { deviceId: d.id, name: d.name, released: n });
      released += n;
    }
    return released;
  }

  /** Online state per device as last seen by notePresence (device.online / device.offline events). */
  private lastOnline: Map<string, boolean> | undefined;

  /**
   * Emits device.online / device.offline for every device whose state changed since the last
   * look (the offline sweep's timer). The first look after start only records the states.
   */
  notePresence(now = this.clock()): void {
    const connected = this.events.connectedDevices();
    const devices = store.listDevices(this.sqlite);
    const first = this.lastOnline === undefined;
    const next = new Map<string, boolean>();
    const changed: Array<{ d: DeviceRow; online: boolean }> = [];
    for (const d of devices) {
      const online = this.online(d, now, connected);
      next.set(d.id, online);
      if (!first && (this.lastOnline!.get(d.id) ?? false) !== online) changed.push({ d, online });
    }
    this.lastOnline = next;
    if (!changed.length) return;
    const day = iso(now).slice(0, 10);
    this.sqlite.transaction(() => {
      for (const { d, online } of changed) {
        emitEvent(this.sqlite, d.accountId, online ? "device.online" : "device.offline", () => ({ device: this.view(d, store.deviceDayCounts(this.sqlite, d.accountId, day), now, connected) }), now);
      }
    })();
  }

  /** /health and /metrics figures (all accounts): see PhonePresence.health. */
  health(now = this.clock()): { devicesOnline: number; oldestDueSeconds: number | null; queue: "ok" | "stuck" } {
    return this.presence.health(now);
  }
}
