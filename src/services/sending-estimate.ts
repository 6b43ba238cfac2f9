/**
 * The one capacity model (docs/api-decisions.md, "Texts that actually go out"): when will the
 * n-th text in an account's queue be handed to a phone, given the phones' remaining budgets in
 * every window, their random pause, their pauses, and what is ahead of it. The webhook's
 * `estimatedDelivery`, the broadcast confirmation, automation starts and the dashboard all take
 * their times from here (through MessageQueue.position's estimator, and `fleetSummary`).
 *
 * How: each phone is a lane seeded with its real hand-outs of the last day (and the new
 * recipients of the last 30 days); the queued texts are dealt one by one, in queue order, to the
 * lane that can take one earliest, each counted as the parts it goes out as and as a new
 * recipient only when no phone texted that number in the last 30 days, from the contact's own
 * phone when it has one (docs/api-decisions.md, "Sending engine, round two"). Positions past what
 * the queue holds (or past TEXTS_READ_MAX) count as the average text read, to a new number. The schedule is cached a second.
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
/** At most this many queued texts are read for their parts and recipient. */
export const TEXTS_READ_MAX = 5_000;

/** A queued text as the deal sees it. */
export interface TextAhead {
  parts: number;
  recipient: string;
}

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

  /** A hand-out at `at`; what left the window by then is dropped (a lane's times only grow). */
  add(at: number, parts: number): void {
    this.times.push(at);
    this.parts.push(parts);
    this.sum += parts;
    while (this.head < this.times.length && this.times[this.head] <= at - this.ms) this.sum -= this.parts[this.head++];
  }

  /**
   * The earliest time ≥ t at which `need` more fit. Reads only: the deal asks every lane about
   * times it may not take (another lane is sooner), so nothing is dropped here.
   */
  freeAt(t: number, need: number): number {
    let i = this.head;
    let sum = this.sum;
    while (i < this.times.length && this.times[i] <= t - this.ms) sum -= this.parts[i++];
    if (sum + need <= Math.max(this.limit, need)) return t;
    let left = sum;
    for (; i < this.times.length; i++) {
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

/** How long a number of texts take with the account's phones (services/sending-estimate.ts, `textsTime`). */
export interface SendingTime {
  texts: number;
  minutes: number;
  phones: number;
  phonesConnected: number;
  basis: EstimateBasis;
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
  /** The account's first `n` queued texts in queue order (set by DeviceService); unset, none is known. */

  constructor(
    private readonly clock: Clock,
    private readonly capacity: SendingCapacity,
    private readonly fleet: (accountId: string) => FleetPhone[],
    /** The next n queued texts of an account, in queue order, with their parts and recipients. */
    private readonly textsAhead?: (accountId: string, n: number) => TextAhead[],
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

  private lane(id: string | null, l: SendingLimits, now: number, known: Map<string, number>): Lane {
    const windows = [new SimWindow(MINUTE_MS, l.partsPerMinute), new SimWindow(HOUR_MS, l.partsPerHour), new SimWindow(DAY_MS, l.partsPerDay)];
    // The phone's own caps hold over all its SIMs together (SendingCapacity.fits checks both).
    const recipients = [new SimWindow(DAY_MS, l.newRecipientsPerDay), new SimWindow(MONTH_MS, l.newRecipientsPerMonth)];
    if (id !== null) {
      const log = this.capacity.phoneLog(id);
      for (const h of log.since(now - MONTH_MS)) {
        if (h.at > now - DAY_MS) for (const w of windows) w.add(h.at, h.parts);
      }
      // Each recipient counted once, at its latest hand-out (it leaves the window then).
      const last = new Map<string, number>();
      for (const h of log.since(now - MONTH_MS)) last.set(h.recipient, h.at);
      for (const [r, t] of last) known.set(r, Math.max(t, known.get(r) ?? 0));
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

  /**
   * The earliest time a lane can take one more text of `parts` parts, to a number last texted at
   * `last` (undefined: never): a new recipient for the day's or the month's cap when not texted in it.
   */
  private nextFor(lane: Lane, parts: number, last: number | undefined): number {
    let t = lane.cursor;
    for (let i = 0; i < 8; i++) {
      let u = t;
      for (const w of lane.windows) u = Math.max(u, w.freeAt(u, parts));
      if (last === undefined || last <= u - DAY_MS) u = Math.max(u, lane.recipients[0].freeAt(u, 1));
      if (last === undefined || last <= u - MONTH_MS) u = Math.max(u, lane.recipients[1].freeAt(u, 1));
      if (u === t) break;
      t = u;
    }
    return t;
  }

  private deal(accountId: string, n: number, now: number): { times: number[]; basis: EstimateBasis; perHour: number } {
    const fleet = this.phones(accountId, now);
    const known = new Map<string, number>();
    const lanes = fleet.lanes.map((p) => this.lane(p.id, p.limits, now, known));
    const ahead = this.textsAhead?.(accountId, Math.min(n, TEXTS_READ_MAX)) ?? [];
    const times: number[] = [];
    // Past the texts read, each counts as the average of those read (a burst being queued).
    const avgParts = ahead.length ? ahead.reduce((sum, x) => sum + x.parts, 0) / ahead.length : 1;
    for (let k = 0; k < n; k++) {
      const text = ahead[k];
      const parts = text?.parts ?? avgParts;
      const last = text?.recipient ? known.get(text.recipient) : undefined;
      // A contact already texted goes from its own phone when that phone is counted (sticky sender).
      const sticky = last !== undefined ? this.capacity.senderOf(accountId, text!.recipient)?.deviceId : undefined;
      const pinned = sticky ? fleet.lanes.findIndex((p) => p.id === sticky) : -1;
      let best = 0;
      let t = Infinity;
      for (let i = 0; i < lanes.length; i++) {
        if (pinned >= 0 && i !== pinned) continue;
        const u = this.nextFor(lanes[i], parts, last);
        if (u < t) [best, t] = [i, u];
      }
      times.push(t);
      const lane = lanes[best];
      for (const w of lane.windows) w.add(t, parts);
      if (last === undefined || last <= t - DAY_MS) lane.recipients[0].add(t, 1);
      if (last === undefined || last <= t - MONTH_MS) lane.recipients[1].add(t, 1);
      if (text?.recipient) known.set(text.recipient, t);
      lane.cursor = t + lane.spacingMs;
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
      // Dealt a little past the position asked; doubled when a burst of submissions outgrows it.
      const grow = c && now - c.at < ESTIMATE_CACHE_MS && now >= c.at ? c.times.length * 2 : 0;
      const n = Math.min(ESTIMATE_DEAL_MAX, Math.max(Math.ceil(queuePosition * 1.25) + 64, grow, 256));
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

  /**
   * How long `n` texts take once due, behind what the queue holds, with the phones as the answer
   * names them (an automation start's `sending`: "about 3 h 20 min with your 2 phones").
   */
  textsTime(accountId: string, ahead: number, n: number, now = this.clock()): SendingTime {
    const f = this.summary(accountId, now);
    const d = this.duration(accountId, ahead, n, now);
    return { texts: n, minutes: Math.ceil(d.ms / 60_000), phones: f.phones, phonesConnected: f.phonesConnected, basis: d.basis };
  }

  /** The fleet as the dashboard and the broadcast confirmation describe it. */
  summary(accountId: string, now = this.clock()): FleetSummary {
    const fleet = this.phones(accountId, now);
    const perHour = fleet.lanes.reduce((sum, p) => sum + textsPerHour(p.limits), 0);
    return { basis: fleet.basis, phones: fleet.all, phonesConnected: fleet.connected, textsPerHour: Math.round(perHour) };
  }
}
