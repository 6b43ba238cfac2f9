/**
 * What a phone tells the server: its reports on the messages it holds (PATCH /message of the
 * SMSGate mobile API, and a recipe's status reports through DeviceService) and its phone
 * callbacks — the signed events the app posts to /api/mobile/v1/webhooks/<device id>
 * (sms:sent, sms:delivered, sms:failed, sms:received, system:ping). Only the holder of a
 * message's lease may report on it; status changes go through MessageService.updateStatus, and
 * a batch is announced once, as the phone's (src/lib/changes.ts).
 */
import type { Database } from "bun:sqlite";
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError, validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { UUID_RE } from "../lib/ids";
import type { Logger } from "../lib/log";
import type { Changes } from "../lib/changes";
import * as store from "../db/stores/devices";
import type { DeviceRow } from "../db/stores/devices";
import type { MessageRow, MessageStore } from "../db/stores/messages";
import { latestLease } from "../db/stores/messages/history";
import { messageMetadata } from "../db/stores/messages/rows";
import { lastFailedLease } from "../db/stores/messages/retries";
import { RELAYED_EVENTS } from "../domain/smsgate-webhook";
import { relayPhoneEvent } from "./thirdparty-webhooks";
import { normalizeDeviceTime } from "../domain/device-time";
import { believedTime, readDeviceReport, reportIdOf, type DeviceReport } from "../domain/device-report";
import type { LeaseService } from "./leases";
import { LEASE_SECONDS_DEFAULT } from "./leases";
import type { MessageService } from "./messages";
import type { Metrics } from "./metrics";
import { emitMessageDelivered } from "./event-payloads";

/** Refused report items logged one by one per batch; beyond this, one summary line. */
export const REFUSALS_LOGGED_PER_BATCH = 20;
/** Report items applied before other requests get a turn (about 30 ms of commits). */
const REPORT_ITEMS_PER_TURN = 16;
/** Signed webhooks: X-Timestamp may be this far from our clock. */
export const CALLBACK_TOLERANCE_SECONDS = 300;
/** Applied webhook event ids are kept this long for dedupe (the app retries for far less). */
export const CALLBACK_DEDUPE_MS = 7 * 86_400_000;
/** The phone callbacks Textwire asks the app for (GET /webhooks). */
export const CALLBACK_EVENTS = ["sms:received", "sms:sent", "sms:delivered", "sms:failed", "system:ping", ...RELAYED_EVENTS] as const;

/** Something that stores inbound texts; wired when present. */
export interface InboundReceiver {
  receive(accountId: string, input: { from: string; body: string; receivedAt: string; deviceId?: string; externalId?: string; simNumber?: unknown; recipient?: unknown }): unknown;
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What the reports need of the device registry. */
export interface PhoneRegistry {
  holderOf(device: DeviceRow): string;
  touch(device: DeviceRow, ip: string): void;
  inbound: InboundReceiver | undefined;
  /** A send result applied: the budgets' pauses and failover (services/sending-failures.ts). */
  sendResult(device: DeviceRow, row: MessageRow, result: "sent" | "failed", reason: string | null): void;
  /** A text from `from` arrived on this phone and SIM: its next texts go from there (sticky sender). */
  textReceived(device: DeviceRow, from: string, simNumber: number | null): void;
}

export class PhoneReports {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: () => Metrics,
    private readonly messages: MessageService,
    private readonly leases: LeaseService,
    private readonly changes: Changes,
    private readonly registry: PhoneRegistry,
    private readonly store: MessageStore,
  ) {}

  private holderOf(device: DeviceRow): string {
    return this.registry.holderOf(device);
  }

  /** Counts a report of the device in its per-day and Prometheus figures. */
  countResult(device: DeviceRow, status: "sent" | "failed"): void {
    store.countDeviceDay(this.sqlite, device.id, iso(this.clock()).slice(0, 10), status);
    this.metrics().count("textwire_device_messages_total", { device: device.id, result: status });
  }

  /**
   * PATCH /message: the app's state array, each item judged on its own (docs/devices.md,
   * "Reports"). Processed extends the lease; Sent, Delivered and Failed change the message;
   * Pending and repeats change nothing. An item that is malformed, names no message of the
   * account, or one this phone does not hold is refused: nothing changes, it is logged and
   * counted (textwire_device_reports_refused_total), and the batch still answers 204 so the app
   * does not send it again.
   */
  async applyStates(device: DeviceRow, items: unknown[]): Promise<void> {
    const tz = store.accountTimeZone(this.sqlite, device.accountId);
    const tally = { refused: 0 };
    let changed = false;
    for (let i = 0; i < items.length; i++) {
      // Each applied item commits on its own (~1.7 ms): a phone back online may report on every
      // message it holds at once (1,000 took 1.7 s), so other requests get a turn between slices
      // instead of waiting for the whole list (docs/api-decisions.md, "The phone path, round two").
      if (i > 0 && i % REPORT_ITEMS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.applyItem(device, items[i], tz, tally)) changed = true;
    }
    if (tally.refused > REFUSALS_LOGGED_PER_BATCH) {
      this.logger.warn("device reports refused", { deviceId: device.id, refused: tally.refused, notLogged: tally.refused - REFUSALS_LOGGED_PER_BATCH });
    }
    if (changed) this.changes.message(device.accountId, "updated", "device");
  }

  /**
   * Whose report a message takes: the holder of its latest lease, whether that lease still runs
   * or has ended without a report and nobody leased the message since (a late report from the
   * phone that did send it is still the truth, and a phone repeating its report after the lease
   * ended is harmless). A lease given through an API key has no device, so no phone holds it.
   */
  private reportHolder(row: MessageRow): { holder: string | null; leasedAt: number | null } {
    const lease = latestLease(row.metadata);
    const at = lease ? Date.parse(lease.at) : NaN;
    const holder = row.lease_token !== null ? row.lease_device_id : (lease?.deviceId ?? null);
    return { holder, leasedAt: Number.isFinite(at) ? at : null };
  }

  private refuseReport(device: DeviceRow, messageId: string | null, reason: "invalid" | "unknown_message" | "not_holder", detail: string, tally: { refused: number }): false {
    this.metrics().count("textwire_device_reports_refused_total", { reason });
    if (tally.refused++ < REFUSALS_LOGGED_PER_BATCH) this.logger.warn("device report refused", { deviceId: device.id, messageId, reason, detail });
    return false;
  }

  /** Applies one item of a report; true when it changed the message (each change committed on its own). */
  private applyItem(device: DeviceRow, item: unknown, tz: string | null, tally = { refused: 0 }): boolean {
    const read = readDeviceReport(item, tz);
    if (!read.ok) return this.refuseReport(device, reportIdOf(item), "invalid", `${read.field}: ${read.message}`, tally);
    const r = read.report;
    const row = this.messages.findRow(device.accountId, r.id);
    if (!row) return this.refuseReport(device, r.id, "unknown_message", "no message of this account has this id", tally);
    const { holder, leasedAt } = this.reportHolder(row);
    if (holder === null || holder !== this.holderOf(device)) {
      const detail = holder === null ? "the message is not leased to this phone" : "the message is leased to another phone or client";
      return this.refuseReport(device, r.id, "not_holder", detail, tally);
    }
    // The lease the report answers: the /v1 lease rules (LEASE_CONFLICT, a repeated failure) apply as to any holder.
    const leaseToken = row.lease_token ?? row.last_lease_token ?? undefined;
    try {
      switch (r.state) {
        case "Pending":
          return false;
        case "Processed":
          this.leases.extend(r.id, this.holderOf(device), LEASE_SECONDS_DEFAULT);
          return false;
        case "Sent":
          return this.markSent(device, row, r.times.Sent ?? r.times.Processed, leasedAt, leaseToken);
        case "Delivered": {
          const sent = this.markSent(device, row, r.times.Sent ?? r.times.Delivered, leasedAt, leaseToken);
          return this.markDelivered(device.accountId, r.id, r.times.Delivered, leasedAt) || sent;
        }
        case "Failed": {
          // A failure already recorded for this lease (the retry is scheduled): a repeat, nothing to do.
          if (row.status !== "queued" || (row.lease_token === null && leaseToken !== undefined && lastFailedLease(row.metadata) === leaseToken)) return false;
          this.messages.updateStatus(device.accountId, r.id, { status: "failed", failureReason: r.failureReason, leaseToken }, { quiet: true });
          this.countResult(device, "failed");
          this.registry.sendResult(device, row, "failed", r.failureReason);
          return true;
        }
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      this.logger.info("device report ignored", { deviceId: device.id, messageId: r.id, state: r.state, code: err.code });
      return false;
    }
  }

  private markSent(device: DeviceRow, row: MessageRow, given: DeviceReport["times"]["Sent"], leasedAt: number | null, leaseToken: string | undefined): boolean {
    // Sent already (a repeat), or no longer to be sent (cancelled, failed): nothing changes.
    if (row.status !== "queued") return false;
    const t = believedTime(given, leasedAt, this.clock());
    this.messages.updateStatus(device.accountId, row.id, { status: "sent", sentAt: iso(t.at), leaseToken }, { deviceSentAt: t.deviceTime, quiet: true });
    this.countResult(device, "sent");
    this.registry.sendResult(device, row, "sent", null);
    return true;
  }

  private markDelivered(accountId: string, id: string, given: DeviceReport["times"]["Delivered"], leasedAt: number | null): boolean {
    const row = this.messages.findRow(accountId, id);
    if (!row || row.status !== "sent") return false;
    if (messageMetadata(row).deliveredAt) return false;
    const now = this.clock();
    const t = believedTime(given, leasedAt, now);
    this.sqlite.transaction(() => {
      const messages = this.store;
      messages.setDeliveredAt(accountId, id, iso(t.at), nextUpdatedAt(now, row.updated_at));
      // The phone's own time was not believed (docs/devices.md): its raw text stays for the timeline.
      if (t.deviceTime !== undefined) messages.setDeviceDeliveredAt(id, t.deviceTime);
      emitMessageDelivered(this.sqlite, accountId, id, now);
    })();
    return true;
  }

  /**
   * POST /api/mobile/v1/webhooks/<device id>: X-Signature = hex HMAC-SHA256(signing key, raw body +
   * X-Timestamp), X-Timestamp within CALLBACK_TOLERANCE_SECONDS; each event id applied once.
   */
  receiveCallback(deviceId: string, raw: string, signature: string | null, timestamp: string | null, ip: string): { duplicate: boolean; event: string } {
    const device = UUID_RE.test(deviceId) ? store.findDevice(this.sqlite, deviceId) : null;
    const bad = (message: string) => new AppError("AUTHENTICATION_ERROR", { message });
    if (!device || device.kind !== "smsgate" || !device.signingKey) throw bad("Unknown device");
    if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) throw bad("X-Signature and X-Timestamp are required");
    const ts = Number(timestamp) * 1_000;
    if (Math.abs(this.clock() - ts) > CALLBACK_TOLERANCE_SECONDS * 1_000) throw bad("X-Timestamp is too far from the server's clock");
    const expected = createHmac("sha256", device.signingKey).update(raw + timestamp).digest("hex");
    if (!/^[0-9a-fA-F]{64}$/.test(signature) || !sameHash(expected, signature.toLowerCase())) throw bad("Bad signature");
    let body: { id?: unknown; event?: unknown; payload?: unknown };
    try {
      body = JSON.parse(raw);
    } catch {
      throw validationError([{ field: "body", message: "The body must be JSON" }]);
    }
    if (!body || typeof body !== "object" || typeof body.id !== "string" || typeof body.event !== "string") {
      throw validationError([{ field: "id", message: "id and event are required" }]);
    }
    this.registry.touch(device, ip);
    const payload = (body.payload && typeof body.payload === "object" ? body.payload : {}) as Record<string, unknown>;
    const eventId = body.id;
    const event = body.event;
    // The event id ("already seen") and the event's effect commit in one transaction: a crash or a
    // database error before the commit leaves neither, so the app's resend is applied once
    // (docs/api-decisions.md, "Nothing the phone reports is lost, and nobody takes the dashboard:
    // hardening round three"). The effect's own transactions nest in it as savepoints; a refused
    // report (an AppError) is logged and the id kept, so a resend is not judged again.
    const changed = this.sqlite.transaction((): boolean | null => {
      if (!store.recordCallbackEvent(this.sqlite, device.id, eventId.slice(0, 100), iso(this.clock()))) return null;
      try {
        return this.applyEvent(device, eventId, event, payload);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        this.logger.info("device webhook ignored", { deviceId: device.id, event, code: err.code });
        return false;
      }
    })();
    if (changed === null) return { duplicate: true, event };
    if (changed) this.changes.message(device.accountId, "updated", "device");
    return { duplicate: false, event };
  }

  /** One phone callback's effect, inside the transaction that records its event id; true when a message changed. */
  private applyEvent(device: DeviceRow, eventId: string, event: string, payload: Record<string, unknown>): boolean {
    const msgId = typeof payload.messageId === "string" ? payload.messageId : undefined;
    const tz = () => store.accountTimeZone(this.sqlite, device.accountId);
    // The same per-item rules as PATCH /message: only the holder's reports count.
    switch (event) {
      case "sms:sent":
        return msgId ? this.applyItem(device, { id: msgId, state: "Sent", states: { Sent: payload.sentAt } }, tz()) : false;
      case "sms:delivered":
        return msgId ? this.applyItem(device, { id: msgId, state: "Delivered", states: { Delivered: payload.deliveredAt } }, tz()) : false;
      case "sms:failed":
        return msgId ? this.applyItem(device, { id: msgId, state: "Failed", recipients: [{ error: typeof payload.reason === "string" ? payload.reason : null }] }, tz()) : false;
      case "system:ping":
        this.applyPing(device, payload);
        return false;
      case "sms:received":
        // The inbound service announces the received text itself (as the phone's).
        this.applyReceived(device, eventId, payload);
        return false;
      case "sms:data-received":
      case "mms:received":
        // Only for the account's SMSGate webhooks of that event, as the phone reported it.
        relayPhoneEvent(this.sqlite, device.accountId, device.id, event, payload, this.clock());
        return false;
      default:
        return false;
    }
  }

  private applyPing(device: DeviceRow, payload: Record<string, unknown>): void {
    const health = (payload.health ?? {}) as { version?: unknown; checks?: Record<string, { observedValue?: unknown }> };
    const level = health.checks?.["battery:level"]?.observedValue;
    const patch: Partial<DeviceRow> = {};
    if (typeof level === "number" && level >= 0 && level <= 100) patch.battery = Math.round(level);
    if (typeof health.version === "string") patch.appVersion = health.version.slice(0, 40);
    store.updateDevice(this.sqlite, device.id, patch);
  }

  private applyReceived(device: DeviceRow, eventId: string, payload: Record<string, unknown>): boolean {
    const inbound = this.registry.inbound;
    if (!inbound) return false;
    const from = payload.sender ?? payload.phoneNumber;
    if (typeof from !== "string" || typeof payload.message !== "string") return false;
    const t = typeof payload.receivedAt === "string" ? normalizeDeviceTime(payload.receivedAt, store.accountTimeZone(this.sqlite, device.accountId)) : undefined;
    const receivedAt = typeof t === "string" ? t : iso(this.clock());
    // The app's own id of the received text: a text reported twice is stored once.
    const externalId = typeof payload.messageId === "string" && payload.messageId ? payload.messageId.slice(0, 100) : eventId;
    inbound.receive(device.accountId, { from, body: payload.message, receivedAt, deviceId: device.id, externalId, simNumber: payload.simNumber, recipient: payload.recipient });
    this.registry.textReceived(device, from, typeof payload.simNumber === "number" ? payload.simNumber : null);
    return true;
  }
}
