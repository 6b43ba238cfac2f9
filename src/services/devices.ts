/**
 * Phones, as the SMSGate app and recipe phones meet the server (docs/phones.md): the mobile API
 * (registering, the device's own record, its settings and phone callbacks), leasing to a phone
 * with its own send rate and budgets, its reports, and the offline sweep with device.online /
 * device.offline. Its other jobs have their own modules: presence (phone-presence.ts), the
 * registry the dashboard reads (device-registry.ts), registering (device-registration.ts), a
 * phone's reports and phone callbacks (phone-reports.ts), its event stream (device-events.ts),
 * budgets and pauses (sending-capacity.ts, sending-failures.ts). Leasing goes through
 * LeaseService (leaseToPhone: the same rules as /v1/messages/next, with the phone's own rate).
 */
import { choosePublicAddress, type PublicAddress } from "../domain/public-address";
import type { Database } from "bun:sqlite";

import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { BucketRegistry, perMinute, type LimitResult } from "../limits/token-bucket";
import type { Priority } from "../queue/priority-queue";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import type { MessageRow } from "../db/stores/messages/rows";
import type { LeaseService, LeasedMessage, PhoneAsking } from "./leases";
import { LEASE_SECONDS_DEFAULT } from "./leases";
import type { DeviceEventHub } from "./device-events";
import { emitEvent } from "./events";
import type { Changes } from "../lib/changes";
import { CALLBACK_DEDUPE_MS, CALLBACK_EVENTS, type InboundReceiver, type PhoneReports } from "./phone-reports";
import { createRegistrationToken, deviceOfToken, registerPhone } from "./device-registration";
import { mobileApiUrls } from "../domain/mobile-api-urls";
import { machineAddresses } from "../tls/local-ca";
import { phoneSettingsFrom, type PhoneSettings } from "../domain/smsgate-settings";
import type { SmsgateSettingsService } from "./smsgate-settings";
import type { SendingCapacity } from "./sending-capacity";
import type { SendingEstimator } from "./sending-estimate";
import type { PhonePresence } from "./phone-presence";
import type { DeviceRegistry, DeviceView } from "./device-registry";
import type { SendingFailures } from "./sending-failures";
import { appMessageSettings } from "../domain/sending-budget";
import { clampToBudget } from "./device-limits";

export type { DeviceView, InboundReceiver };

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
  /** The phones as the dashboard sees them, recipes, send rates (services/device-registry.ts). */
  private readonly registry: DeviceRegistry;
  /** The phones' links to the rest of the server. */
  private readonly links: DeviceLinks;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly leases: LeaseService,
    private readonly config: DevicesConfig,
    private readonly logger: Logger,
    /** Phones' reports are announced once per batch, after commit, as the phone's ("device"). */
    private readonly changes: Changes,
    parts: {
      events: DeviceEventHub;
      presence: PhonePresence;
      sending: SendingCapacity;
      estimator: SendingEstimator;
      registry: DeviceRegistry;
      failures: SendingFailures;
      reports: PhoneReports;
    },
    links: Partial<DeviceLinks> = {},
  ) {
    this.events = parts.events;
    this.presence = parts.presence;
    this.registry = parts.registry;
    this.sending = parts.sending;
    this.estimator = parts.estimator;
    this.links = {
      inbound: links.inbound,
      smsgateSettings: links.smsgateSettings,
      publicAddress: links.publicAddress ?? ((origin) => choosePublicAddress(this.config.publicUrl, null, origin)),
      smsgateHandedOut: links.smsgateHandedOut ?? (() => null),
      smsgateRequested: links.smsgateRequested ?? (() => null),
    };
    this.failures = parts.failures;
    this.reports = parts.reports;
    this.requests = new BucketRegistry({ clock, capacity: config.deviceLimitPerMinute, refillPerMs: perMinute(config.deviceLimitPerMinute) });
    // New work may be waiting: the account's phones hear MessageEnqueued.
    changes.on("message", (c) => {
      if (c.what === "queued") this.events.notify(c.accountId);
    });
    leases.onCancel((accountId, messageId, holder) => {
      const device = this.registry.holderDevice(accountId, holder);
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
    if (Array.isArray(body.simCards)) patch.simCards = body.simCards.slice(0, 8);
    if (typeof body.pushToken === "string") patch.pushToken = body.pushToken.slice(0, 4096);
    store.updateDevice(this.sqlite, device.id, patch);
    this.changes.device(device.accountId, "updated", this.clock());
  }

  deviceInfo(device: DeviceRow | null, ip: string) {
    return {
      externalIp: ip,
      device: device ? { id: device.id, name: device.name, createdAt: device.createdAt, updatedAt: device.updatedAt, lastSeen: this.presence.lastSeen(device) } : null,
    };
  }

  // ------------------------------------------------------------ messages

  /** How a device's leases are marked (lease_device_id): see DeviceRegistry.holderOf. */
  holderOf(device: DeviceRow): string {
    return this.registry.holderOf(device);
  }

  /** The phone as the leasing service sees it: its holder mark and its own send rate. */
  private asking(device: DeviceRow): PhoneAsking {
    return {
      id: device.id, accountId: device.accountId, holder: this.registry.holderOf(device), sendRatePerMinute: this.registry.sendRate(device),
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

  /** A send result the phone reported: pauses and failover (services/sending-failures.ts). */
  sendResult(device: DeviceRow, row: MessageRow, result: "sent" | "failed", reason: string | null): void {
    this.failures.reported(device, row, result, reason);
  }

  /** A text from `from` arrived on this phone and SIM (sticky sender: services/sending-capacity.ts). */
  textReceived(device: DeviceRow, from: string, simNumber: number | null): void {
    this.sending.noteReceived(device, from, simNumber, this.clock());
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
    const rate = this.registry.sendRate(device);
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

  // ------------------------------------------------------------ offline, health

  /** Releases at once the leases of devices silent for --device-offline-after. */
  sweepOffline(now = this.clock()): number {
    let released = 0;
    const connected = this.events.connectedDevices();
    for (const h of store.leaseHolders(this.sqlite)) {
      const d = this.registry.holderDevice(h.accountId, h.holder);
      if (!d || this.presence.online(d, now, connected)) continue;
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
      const online = this.presence.online(d, now, connected);
      next.set(d.id, online);
      if (!first && (this.lastOnline!.get(d.id) ?? false) !== online) changed.push({ d, online });
    }
    this.lastOnline = next;
    if (!changed.length) return;
    const day = iso(now).slice(0, 10);
    this.sqlite.transaction(() => {
      for (const { d, online } of changed) {
        emitEvent(this.sqlite, d.accountId, online ? "device.online" : "device.offline", () => ({ device: this.registry.view(d, store.deviceDayCounts(this.sqlite, d.accountId, day), now, connected) }), now);
      }
    })();
  }

  /** /health and /metrics figures (all accounts): see PhonePresence.health. */
  health(now = this.clock()): { devicesOnline: number; oldestDueSeconds: number | null; queue: "ok" | "stuck" } {
    return this.presence.health(now);
  }
}
