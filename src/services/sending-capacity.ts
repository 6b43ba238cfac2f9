/**
 * Sending capacity: what each phone and SIM may still be handed (docs/phones.md, "How fast a
 * phone sends"; docs/api-decisions.md, "Texts that actually go out"). The windows' rules are
 * pure (domain/sending-budget.ts); this module holds their state and decides, for a phone asking
 * for work, which due texts it may take and from which SIM:
 *
 * 1. The phone is ready: not paused as a whole, its last text's random spacing has passed.
 * 2. A text named for a phone or SIM by an SMSGate-API request goes there only.
 * 3. Sticky sender: a contact's text goes from the phone and SIM it last exchanged texts with
 *    (a text reported sent, or one received: `noteExchange`);
 *    it moves only when that phone is paused or offline longer than `stickyMoveAfterMinutes`.
 * 4. A new contact goes to the phone with the most budget left: when another phone with its
 *    event stream open has more left and could send it now, that phone is told to ask instead.
 * 5. The phone's budget and the SIM's both hold, in every window (parts, new recipients).
 *
 * State: every hand-out is a row of send_handouts written in the lease's own transaction
 * (`leased`), mirrored in memory and rebuilt from the rows at boot: the windows are exact across
 * crashes. Pauses are rows of send_pauses (failures a phone reported: sending-failures.ts).
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import type { DeviceRow } from "../db/stores/devices";
import type { PauseRow, SendingStore } from "../db/stores/sending";
import type { MessageStore } from "../db/stores/messages";
import { TextFactsCache } from "./text-facts";
import { slotsOf, type SendingSettings } from "./device-limits";
import { noteLeaseSender } from "../db/stores/messages/history";
import {
  DAY_MS, HOUR_MS, MINUTE_MS, MONTH_MS, WindowLog, resolveLimits, spacingMs,
  type SendingLimits, type WaitReason, type WindowUse,
} from "../domain/sending-budget";

/** A sticky contact moves to another phone once its own is paused or offline this long. */
export const STICKY_MOVE_AFTER_MINUTES_DEFAULT = 10;
/** Hand-outs older than the longest window are pruned this often. */
export const HANDOUT_PRUNE_EVERY_MS = 3_600_000;

/** A phone of the account as presence sees it. */
export interface FleetPhone {
  device: DeviceRow;
  online: boolean;
  /** Epoch ms of the last sign of life, or null. */
  lastSeenMs: number | null;
  /** Its live event stream is open and its send rate lets it take a text: told to ask, it takes it. */
  streaming: boolean;
}

/** What a phone was allowed to take: the SIM, the parts counted, and why it moved if it did. */
export interface Admission {
  slot: number;
  parts: number;
  recipient: string;
  accountId: string;
  moved: string | null;
  /** When it is counted in the windows (the hand-out). */
  at: number;
}

/** A phone's gate for one request for work (LeaseService.next's `gate`). */
export interface SendingGate {
  /** At most this many texts in this hand-out. */
  max: number;
  admit(messageId: string, accountId: string): Admission | null;
  /** Inside the lease's transaction: the hand-out is counted (row + memory). */
  leased(messageId: string, a: Admission): void;
  /** Other phones that should ask now (each was preferred for a new contact). */
  preferred: Set<string>;
  nudgeOther(deviceId: string): void;
  /** Ms until the phone may take its next text (its spacing), once this request is done. */
  after(): number | undefined;
  /** The earliest time a text refused for a budget could go (epoch ms), for a later nudge. */
  retryAt: number | undefined;
  /** The lease transaction failed: memory back to the rows. */
  rollback(): void;
}

export interface PauseView {
  slot: number | null;
  until: string;
  reason: string;
}

export interface WindowCapacity {
  limits: SendingLimits;
  used: WindowUse;
  left: { partsThisMinute: number; partsThisHour: number; partsToday: number; newRecipientsToday: number; newRecipientsThisMonth: number };
}

export interface CapacityView extends WindowCapacity {
  pausedUntil: string | null;
  pauseReason: string | null;
  nextTextAt: string | null;
  sims: Array<WindowCapacity & { slot: number; pausedUntil: string | null; pauseReason: string | null }>;
}

const key = (deviceId: string, slot: number) => `${deviceId}\u0000${slot}`;

export class SendingCapacity {
  private readonly phoneLogs = new Map<string, WindowLog>();
  private readonly simLogs = new Map<string, WindowLog>();
  /** Each phone's earliest next hand-out (its random spacing after the last one). */
  private readonly nextAt = new Map<string, number>();
  /** Pauses by device + slot (slot −1: the whole phone). `until` 0: over, resumption announced. */
  private readonly pauses = new Map<string, PauseRow>();
  private prunedAt = 0;
  /** The queued texts' recipients and parts, read once each (services/text-facts.ts). */
  private readonly texts: TextFactsCache;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly store: SendingStore,
    messages: MessageStore,
    /** The account's phones with their presence (services/phone-presence.ts). */
    private readonly fleet: (accountId: string) => FleetPhone[],
    /** The random pause's source (tests and the simulator fix it). */
    private readonly random: () => number = Math.random,
    /** The account's `sending` settings (the account settings service); tests may replace it. */
    public settingsOf: (accountId: string) => SendingSettings = () => ({ limits: {}, stickyMoveAfterMinutes: STICKY_MOVE_AFTER_MINUTES_DEFAULT }),
  ) {
    this.texts = new TextFactsCache((accountId, id) => messages.find(accountId, id));
  }

  /** Boot: the windows from the hand-outs of the last 30 days, and the pauses. */
  load(): void {
    this.phoneLogs.clear();
    this.simLogs.clear();
    this.pauses.clear();
    const now = this.clock();
    for (const h of this.store.handoutsSince(now - MONTH_MS)) this.addToMemory(h.deviceId, h.slot, h.at, h.parts, h.recipient);
    for (const p of this.store.pauses()) this.pauses.set(key(p.deviceId, p.slot), p);
  }

  private addToMemory(deviceId: string, slot: number, at: number, parts: number, recipient: string): void {
    let p = this.phoneLogs.get(deviceId);
    if (!p) this.phoneLogs.set(deviceId, (p = new WindowLog()));
    p.add({ at, parts, recipient });
    let s = this.simLogs.get(key(deviceId, slot));
    if (!s) this.simLogs.set(key(deviceId, slot), (s = new WindowLog()));
    s.add({ at, parts, recipient });
  }

  phoneLog(deviceId: string): WindowLog {
    return this.phoneLogs.get(deviceId) ?? new WindowLog();
  }

  simLog(deviceId: string, slot: number): WindowLog {
    return this.simLogs.get(key(deviceId, slot)) ?? new WindowLog();
  }

  /** The phone's limits (slot null) or one SIM's: account defaults, then the phone's, then the SIM's. */
  limits(device: Pick<DeviceRow, "accountId" | "sendingLimits">, slot: number | null = null): SendingLimits {
    const doc = device.sendingLimits;
    const account = this.settingsOf(device.accountId).limits;
    if (slot === null) return resolveLimits(account, doc.limits);
    // Slot 0 (the phone's own default SIM) takes what the owner set for SIM 1.
    const sim = doc.sims.find((s) => s.slot === (slot || 1))?.limits;
    return resolveLimits(account, doc.limits, sim);
  }

  // ------------------------------------------------------------ pauses

  /** The pause in force on the phone (slot −1) or SIM at `now`, if any. */
  pauseOf(deviceId: string, slot: number, now = this.clock()): PauseRow | undefined {
    const p = this.pauses.get(key(deviceId, slot));
    return p && p.until > now ? p : undefined;
  }

  /** The pause that stops this SIM: the phone's own, else the SIM's (the later one). */
  blocking(deviceId: string, slot: number, now: number): PauseRow | undefined {
    const a = this.pauseOf(deviceId, -1, now);
    const b = this.pauseOf(deviceId, slot, now);
    return a && b ? (a.until >= b.until ? a : b) : (a ?? b);
  }

  /** Every slot of the phone paused: the earliest end, else undefined. */
  phonePausedUntil(device: DeviceRow, now: number): PauseRow | undefined {
    let earliest: PauseRow | undefined;
    for (const slot of slotsOf(device)) {
      const p = this.blocking(device.id, slot, now);
      if (!p) return undefined;
      if (!earliest || p.until < earliest.until) earliest = p;
    }
    return earliest;
  }

  pauseRow(deviceId: string, slot: number): PauseRow | undefined {
    return this.pauses.get(key(deviceId, slot));
  }

  /** Writes a pause (inside the caller's transaction) and mirrors it. */
  setPause(p: PauseRow): void {
    this.store.upsertPause(p);
    this.pauses.set(key(p.deviceId, p.slot), p);
  }

  clearPause(deviceId: string, slot: number): void {
    this.store.deletePause(deviceId, slot);
    this.pauses.delete(key(deviceId, slot));
  }

  /** Pauses whose time is up and whose resumption is not yet announced. */
  endedPauses(now: number): PauseRow[] {
    return [...this.pauses.values()].filter((p) => p.until !== 0 && p.until <= now);
  }

  /** A removed phone: its rows and memory go. */
  forgetDevice(deviceId: string): void {
    this.store.forgetDevice(deviceId);
    this.phoneLogs.delete(deviceId);
    this.nextAt.delete(deviceId);
    for (const k of [...this.simLogs.keys()]) if (k.startsWith(deviceId + "\u0000")) this.simLogs.delete(k);
    for (const k of [...this.pauses.keys()]) if (k.startsWith(deviceId + "\u0000")) this.pauses.delete(k);
  }

  // ------------------------------------------------------------ hand-outs

  private stickyMoveMs(accountId: string): number {
    return this.settingsOf(accountId).stickyMoveAfterMinutes * MINUTE_MS;
  }

  /** Why a sticky phone is gone long enough for its contacts to move (null: it is not). */
  private goneReason(p: FleetPhone | undefined, slot: number, now: number, moveMs: number): string | null {
    if (!p) return "its phone was removed";
    if (!p.online && (p.lastSeenMs === null || now - p.lastSeenMs >= moveMs)) return `"${p.device.name}" was offline`;
    const pause = this.blocking(p.device.id, slot, now);
    if (pause && (now - pause.since >= moveMs || pause.until - pause.since > moveMs)) return `"${p.device.name}" was paused (${pause.reason})`;
    return null;
  }

  /** What the phone or SIM may still take: the tightest of its windows, in parts (an hour's view). */
  private hourLeft(deviceId: string, device: DeviceRow, now: number): number {
    const l = this.limits(device);
    const log = this.phoneLog(deviceId);
    return Math.min(l.partsPerHour - log.parts(now, HOUR_MS), l.partsPerDay - log.parts(now, DAY_MS));
  }

  /**
   * Whether the phone may be handed anything now; when not, how long until it may (every SIM
   * paused, or the random pause after its last text not yet over).
   */
  readiness(device: DeviceRow, now = this.clock()): { ready: true } | { ready: false; waitMs: number } {
    const paused = this.phonePausedUntil(device, now);
    if (paused) return { ready: false, waitMs: paused.until - now };
    const next = this.nextAt.get(device.id) ?? 0;
    if (next > now) return { ready: false, waitMs: next - now };
    // Not even one part fits in the phone's windows: no walk of the queue can find anything.
    const fits = this.phoneLog(device.id).partsFitAt(this.limits(device), now);
    if (fits > now) return { ready: false, waitMs: fits - now };
    return { ready: true };
  }

  /**
   * Does this SIM of the phone have room for the text now? Both the phone's budget (Android's
   * per-app limit is the phone's) and the SIM's (the carrier's) must hold.
   */
  fits(device: DeviceRow, slot: number, parts: number, recipient: string, now: number): { ok: true } | { ok: false; reason: WaitReason; until: number } {
    const a = this.phoneLog(device.id).check(this.limits(device), now, parts, recipient);
    const b = this.simLog(device.id, slot).check(this.limits(device, slot), now, parts, recipient);
    if (a.ok && b.ok) return { ok: true };
    const worst = !a.ok && (b.ok || a.until! >= b.until!) ? a : b;
    return { ok: false, reason: worst.reason!, until: worst.until! };
  }

  /** The gate for one request for work of `device` (null: it may take nothing now). */
  gateFor(
    device: DeviceRow,
    now = this.clock(),
    requestedOf: (messageId: string) => { deviceId: string | null; simNumber: number | null } | null = () => null,
    nudgeOther: (deviceId: string) => void = () => {},
  ): SendingGate {
    const fleet = this.fleet(device.accountId);
    const byId = new Map(fleet.map((p) => [p.device.id, p]));
    const moveMs = this.stickyMoveMs(device.accountId);
    const slots = slotsOf(device);
    const spacing = this.limits(device).spacingSeconds;
    // Who each contact last exchanged texts with, looked up once per request (nothing in a walk changes it).
    const senders = new Map<string, ReturnType<SendingStore["sender"]>>();
    const senderOf = (accountId: string, phone: string) => {
      if (!senders.has(phone)) senders.set(phone, this.store.sender(accountId, phone));
      return senders.get(phone)!;
    };
    const preferred = new Set<string>();
    const myLeft = () => this.hourLeft(device.id, device, now);
    const gate: SendingGate = {
      // One text at a time while a pause applies: it is handed out when the phone can send it, so
      // the windows count what Android and the carrier see (docs/phones.md, "How fast a phone sends").
      max: spacing.max > 0 ? 1 : Number.MAX_SAFE_INTEGER,
      preferred,
      nudgeOther,
      retryAt: undefined,
      after: () => {
        const next = this.nextAt.get(device.id);
        return next !== undefined && next > now ? next - now : undefined;
      },
      rollback: () => this.reload(),
      admit: (messageId, accountId) => {
        const at = now;
        const text = this.texts.get(accountId, messageId, requestedOf);
        if (!text) return null;
        const { parts, recipient, asked } = text;
        let candidates: number[];
        let moved: string | null = null;
        if (asked?.deviceId && asked.deviceId !== device.id) return null;
        if (asked?.simNumber) candidates = [asked.simNumber];
        else {
          const sticky = asked?.deviceId ? null : senderOf(accountId, recipient);
          if (sticky && sticky.deviceId !== device.id) {
            const gone = this.goneReason(byId.get(sticky.deviceId), sticky.slot, now, moveMs);
            if (gone === null) return null;
            moved = gone;
          }
          if (sticky && sticky.deviceId === device.id && slots.includes(sticky.slot)) {
            const p = this.blocking(device.id, sticky.slot, now);
            if (p) {
              if (now - p.since < moveMs && p.until - p.since <= moveMs) return null;
              moved = `SIM ${sticky.slot || 1} was paused (${p.reason})`;
              candidates = slots.filter((s) => s !== sticky.slot);
            } else candidates = [sticky.slot];
          } else {
            candidates = [...slots];
            if (!sticky) {
              // A new contact: the connected phone with the most budget left takes it.
              const mine = myLeft();
              for (const p of fleet) {
                // Only a phone that hears a nudge at once (its event stream open) is waited for.
                if (p.device.id === device.id || !p.streaming) continue;
                if (this.readiness(p.device, now).ready === false) continue;
                const theirs = this.hourLeft(p.device.id, p.device, now);
                if (theirs > mine + parts && slotsOf(p.device).some((s) => !this.blocking(p.device.id, s, now) && this.fits(p.device, s, parts, recipient, now).ok)) {
                  preferred.add(p.device.id);
                  return null;
                }
              }
            }
          }
        }
        // The SIM with the most left in its hour first.
        const open = candidates
          .filter((s) => !this.blocking(device.id, s, now))
          .map((s) => ({ s, left: this.limits(device, s).partsPerHour - this.simLog(device.id, s).parts(at, HOUR_MS) }))
          .sort((a, b) => b.left - a.left);
        for (const { s } of open) {
          const f = this.fits(device, s, parts, recipient, at);
          if (f.ok) return { slot: s, parts, recipient, accountId, moved, at };
          gate.retryAt = Math.min(gate.retryAt ?? Infinity, f.until);
        }
        return null;
      },
      leased: (messageId, a) => {
        this.store.insertHandout({ deviceId: device.id, slot: a.slot, at: a.at, parts: a.parts, recipient: a.recipient });
        noteLeaseSender(this.sqlite, messageId, a.slot, a.moved);
        this.addToMemory(device.id, a.slot, a.at, a.parts, a.recipient);
        this.nextAt.set(device.id, now + spacingMs(spacing, this.random()));
      },
    };
    return gate;
  }

  /**
   * A text was exchanged with `phone` through this phone and SIM (sent, or received): the
   * contact's next texts go from it. A hand-out alone is no exchange: a text handed to a phone
   * that vanished never reached the customer.
   */
  /** A text from `from` arrived on this phone and SIM: its next texts go from there (sticky sender). */
  noteReceived(device: DeviceRow, from: string, simNumber: number | null, at: number): void {
    if (!/^\+\d{6,15}$/.test(from)) return;
    const slots = slotsOf(device);
    const slot = simNumber !== null && slots.includes(simNumber) ? simNumber : slots[0];
    this.noteExchange(device.accountId, from, device.id, slot, at);
  }

  noteExchange(accountId: string, phone: string, deviceId: string, slot: number, at: number): void {
    this.store.setSender({ accountId, phone, deviceId, slot, at });
  }

  /** After a failed transaction: memory back to what the rows say. */
  reload(): void {
    const next = new Map(this.nextAt);
    this.load();
    for (const [k, v] of next) this.nextAt.set(k, v);
  }

  /** Drops hand-outs no window sees any more (hourly). */
  prune(now = this.clock()): void {
    if (now - this.prunedAt < HANDOUT_PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.store.pruneHandouts(now - MONTH_MS);
    for (const l of this.phoneLogs.values()) l.prune(now);
    for (const l of this.simLogs.values()) l.prune(now);
  }

  // ------------------------------------------------------------ views

  private windowCapacity(limits: SendingLimits, log: WindowLog, now: number): WindowCapacity {
    const used = log.use(now);
    const left = (n: number) => Math.max(0, n);
    return {
      limits,
      used,
      left: {
        partsThisMinute: left(limits.partsPerMinute - used.partsLastMinute),
        partsThisHour: left(limits.partsPerHour - used.partsLastHour),
        partsToday: left(limits.partsPerDay - used.partsLastDay),
        newRecipientsToday: left(limits.newRecipientsPerDay - used.newRecipientsLastDay),
        newRecipientsThisMonth: left(limits.newRecipientsPerMonth - used.newRecipientsLastMonth),
      },
    };
  }

  /** GET /v1/devices/<id> `capacity`. */
  capacity(device: DeviceRow, now = this.clock()): CapacityView {
    const iso = (ms: number) => new Date(ms).toISOString();
    const phonePause = this.phonePausedUntil(device, now);
    const next = this.nextAt.get(device.id);
    return {
      ...this.windowCapacity(this.limits(device), this.phoneLog(device.id), now),
      pausedUntil: phonePause ? iso(phonePause.until) : null,
      pauseReason: phonePause?.reason ?? null,
      nextTextAt: next !== undefined && next > now ? iso(next) : null,
      sims: slotsOf(device).map((slot) => {
        const p = this.blocking(device.id, slot, now);
        return { slot, ...this.windowCapacity(this.limits(device, slot), this.simLog(device.id, slot), now), pausedUntil: p ? iso(p.until) : null, pauseReason: p?.reason ?? null };
      }),
    };
  }

  /** The phone the contact's texts go from (null: a new contact). */
  senderOf(accountId: string, phone: string): { deviceId: string; slot: number } | null {
    const s = this.store.sender(accountId, phone);
    return s ? { deviceId: s.deviceId, slot: s.slot } : null;
  }

  /** Parts and recipient of queued texts, in the order given (the estimate deals them). */
  textsAhead(accountId: string, entries: Array<{ id: string }>, requestedOf: (messageId: string) => { deviceId: string | null; simNumber: number | null } | null): Array<{ parts: number; recipient: string }> {
    const out: Array<{ parts: number; recipient: string }> = [];
    for (const e of entries) out.push(this.texts.get(accountId, e.id, requestedOf) ?? { parts: 1, recipient: "" });
    return out;
  }

  /** The earliest next hand-out time of the phone (spacing), for the estimate. */
  nextHandOutAt(deviceId: string): number {
    return this.nextAt.get(deviceId) ?? 0;
  }
}
