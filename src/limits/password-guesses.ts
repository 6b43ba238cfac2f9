/**
 * How many wrong passwords anyone gets (docs/operations.md, "Sign-in limits";
 * docs/api-decisions.md, "Nothing the phone reports is lost, and nobody takes the dashboard:
 * hardening round three"). Three limits, each a refusal (429 with Retry-After) before any
 * password is checked, and none that one address can use to keep the right password out elsewhere:
 *
 * 1. Per address, any e-mail: `perAddressPerMinute` wrong passwords a minute (the server's
 *    --auth-failures-per-minute), so one address cannot sweep many e-mails.
 * 2. Per (e-mail, address): PAIR_FAILURES wrong passwords, then PAIR_REFILL_PER_HOUR more an
 *    hour. Only that pair is refused: the owner typing from her own phone is not.
 * 3. Per e-mail, all addresses together: EMAIL_FAILURES_PER_HOUR wrong passwords an hour, each
 *    address counting at most COUNTED_PER_ADDRESS of them (so one address alone never reaches the
 *    total). Past it, the e-mail is refused from every address that has no live session of that
 *    person — a guesser spread over many addresses gets about EMAIL_FAILURES_PER_HOUR tries an
 *    hour, while the owner's signed-in phone and computer still get in.
 *
 * Pure: no database, no HTTP; the clock is given.
 */
import { BucketRegistry, perHour, perMinute } from "./token-bucket";

export const PAIR_FAILURES = 10;
export const PAIR_REFILL_PER_HOUR = 10;
export const EMAIL_FAILURES_PER_HOUR = 20;
export const COUNTED_PER_ADDRESS = 5;
const HOUR_MS = 3_600_000;
/** E-mails whose counted failures are kept (beyond it the oldest entry goes: memory stays bounded). */
const EMAILS_TRACKED_MAX = 10_000;

export type GuessRefusal = { scope: "address" | "pair" | "email"; retryAfterMs: number; limit: number; window: string };

export class PasswordGuessLimits {
  private readonly perAddress: BucketRegistry;
  private readonly perPair: BucketRegistry;
  /** e-mail → address → times of its counted failures (at most COUNTED_PER_ADDRESS, the last hour). */
  private readonly perEmail = new Map<string, Map<string, number[]>>();

  constructor(private readonly perAddressPerMinute: number, private readonly clock: () => number) {
    this.perAddress = new BucketRegistry({ capacity: perAddressPerMinute, refillPerMs: perMinute(perAddressPerMinute), clock });
    this.perPair = new BucketRegistry({ capacity: PAIR_FAILURES, refillPerMs: perHour(PAIR_REFILL_PER_HOUR), clock });
  }

  /**
   * Null when a password for `email` from `address` may be checked now, else why not and for how
   * long. `trusted`: the address holds a live session of this person (limit 3 spares it).
   */
  check(email: string, address: string, trusted: () => boolean): GuessRefusal | null {
    const a = this.perAddress.peek(address);
    if (!a.allowed) return { scope: "address", retryAfterMs: a.retryAfterMs, limit: this.perAddressPerMinute, window: "1 minute" };
    const p = this.perPair.peek(pairKey(email, address));
    if (!p.allowed) return { scope: "pair", retryAfterMs: p.retryAfterMs, limit: PAIR_FAILURES, window: "1 hour" };
    const wait = this.emailWait(email);
    if (wait > 0 && !trusted()) return { scope: "email", retryAfterMs: wait, limit: EMAIL_FAILURES_PER_HOUR, window: "1 hour" };
    return null;
  }

  /** A wrong password for `email` from `address`. */
  failed(email: string, address: string): void {
    const now = this.clock();
    this.perAddress.take(address);
    this.perPair.take(pairKey(email, address));
    let byAddress = this.perEmail.get(email);
    if (!byAddress) {
      if (this.perEmail.size >= EMAILS_TRACKED_MAX) this.perEmail.delete(this.perEmail.keys().next().value!);
      byAddress = new Map();
      this.perEmail.set(email, byAddress);
    }
    const times = (byAddress.get(address) ?? []).filter((t) => t > now - HOUR_MS);
    if (times.length < COUNTED_PER_ADDRESS) times.push(now);
    byAddress.set(address, times);
  }

  /** Ms until `email` is below its hourly total again (0: it is below now). */
  private emailWait(email: string): number {
    const byAddress = this.perEmail.get(email);
    if (!byAddress) return 0;
    const now = this.clock();
    const all: number[] = [];
    for (const [address, times] of byAddress) {
      const live = times.filter((t) => t > now - HOUR_MS);
      if (live.length === 0) byAddress.delete(address);
      else {
        if (live.length !== times.length) byAddress.set(address, live);
        all.push(...live);
      }
    }
    if (byAddress.size === 0) this.perEmail.delete(email);
    if (all.length < EMAIL_FAILURES_PER_HOUR) return 0;
    all.sort((x, y) => x - y);
    // Below the total once the oldest (count - total + 1) failures are an hour old.
    return all[all.length - EMAIL_FAILURES_PER_HOUR]! + HOUR_MS - now;
  }
}

const pairKey = (email: string, address: string) => `${email}\n${address}`;
