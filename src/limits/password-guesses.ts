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
 * 3. Per e-mail, all addresses together: EMAIL_FAILURES_PER_HOUR wrong passwords an hour. An
 *    address is refused for the e-mail once its own failures of the last hour plus every other
 *    address's (each counting at most COUNTED_PER_ADDRESS) reach the total: so one address alone
 *    only ever holds itself, while a guesser spread over any number of addresses gets at most
 *    35 tries an hour between them (test/unit/limits/password-guesses.test.ts). Past it, an address holding a live session of that
 *    person still gets in: the owner's signed-in phone and computer.
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
  /** e-mail → address → times of its failures in the last hour (at most EMAIL_FAILURES_PER_HOUR kept). */
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
    const wait = this.emailWait(email, address);
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
    times.push(now);
    // More than the total is never needed: the address is refused by then.
    byAddress.set(address, times.slice(-EMAIL_FAILURES_PER_HOUR));
  }

  /** Ms until `address` may try `email` again under the e-mail's hourly total (0: it may now). */
  private emailWait(email: string, address: string): number {
    const byAddress = this.perEmail.get(email);
    if (!byAddress) return 0;
    const now = this.clock();
    for (const [a, times] of byAddress) {
      const live = times.filter((t) => t > now - HOUR_MS);
      if (live.length === 0) byAddress.delete(a);
      else if (live.length !== times.length) byAddress.set(a, live);
    }
    if (byAddress.size === 0) {
      this.perEmail.delete(email);
      return 0;
    }
    // What counts at `at`: this address's own failures, and each other's up to COUNTED_PER_ADDRESS.
    const countAt = (at: number) => {
      let n = 0;
      for (const [a, times] of byAddress) {
        const live = times.filter((t) => t > at - HOUR_MS).length;
        n += a === address ? live : Math.min(live, COUNTED_PER_ADDRESS);
      }
      return n;
    };
    if (countAt(now) < EMAIL_FAILURES_PER_HOUR) return 0;
    // The first moment a failure ages out and the count is below the total again.
    const expiries = [...byAddress.values()].flat().map((t) => t + HOUR_MS).sort((x, y) => x - y);
    for (const at of expiries) if (countAt(at) < EMAIL_FAILURES_PER_HOUR) return at - now;
    return HOUR_MS;
  }
}

const pairKey = (email: string, address: string) => `${email}\n${address}`;
