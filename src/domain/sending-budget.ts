/**
 * Sending budgets: how many SMS parts and new recipients a phone or a SIM may be handed in each
 * rolling window, and the pause between two texts (docs/phones.md, "How fast a phone sends").
 * Pure: no clock, no database; times are epoch milliseconds from the caller.
 *
 * - A budget has parts per minute / hour / day, distinct new recipients per day / month (a number
 *   the SIM has not texted in that window), and a random spacing between two texts.
 * - Limits resolve account defaults → the phone's own → the SIM's own, key by key.
 * - Windows roll: the minute is the last 60 s, the hour the last 3,600 s, the day the last 24 h,
 *   the month the last 30 days. `WindowLog` holds a phone's or SIM's hand-outs in time order and
 *   answers "may this text go now, and if not, until when must it wait".
 * - Parts are counted as the phone splits the text (domain/sms-encoding.ts).
 */
import { smsInfo } from "./sms-encoding";
import type { FieldError } from "./submission";

export interface Spacing {
  min: number;
  max: number;
}

export interface SendingLimits {
  partsPerMinute: number;
  partsPerHour: number;
  partsPerDay: number;
  newRecipientsPerDay: number;
  newRecipientsPerMonth: number;
  /** Seconds between two texts of one phone, drawn at random in [min, max]. */
  spacingSeconds: Spacing;
}

/** What an account, a phone or a SIM sets: any key it leaves out comes from the level above. */
export type LimitsOverride = Partial<SendingLimits>;

/**
 * The defaults survive stock Android and an ordinary SIM (docs/phones.md, "Where each default
 * comes from"): Android lets one app send 30 parts a minute, we leave 10 for the owner's own
 * texts; carriers look hard at personal SIMs past a few hundred texts an hour or a day.
 */
export const DEFAULT_SENDING_LIMITS: Readonly<SendingLimits> = Object.freeze({
  partsPerMinute: 20,
  partsPerHour: 200,
  partsPerDay: 1_000,
  newRecipientsPerDay: 300,
  newRecipientsPerMonth: 3_000,
  spacingSeconds: Object.freeze({ min: 3, max: 8 }),
});

/** The largest value any limit takes (a sanity bound, not advice). */
export const LIMIT_MAX = 1_000_000;
export const SPACING_MAX_SECONDS = 3_600;

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const MONTH_MS = 30 * DAY_MS;

export const COUNT_KEYS = ["partsPerMinute", "partsPerHour", "partsPerDay", "newRecipientsPerDay", "newRecipientsPerMonth"] as const;
export const LIMIT_KEYS = [...COUNT_KEYS, "spacingSeconds"] as const;

/** Parts a text goes out as. */
export function partsOf(text: string): number {
  return smsInfo(text).segments;
}

/**
 * Reads a limits object as sent in a body: each count a positive whole number, spacing
 * `{min, max}` whole seconds with min ≤ max. `null` for a key means "back to the level above".
 * Errors name the field under `field` (e.g. `sims[0].limits.partsPerHour`).
 */
export function parseLimits(v: unknown, field: string): { ok: true; limits: LimitsOverride } | { ok: false; errors: FieldError[] } {
  if (v === null) return { ok: true, limits: {} };
  if (typeof v !== "object" || Array.isArray(v)) {
    return { ok: false, errors: [{ field, message: `${field} must be an object of limits (${LIMIT_KEYS.join(", ")})`, requirement: "object", provided: Array.isArray(v) ? "array" : typeof v }] };
  }
  const o = v as Record<string, unknown>;
  const errors: FieldError[] = [];
  const out: LimitsOverride = {};
  for (const k of Object.keys(o)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(k)) {
      errors.push({ field: `${field}.${k.slice(0, 50)}`, message: `unknown limit '${k.slice(0, 50)}'; allowed: ${LIMIT_KEYS.join(", ")}`, requirement: LIMIT_KEYS.join(", "), provided: k.slice(0, 50) });
    }
  }
  for (const k of COUNT_KEYS) {
    if (!Object.hasOwn(o, k) || o[k] === null) continue;
    const n = o[k];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > LIMIT_MAX) {
      errors.push({ field: `${field}.${k}`, message: `${k} must be a whole number from 1 to ${LIMIT_MAX}`, requirement: `integer 1-${LIMIT_MAX}`, provided: n });
    } else out[k] = n;
  }
  if (Object.hasOwn(o, "spacingSeconds") && o.spacingSeconds !== null) {
    const s = o.spacingSeconds;
    const f = `${field}.spacingSeconds`;
    if (typeof s !== "object" || Array.isArray(s) || s === null) {
      errors.push({ field: f, message: "spacingSeconds must be {min, max} in whole seconds", requirement: "{min, max}", provided: typeof s });
    } else {
      const so = s as Record<string, unknown>;
      const bad = Object.keys(so).filter((k) => k !== "min" && k !== "max");
      for (const k of bad) errors.push({ field: `${f}.${k.slice(0, 50)}`, message: "spacingSeconds has only min and max", requirement: "min, max", provided: k.slice(0, 50) });
      const sec = (k: "min" | "max"): number | null => {
        const n = so[k];
        if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > SPACING_MAX_SECONDS) {
          errors.push({ field: `${f}.${k}`, message: `spacingSeconds.${k} must be a whole number of seconds from 0 to ${SPACING_MAX_SECONDS}`, requirement: `integer 0-${SPACING_MAX_SECONDS}`, provided: n ?? null });
          return null;
        }
        return n;
      };
      const min = sec("min");
      const max = sec("max");
      if (min !== null && max !== null) {
        if (min > max) errors.push({ field: `${f}.min`, message: "spacingSeconds.min must not be more than spacingSeconds.max", requirement: "min <= max", provided: min });
        else if (bad.length === 0) out.spacingSeconds = { min, max };
      }
    }
  }
  const r = { ...DEFAULT_SENDING_LIMITS, ...out };
  // Windows nest: a smaller window may not allow more than a larger one.
  if (errors.length === 0) {
    const order: Array<[keyof SendingLimits, keyof SendingLimits]> = [["partsPerMinute", "partsPerHour"], ["partsPerHour", "partsPerDay"], ["newRecipientsPerDay", "newRecipientsPerMonth"]];
    for (const [small, big] of order) {
      if (out[small] !== undefined && out[big] !== undefined && (out[small] as number) > (out[big] as number)) {
        errors.push({ field: `${field}.${small}`, message: `${small} must not be more than ${big}`, requirement: `<= ${big}`, provided: r[small] as number });
      }
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, limits: out };
}

/** Levels from the widest (the account) to the narrowest (a SIM): later keys win. */
export function resolveLimits(...levels: Array<LimitsOverride | null | undefined>): SendingLimits {
  const r: SendingLimits = { ...DEFAULT_SENDING_LIMITS, spacingSeconds: { ...DEFAULT_SENDING_LIMITS.spacingSeconds } };
  for (const l of levels) {
    if (!l) continue;
    for (const k of COUNT_KEYS) if (l[k] !== undefined) r[k] = l[k]!;
    if (l.spacingSeconds) r.spacingSeconds = { ...l.spacingSeconds };
  }
  return r;
}

export interface HandOut {
  at: number;
  parts: number;
  recipient: string;
}

export type WaitReason = "phone-budget" | "new-recipient-limit";

export interface Verdict {
  ok: boolean;
  /** When not ok: why, and the earliest time it could fit (epoch ms). */
  reason?: WaitReason;
  until?: number;
}

export interface WindowUse {
  partsLastMinute: number;
  partsLastHour: number;
  partsLastDay: number;
  newRecipientsLastDay: number;
  newRecipientsLastMonth: number;
}

/**
 * One phone's or SIM's hand-outs of the last 30 days, oldest first, with each recipient's
 * hand-outs counted: enough to answer every window without a query. Appends come in time order
 * (the caller's clock); `prune` drops what no window sees any more.
 */
export class WindowLog {
  private entries: HandOut[] = [];
  private head = 0;
  /** Recipient → times it was handed out (ascending), within the month. */
  private readonly byRecipient = new Map<string, number[]>();

  get size(): number {
    return this.entries.length - this.head;
  }

  /** Hand-outs after `t`, oldest first. */
  since(t: number): HandOut[] {
    return this.entries.slice(this.firstAfter(t));
  }

  /** The latest hand-out, or undefined. */
  last(): HandOut | undefined {
    return this.size ? this.entries[this.entries.length - 1] : undefined;
  }

  add(h: HandOut): void {
    // Kept in time order: a late insert (boot order, equal times) is placed, not appended blindly.
    let i = this.entries.length;
    while (i > this.head && this.entries[i - 1].at > h.at) i--;
    this.entries.splice(i, 0, h);
    let times = this.byRecipient.get(h.recipient);
    if (!times) this.byRecipient.set(h.recipient, (times = []));
    let j = times.length;
    while (j > 0 && times[j - 1] > h.at) j--;
    times.splice(j, 0, h.at);
  }

  prune(now: number): void {
    const cut = now - MONTH_MS;
    while (this.head < this.entries.length && this.entries[this.head].at <= cut) {
      const e = this.entries[this.head++];
      const times = this.byRecipient.get(e.recipient);
      if (times) {
        times.shift();
        if (times.length === 0) this.byRecipient.delete(e.recipient);
      }
    }
    if (this.head > 1024 && this.head > this.entries.length / 2) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Index of the first entry with at > t. */
  private firstAfter(t: number): number {
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.entries[mid].at > t) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Parts handed out in (now − windowMs, now]. */
  parts(now: number, windowMs: number): number {
    let n = 0;
    for (let i = this.firstAfter(now - windowMs); i < this.entries.length; i++) if (this.entries[i].at <= now) n += this.entries[i].parts;
    return n;
  }

  /** Distinct recipients handed out in (now − windowMs, now]. */
  recipients(now: number, windowMs: number): number {
    const seen = new Set<string>();
    for (let i = this.firstAfter(now - windowMs); i < this.entries.length; i++) if (this.entries[i].at <= now) seen.add(this.entries[i].recipient);
    return seen.size;
  }

  /** Was `recipient` texted in (now − windowMs, now]? */
  texted(recipient: string, now: number, windowMs: number): boolean {
    const times = this.byRecipient.get(recipient);
    return !!times && times.some((t) => t > now - windowMs && t <= now);
  }

  use(now: number): WindowUse {
    return {
      partsLastMinute: this.parts(now, MINUTE_MS),
      partsLastHour: this.parts(now, HOUR_MS),
      partsLastDay: this.parts(now, DAY_MS),
      newRecipientsLastDay: this.recipients(now, DAY_MS),
      newRecipientsLastMonth: this.recipients(now, MONTH_MS),
    };
  }

  /**
   * The earliest time ≥ now at which `parts` more fit under `limit` in a window of `windowMs`:
   * old hand-outs leave the window one by one, oldest first.
   */
  private partsFreeAt(now: number, windowMs: number, limit: number, parts: number): number {
    let used = this.parts(now, windowMs);
    if (used + parts <= limit) return now;
    for (let i = this.firstAfter(now - windowMs); i < this.entries.length; i++) {
      used -= this.entries[i].parts;
      if (used + parts <= limit) return this.entries[i].at + windowMs;
    }
    return now + windowMs;
  }

  /** The earliest time ≥ now at which one more new recipient fits under `limit` in `windowMs`. */
  private recipientFreeAt(now: number, windowMs: number, limit: number): number {
    const from = this.firstAfter(now - windowMs);
    // Each recipient's last hand-out in the window: it leaves the count when that one leaves.
    const lastOf = new Map<string, number>();
    for (let i = from; i < this.entries.length; i++) lastOf.set(this.entries[i].recipient, this.entries[i].at);
    if (lastOf.size < limit) return now;
    const leaving = [...lastOf.values()].sort((a, b) => a - b);
    return leaving[lastOf.size - limit] + windowMs;
  }

  /** The earliest time ≥ now at which `parts` more fit in every parts window (recipients aside). */
  partsFitAt(limits: SendingLimits, now: number, parts = 1): number {
    const fit = (windowMs: number, limit: number) => this.partsFreeAt(now, windowMs, Math.max(limit, parts), parts);
    return Math.max(fit(MINUTE_MS, limits.partsPerMinute), fit(HOUR_MS, limits.partsPerHour), fit(DAY_MS, limits.partsPerDay));
  }

  /**
   * May a text of `parts` parts to `recipient` be handed out at `now` under `limits`? When not,
   * the reason and the earliest time it could (spacing is the caller's: it is per phone).
   */
  check(limits: SendingLimits, now: number, parts: number, recipient: string): Verdict {
    // A text longer than a whole window's budget could never go: it is judged against the full window.
    const fit = (windowMs: number, limit: number) => this.partsFreeAt(now, windowMs, Math.max(limit, parts), parts);
    const partsAt = Math.max(fit(MINUTE_MS, limits.partsPerMinute), fit(HOUR_MS, limits.partsPerHour), fit(DAY_MS, limits.partsPerDay));
    let newAt = now;
    if (!this.texted(recipient, now, DAY_MS)) newAt = Math.max(newAt, this.recipientFreeAt(now, DAY_MS, limits.newRecipientsPerDay));
    if (!this.texted(recipient, now, MONTH_MS)) newAt = Math.max(newAt, this.recipientFreeAt(now, MONTH_MS, limits.newRecipientsPerMonth));
    if (partsAt <= now && newAt <= now) return { ok: true };
    return newAt > partsAt ? { ok: false, reason: "new-recipient-limit", until: newAt } : { ok: false, reason: "phone-budget", until: partsAt };
  }
}

/** A spacing drawn in [min, max] seconds, in ms; `random` is in [0, 1). */
export function spacingMs(s: Spacing, random: number): number {
  return Math.round((s.min + (s.max - s.min) * random) * 1_000);
}

/**
 * What the SMSGate app is told to do itself (GET /settings `messages`): never more than the
 * budget allows. The app counts messages, not parts, so its per-minute cap is the parts budget
 * (a text is at least one part). The server hands texts out one at a time after the random
 * pause it draws; the app is told the shortest pause, so it never sends faster even when two
 * hand-outs arrive together, and never adds a second random pause on top.
 */
export function appMessageSettings(l: SendingLimits): { send_interval_min: number; send_interval_max: number; limit_period: "PerMinute"; limit_value: number } {
  return { send_interval_min: l.spacingSeconds.min, send_interval_max: l.spacingSeconds.min, limit_period: "PerMinute", limit_value: l.partsPerMinute };
}

/**
 * Texts an hour one phone keeps up in the long run under `l`, for texts of `avgParts` parts: the
 * tightest of its windows and its spacing.
 */
export function textsPerHour(l: SendingLimits, avgParts = 1): number {
  const spacing = (l.spacingSeconds.min + l.spacingSeconds.max) / 2;
  const bySpacing = spacing > 0 ? 3_600 / spacing : Infinity;
  return Math.max(0.001, Math.min(bySpacing, (l.partsPerMinute * 60) / avgParts, l.partsPerHour / avgParts, l.partsPerDay / 24 / avgParts));
}
