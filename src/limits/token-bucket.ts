/**
 * In-process token buckets.
 *
 * Pure: no timers, no Date.now. Time is epoch milliseconds, passed in (TokenBucket) or read from
 * an injected clock (BucketRegistry).
 *
 * Semantics
 * - A bucket holds at most `capacity` tokens and gains `refillPerMs` tokens per millisecond,
 *   continuously. A request takes whole tokens; a refused request takes nothing.
 * - A fresh bucket is full, so `capacity` requests may arrive at once (the 101st of an instant
 *   burst against a 100-token bucket is refused); afterwards one token comes back every
 *   `1 / refillPerMs` ms (600 ms for 100/minute).
 * - If the clock goes backwards the bucket neither gains nor loses tokens: it re-bases on the
 *   earlier time.
 * - Floating point: refill arithmetic carries a tiny tolerance (EPSILON) so that, e.g., exactly one
 *   minute at 100/minute yields exactly 100 tokens.
 */

/** Tolerance for floating-point refill (a millionth of a token). */
const EPSILON = 1e-6;

export interface BucketState {
  tokens: number;
  updatedAt: number;
}

export class TokenBucket {
  private state: BucketState;

  constructor(
    public capacity: number,
    public refillPerMs: number,
    now: number,
  ) {
    if (!(capacity >= 0) || !Number.isFinite(capacity)) throw new RangeError(`capacity must be a finite number ≥ 0, got ${capacity}`);
    if (!(refillPerMs >= 0) || !Number.isFinite(refillPerMs)) throw new RangeError(`refillPerMs must be a finite number ≥ 0, got ${refillPerMs}`);
    this.state = { tokens: capacity, updatedAt: now };
  }

  /** Brings the bucket up to `now` and returns the (fractional) token count. */
  private refill(now: number): number {
    const s = this.state;
    const elapsed = now - s.updatedAt;
    if (elapsed > 0) {
      s.tokens = Math.min(this.capacity, s.tokens + elapsed * this.refillPerMs);
      if (this.capacity - s.tokens < EPSILON) s.tokens = this.capacity;
    }
    // elapsed < 0: clock went backwards; keep the tokens, re-base on the earlier time.
    s.updatedAt = now;
    return s.tokens;
  }

  /** Takes `n` tokens if available; returns whether it did. Takes nothing when refused. */
  take(now: number, n = 1): boolean {
    const tokens = this.refill(now);
    if (tokens + EPSILON >= n) {
      this.state.tokens = Math.max(0, tokens - n);
      return true;
    }
    return false;
  }

  /** Whole tokens available at `now` (floored). */
  peek(now: number): number {
    return Math.floor(this.refill(now) + EPSILON);
  }

  /** Ms until `n` tokens are available; 0 if they are now; Infinity if never (n > capacity or no refill). */
  msUntil(now: number, n = 1): number {
    const tokens = this.refill(now);
    if (tokens + EPSILON >= n) return 0;
    if (n > this.capacity + EPSILON || this.refillPerMs <= 0) return Infinity;
    return Math.max(1, Math.ceil((n - tokens - EPSILON) / this.refillPerMs));
  }

  /** Epoch ms when the bucket is full again (`now` if it already is; Infinity if it never refills). */
  resetAt(now: number): number {
    const tokens = this.refill(now);
    if (tokens >= this.capacity) return now;
    if (this.refillPerMs <= 0) return Infinity;
    return now + Math.max(1, Math.ceil((this.capacity - tokens - EPSILON) / this.refillPerMs));
  }

  /** True when the bucket is full at `now` (indistinguishable from a fresh bucket). */
  isFull(now: number): boolean {
    return this.refill(now) >= this.capacity;
  }

  /**
   * Changes capacity and refill rate, keeping what has been consumed: a bucket that had used 30
   * of 100 tokens has 170 of a new 200-token capacity (raising a limit takes effect at once,
   * lowering it never goes below 0).
   */
  reconfigure(now: number, capacity: number, refillPerMs: number): void {
    if (capacity === this.capacity && refillPerMs === this.refillPerMs) return;
    const tokens = this.refill(now);
    const used = this.capacity - tokens;
    this.capacity = capacity;
    this.refillPerMs = refillPerMs;
    this.state.tokens = Math.min(capacity, Math.max(0, capacity - used));
  }

  /** A bucket restored from a saved state. */
  static fromState(capacity: number, refillPerMs: number, state: BucketState): TokenBucket {
    const b = new TokenBucket(capacity, refillPerMs, state.updatedAt);
    b.state.tokens = Math.min(capacity, Math.max(0, state.tokens));
    return b;
  }

  /** A copy of the internal state (for tests and diagnostics). */
  snapshot(): BucketState {
    return { ...this.state };
  }
}

export interface LimitResult {
  allowed: boolean;
  /** Bucket capacity. */
  limit: number;
  /** Whole tokens left after this request (floored). */
  remaining: number;
  /** Epoch ms when the bucket is full again. */
  resetAt: number;
  /** 0 when allowed; otherwise ms until the request could succeed (Infinity if never). */
  retryAfterMs: number;
}

export interface BucketConfig {
  capacity: number;
  refillPerMs: number;
}

export interface BucketRegistryOptions extends BucketConfig {
  clock: () => number;
  /**
   * `take` sweeps idle buckets itself at most this often (ms). Default 60 000. 0 or Infinity
   * disables automatic sweeping (call `sweep()` yourself).
   */
  sweepEveryMs?: number;
}

/**
 * Buckets by key. A key with no bucket behaves as a full bucket, so a bucket that is full again
 * carries no information and is dropped by `sweep()`: memory holds only keys that have used tokens
 * within the last refill period.
 */
export class BucketRegistry {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly defaults: BucketConfig;
  private readonly clock: () => number;
  private readonly sweepEveryMs: number;
  private lastSweep: number;

  constructor(opts: BucketRegistryOptions) {
    this.defaults = { capacity: opts.capacity, refillPerMs: opts.refillPerMs };
    this.clock = opts.clock;
    this.sweepEveryMs = opts.sweepEveryMs ?? 60_000;
    this.lastSweep = this.clock();
  }

  private config(override?: BucketConfig): BucketConfig {
    return override ?? this.defaults;
  }

  private result(bucket: TokenBucket, now: number, allowed: boolean, n: number): LimitResult {
    return {
      allowed,
      limit: bucket.capacity,
      remaining: bucket.peek(now),
      resetAt: bucket.resetAt(now),
      retryAfterMs: allowed ? 0 : bucket.msUntil(now, n),
    };
  }

  private maybeSweep(now: number): void {
    if (this.sweepEveryMs > 0 && Number.isFinite(this.sweepEveryMs) && now - this.lastSweep >= this.sweepEveryMs) {
      this.sweepAt(now);
    }
  }

  /** Takes `n` tokens (default 1) from the key's bucket; nothing is taken when refused. */
  take(key: string, n = 1, override?: BucketConfig): LimitResult {
    const now = this.clock();
    this.maybeSweep(now);
    const cfg = this.config(override);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(cfg.capacity, cfg.refillPerMs, now);
      this.buckets.set(key, bucket);
    } else {
      bucket.reconfigure(now, cfg.capacity, cfg.refillPerMs);
    }
    const allowed = bucket.take(now, n);
    return this.result(bucket, now, allowed, n);
  }

  /**
   * The key's state without taking anything (`allowed` = one more token could be taken now).
   * Does not create a bucket, and does not persist an override.
   */
  peek(key: string, override?: BucketConfig): LimitResult {
    return this.peekN(key, 1, override);
  }

  /** Like `peek`, for `n` tokens. */
  peekN(key: string, n: number, override?: BucketConfig): LimitResult {
    const now = this.clock();
    const cfg = this.config(override);
    const existing = this.buckets.get(key);
    let bucket: TokenBucket;
    if (!existing) {
      bucket = new TokenBucket(cfg.capacity, cfg.refillPerMs, now);
    } else if (existing.capacity !== cfg.capacity || existing.refillPerMs !== cfg.refillPerMs) {
      // Work on a copy so that peeking with an override changes nothing.
      bucket = TokenBucket.fromState(existing.capacity, existing.refillPerMs, existing.snapshot());
      bucket.reconfigure(now, cfg.capacity, cfg.refillPerMs);
    } else {
      bucket = existing;
    }
    const allowed = bucket.msUntil(now, n) === 0;
    return this.result(bucket, now, allowed, n);
  }

  /** Drops buckets that are full (idle long enough to have refilled). Returns how many. */
  sweep(): number {
    return this.sweepAt(this.clock());
  }

  private sweepAt(now: number): number {
    this.lastSweep = now;
    let removed = 0;
    for (const [key, bucket] of this.buckets) {
      if (bucket.isFull(now)) {
        this.buckets.delete(key);
        removed++;
      }
    }
    return removed;
  }

  /** Number of buckets held in memory. */
  size(): number {
    return this.buckets.size;
  }

  /** Forgets one key (e.g. a deleted form or revoked key). */
  delete(key: string): boolean {
    return this.buckets.delete(key);
  }
}

/** Refill rate for `n` tokens per minute. */
export const perMinute = (n: number): number => n / 60_000;
/** Refill rate for `n` tokens per hour. */
export const perHour = (n: number): number => n / 3_600_000;
