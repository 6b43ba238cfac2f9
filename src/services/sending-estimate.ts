/**
 * The one capacity model (docs/api-decisions.md, "Texts that actually go out"): when will the
 * n-th text in an account's queue be handed to a phone, given the phones' remaining budgets in
 * every window, their random pause, their pauses, and what is ahead of it. The webhook's
 * `estimatedDelivery`, the broadcast confirmation, automation starts and the dashboard all take
 * their times from here (through MessageQueue.position's estimator, and `fleetSummary`).
 *
 * How: each phone is a lane seeded with its real hand-outs of the last day (and the new
 * recipients of the last 30 days); the next texts are dealt one by one to the lane that can take
 * one earliest, each counted as one part to a new number (the common case of a shop's form and
 * broadcast traffic). The schedule is computed for what the queue holds and cached a second.
 * With no phone connected, the account's phones are taken as if connected (or one phone at the
 * account's limits when it has none), and the answer says so (`basis: "no-phone-connected"`).
 */
import type { Clock } from "../lib/clock";
import { DAY_MS, HOUR_MS, MINUTE_MS, MONTH_MS, resolveLimits, textsPerHour, type SendingLimits } from "../domain/sending-budget";
import type { FleetPhone, SendingCapacity } from "./sending-capacity";
import { slotsOf } from "./device-limits";

export type EstimateBasis = "connected-phones" | "no-phone-connected";

/** The schedule is kept this long per account before it is dealt again. */
export const ESTIMATE_CACHE_MS = 1_000;
/** At most this many texts are dealt; later positions go at the fleet's long-run rate. */
export const ESTIMATE_DEAL_MAX = 50_000;

/** One rolling window of a lane: times and parts, oldest first, with their sum. */
class SimWindow {
  private times: number[] = [];
  private parts: number[] = [];
  private head = 0;
  private sum = 0;
  constructor(
    private readonly ms: number,
    private readonly limit: number,
  ) {}

  add(at: number, parts: number): void {
    this.times.push(at);
    this.parts.push(parts);
    this.sum += parts;
  }

  /** The earliest time ≥ t at which `need` more fit. */
  freeAt(t: number, need: number): number {
    while (this.head < this.times.length && this.times[this.head] <= t - this.ms) this.sum -= this.parts[this.head++];
    if (this.sum + need <= Math.max(this.limit, need)) return t;
    let left = this.sum;
    for (let i = this.head; i < this.times.length; i++) {
      left -= this.parts[i];
      if (left + need <= this.limit) return this.times[i] + this.ms;
    }
    return t + this.ms;
  }
}

interface Lane {
  cursor: number;
  spacingMs: number;
  windows: SimWindow[];
  recipients: SimWindow[];
}

export interface FleetSummary {
  basis: EstimateBasis;
  phones: number;
  phonesConnected: number;
  /** Texts an hour the fleet keeps up in the long run. */
  textsPerHour: number;
}

export class SendingEstimator {
  private readonly cache = new Map<string, { at: number; times: number[]; basis: EstimateBasis; perHour: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly capacity: SendingCapacity,
    private readonly fleet: (accountId: string) => FleetPhone[],
  ) {}

  /** The phones the estimate counts on, and on what basis. */
  private phones(accountId: string, now: number): { basis: EstimateBasis; lanes: Array<{ id: string | null; limits: SendingLimits; slots: number }>; connected: number; all: number } {
    const all = this.fleet(accountId);
    const connected = all.filter((p) => p.online && !this.capacity.phonePausedUntil(p.device, now));
    const chosen = connected.length ? connected : all;
    const lanes: Array<{ id: string | null; limits: SendingLimits; slots: number }> = chosen.map((p) => ({ id: p.device.id, limits: this.capacity.limits(p.device), slots: slotsOf(p.device).length }));
    if (!lanes.length) lanes.push({ id: null, limits: resolveLimits(this.capacity.settingsOf(accountId).limits), slots: 1 });
    return { basis: connected.length ? "connected-phones" : "no-phone-connected", lanes, connected: connected.length, all: all.length };
  }

  private lane(id: string | null, l: SendingLimits, slots: number, now: number): Lane {
    const windows = [new SimWindow(MINUTE_MS, l.partsPerMinute), new SimWindow(HOUR_MS, l.partsPerHour), new SimWindow(DAY_MS, l.partsPerDay)];
    const recipients = [new SimWindow(DAY_MS, l.newRecipientsPerDay * slots), new SimWindow(MONTH_MS, l.newRecipientsPerMonth * slots)];
    if (id !== null) {
      const log = this.capacity.phoneLog(id);
      for (const h of log.since(now - MONTH_MS)) {
        if (h.at > now - DAY_MS) for (const w of windows) w.add(h.at, h.parts);
      }
      // Each recipient counted once, at its latest hand-out (it leaves the window then).
      const last = new Map<string, number>();
      for (const h of log.since(now - MONTH_MS)) last.set(h.recipient, h.at);
      const times = [...last.values()].sort((a, b) => a - b);
      for (const t of times) {
        if (t > now - DAY_MS) recipients[0].add(t, 1);
        recipients[1].add(t, 1);
      }
    }
    const spacingMs = ((l.spacingSeconds.min + l.spacingSeconds.max) / 2) * 1_000;
    const cursor = Math.max(now, id !== null ? this.capacity.nextHandOutAt(id) : now);
    return { cursor, spacingMs, windows, recipients };
  }

  /** The earliest time a lane can take one more text. */
  private nextFor(lane: Lane): number {
    let t = lane.cursor;
    for (let i = 0; i < 8; i++) {
      let u = t;
      for (const w of lane.windows) u = Math.max(u, w.freeAt(u, 1));
      for (const w of lane.recipients) u = Math.max(u, w.freeAt(u, 1));
      if (u === t) break;
      t = u;
    }
    return t;
  }

  private deal(accountId: string, n: number, now: number): { times: number[]; basis: EstimateBasis; perHour: number } {
    const fleet = this.phones(accountId, now);
    const lanes = fleet.lanes.map((p) => this.lane(p.id, p.limits, p.slots, now));
    const times: number[] = [];
    const next = lanes.map((l) => this.nextFor(l));
    for (let k = 0; k < n; k++) {
      let best = 0;
      for (let i = 1; i < lanes.length; i++) if (next[i] < next[best]) best = i;
      const t = next[best];
      times.push(t);
      const lane = lanes[best];
      for (const w of lane.windows) w.add(t, 1);
      for (const w of lane.recipients) w.add(t, 1);
      lane.cursor = t + lane.spacingMs;
      next[best] = this.nextFor(lane);
    }
    const perHour = fleet.lanes.reduce((sum, p) => sum + textsPerHour(p.limits), 0);
    return { times, basis: fleet.basis, perHour };
  }

  /**
   * When the text at `queuePosition` (1-based) in the account's queue is handed to a phone, not
   * before `scheduledFor` (epoch ms).
   */
  estimate(accountId: string, queuePosition: number, scheduledFor: number, now = this.clock()): { at: number; basis: EstimateBasis } {
    let c = this.cache.get(accountId);
    if (!c || now - c.at >= ESTIMATE_CACHE_MS || now < c.at || (queuePosition > c.times.length && c.times.length < ESTIMATE_DEAL_MAX)) {
      const n = Math.min(ESTIMATE_DEAL_MAX, Math.max(queuePosition + 64, (c?.times.length ?? 0) * 2, 256));
      c = { at: now, ...this.deal(accountId, n, now) };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(accountId, c);
    }
    let at: number;
    if (queuePosition <= c.times.length) at = c.times[Math.max(0, queuePosition - 1)];
    else at = c.times[c.times.length - 1] + ((queuePosition - c.times.length) / Math.max(0.001, c.perHour)) * HOUR_MS;
    return { at: Math.ceil(Math.max(at, scheduledFor)), basis: c.basis };
  }

  /** How long `n` texts take from now, with the phones the account has (broadcasts, automations). */
  duration(accountId: string, ahead: number, n: number, now = this.clock()): { ms: number; basis: EstimateBasis } {
    if (n <= 0) return { ms: 0, basis: this.phones(accountId, now).basis };
    const last = this.estimate(accountId, ahead + n, now, now);
    return { ms: Math.max(0, last.at - now), basis: last.basis };
  }

  /** The fleet as the dashboard and the broadcast confirmation describe it. */
  summary(accountId: string, now = this.clock()): FleetSummary {
    const fleet = this.phones(accountId, now);
    const perHour = fleet.lanes.reduce((sum, p) => sum + textsPerHour(p.limits), 0);
    return { basis: fleet.basis, phones: fleet.all, phonesConnected: fleet.connected, textsPerHour: Math.round(perHour) };
  }
}
