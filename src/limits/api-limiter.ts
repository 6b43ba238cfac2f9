/**
 * Request limiters built on token buckets.
 *
 * - ApiLimiter: per API key, an hourly plan bucket (capacity = hourly limit, refilled at
 *   limit/hour) AND a burst bucket (capacity = burst, refilled at burst/minute). A request passes
 *   only if both buckets have a token; then it takes one from each. A refused request takes
 *   nothing from either.
 * - WebhookLimiter: per form, one bucket of N tokens refilled at N per minute (default 100);
 *   no extra burst, so the burst header fields repeat limit/remaining.
 *
 * Pure: time comes from the injected clock.
 */
import { BucketRegistry, perHour, perMinute, type BucketConfig, type LimitResult } from "./token-bucket";

export type RateLimitWindow = "1 hour" | "1 minute";

/** What a limited response needs: headers, and the 429 body/details. */
export interface RateLimitResult {
  allowed: boolean;
  /** X-RateLimit-Limit: the hourly plan limit (webhook: per-minute limit). */
  limit: number;
  /** X-RateLimit-Remaining: tokens left after this request. */
  remaining: number;
  /** Epoch ms when the (hourly / webhook) bucket is full again; X-RateLimit-Reset = ceil(resetAt / 1000). */
  resetAt: number;
  /** X-RateLimit-Burst-Limit. */
  burstLimit: number;
  /** X-RateLimit-Burst-Remaining. */
  burstRemaining: number;
  /** 0 when allowed; otherwise whole seconds until a retry can pass (≥ 1). */
  retryAfterSeconds: number;
  /** When refused: the window of the bucket that blocks longest (for 429 details.window); else null. */
  window: RateLimitWindow | null;
}

export interface ApiRateLimitResult extends RateLimitResult {
  /** Epoch ms when the burst bucket is full again. */
  burstResetAt: number;
  /** Which bucket(s) refused the request (empty when allowed). */
  blockedBy: Array<"hourly" | "burst">;
}

export interface ApiLimits {
  /** Requests per hour (plan limit). */
  hourly: number;
  /** Requests per minute (burst bucket capacity). */
  burst: number;
}

/** Standard plan defaults (docs/operations.md, "Limits"). */
export const DEFAULT_API_LIMITS: ApiLimits = { hourly: 1000, burst: 100 };
export const PLAN_HOURLY_LIMITS = { standard: 1000, pro: 5000 } as const;
export const DEFAULT_WEBHOOK_LIMIT_PER_MINUTE = 100;
/**
 * A dashboard session's requests per minute: sized for a person clicking through pages, never the
 * account's API-key limit (docs/api-decisions.md, "The dashboard never locks itself out; honest
 * status"; docs/operations.md, "Limits").
 */
export const SESSION_REQUESTS_PER_MINUTE = 600;
/** A session's bucket holds two minutes' worth, so a quick burst (700 requests at once) passes. */
export const SESSION_BURST = 2 * SESSION_REQUESTS_PER_MINUTE;

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** ms → whole seconds for Retry-After: ceil, at least 1; a bucket that never refills → its window. */
function retrySeconds(ms: number, windowMs: number): number {
  if (!Number.isFinite(ms)) return Math.ceil(windowMs / 1000);
  return Math.max(1, Math.ceil(ms / 1000));
}

export interface LimiterOptions {
  clock: () => number;
  /** Passed to the underlying registries: automatic idle sweep period in ms (default 60 000). */
  sweepEveryMs?: number;
}

export class ApiLimiter {
  private readonly hourly: BucketRegistry;
  private readonly burst: BucketRegistry;
  private readonly defaults: ApiLimits;

  constructor(opts: LimiterOptions & { defaults?: ApiLimits }) {
    this.defaults = opts.defaults ?? DEFAULT_API_LIMITS;
    this.hourly = new BucketRegistry({
      capacity: this.defaults.hourly,
      refillPerMs: perHour(this.defaults.hourly),
      clock: opts.clock,
      sweepEveryMs: opts.sweepEveryMs,
    });
    this.burst = new BucketRegistry({
      capacity: this.defaults.burst,
      refillPerMs: perMinute(this.defaults.burst),
      clock: opts.clock,
      sweepEveryMs: opts.sweepEveryMs,
    });
  }

  private configs(limits: ApiLimits): { h: BucketConfig; b: BucketConfig } {
    return {
      h: { capacity: limits.hourly, refillPerMs: perHour(limits.hourly) },
      b: { capacity: limits.burst, refillPerMs: perMinute(limits.burst) },
    };
  }

  /**
   * Counts one request for `key` (use the key's id or hash, never the clear key) against the
   * account's limits. Takes a token from both buckets, or from neither.
   */
  check(key: string, limits: ApiLimits = this.defaults): ApiRateLimitResult {
    const { h, b } = this.configs(limits);
    const ph = this.hourly.peek(key, h);
    const pb = this.burst.peek(key, b);
    if (ph.allowed && pb.allowed) {
      const th = this.hourly.take(key, 1, h);
      const tb = this.burst.take(key, 1, b);
      // Tokens never decrease without a take, so both succeed after a successful peek.
      return combine(th, tb);
    }
    return combine(ph, pb, false);
  }

  /** The key's current state without counting a request. */
  peek(key: string, limits: ApiLimits = this.defaults): ApiRateLimitResult {
    const { h, b } = this.configs(limits);
    return combine(this.hourly.peek(key, h), this.burst.peek(key, b));
  }

  /** Drops idle (full) buckets; returns how many were removed. */
  sweep(): number {
    return this.hourly.sweep() + this.burst.sweep();
  }

  /** Buckets held in memory (hourly + burst). */
  size(): number {
    return this.hourly.size() + this.burst.size();
  }

  /** Forgets a key (e.g. after revocation). */
  forget(key: string): void {
    this.hourly.delete(key);
    this.burst.delete(key);
  }
}

function combine(h: LimitResult, b: LimitResult, allowed = h.allowed && b.allowed): ApiRateLimitResult {
  const blockedBy: Array<"hourly" | "burst"> = [];
  let retryAfterSeconds = 0;
  let window: RateLimitWindow | null = null;
  if (!allowed) {
    if (!h.allowed) blockedBy.push("hourly");
    if (!b.allowed) blockedBy.push("burst");
    const hs = h.allowed ? 0 : retrySeconds(h.retryAfterMs, HOUR_MS);
    const bs = b.allowed ? 0 : retrySeconds(b.retryAfterMs, MINUTE_MS);
    retryAfterSeconds = Math.max(1, hs, bs);
    window = hs >= bs ? "1 hour" : "1 minute";
  }
  return {
    allowed,
    limit: h.limit,
    remaining: h.remaining,
    resetAt: h.resetAt,
    burstLimit: b.limit,
    burstRemaining: b.remaining,
    burstResetAt: b.resetAt,
    retryAfterSeconds,
    window,
    blockedBy,
  };
}

/** Per-form webhook limiter: one bucket of `perMinute` tokens refilled at `perMinute`/minute. */
export class WebhookLimiter {
  private readonly registry: BucketRegistry;
  private readonly perMinute: number;

  constructor(opts: LimiterOptions & { perMinute?: number }) {
    this.perMinute = opts.perMinute ?? DEFAULT_WEBHOOK_LIMIT_PER_MINUTE;
    this.registry = new BucketRegistry({
      capacity: this.perMinute,
      refillPerMs: perMinute(this.perMinute),
      clock: opts.clock,
      sweepEveryMs: opts.sweepEveryMs,
    });
  }

  private config(limit: number): BucketConfig {
    return { capacity: limit, refillPerMs: perMinute(limit) };
  }

  /** Counts one submission for `formId`. */
  check(formId: string, limitPerMinute: number = this.perMinute): RateLimitResult {
    return single(this.registry.take(formId, 1, this.config(limitPerMinute)));
  }

  /** The form's current state without counting a submission. */
  peek(formId: string, limitPerMinute: number = this.perMinute): RateLimitResult {
    return single(this.registry.peek(formId, this.config(limitPerMinute)));
  }

  sweep(): number {
    return this.registry.sweep();
  }

  size(): number {
    return this.registry.size();
  }

  forget(formId: string): void {
    this.registry.delete(formId);
  }
}

/**
 * Per dashboard session: refilled at SESSION_REQUESTS_PER_MINUTE, holding up to
 * SESSION_BURST so a burst of page loads (the menu clicked through quickly) is never refused while
 * the sustained rate stays a person's. Keyed by the session's id; the key's API limit is left to
 * machines (docs/api-decisions.md, "The dashboard never locks itself out; honest status").
 */
export class SessionLimiter {
  private readonly registry: BucketRegistry;
  private readonly cfg: BucketConfig = { capacity: SESSION_BURST, refillPerMs: perMinute(SESSION_REQUESTS_PER_MINUTE) };

  constructor(opts: LimiterOptions) {
    this.registry = new BucketRegistry({ ...this.cfg, clock: opts.clock, sweepEveryMs: opts.sweepEveryMs });
  }

  /** Counts one request of the session. */
  check(sessionId: string): RateLimitResult {
    return single(this.registry.take(sessionId, 1, this.cfg));
  }

  sweep(): number {
    return this.registry.sweep();
  }

  size(): number {
    return this.registry.size();
  }

  /** Forgets a session (signed out). */
  forget(sessionId: string): void {
    this.registry.delete(sessionId);
  }
}

function single(r: LimitResult): RateLimitResult {
  return {
    allowed: r.allowed,
    limit: r.limit,
    remaining: r.remaining,
    resetAt: r.resetAt,
    burstLimit: r.limit,
    burstRemaining: r.remaining,
    retryAfterSeconds: r.allowed ? 0 : retrySeconds(r.retryAfterMs, MINUTE_MS),
    window: r.allowed ? null : "1 minute",
  };
}

type HeaderInput = Pick<
  RateLimitResult,
  "allowed" | "limit" | "remaining" | "resetAt" | "burstLimit" | "burstRemaining" | "retryAfterSeconds"
>;

/**
 * Response headers for a limited route. X-RateLimit-Reset is Unix seconds (ceil of resetAt);
 * Retry-After (seconds) only when refused.
 */
export function rateLimitHeaders(r: HeaderInput): Record<string, string> {
  const reset = Number.isFinite(r.resetAt) ? Math.ceil(r.resetAt / 1000) : 0;
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(r.limit),
    "X-RateLimit-Remaining": String(r.remaining),
    "X-RateLimit-Reset": String(reset),
    "X-RateLimit-Burst-Limit": String(r.burstLimit),
    "X-RateLimit-Burst-Remaining": String(r.burstRemaining),
  };
  if (!r.allowed) headers["Retry-After"] = String(Math.max(1, r.retryAfterSeconds));
  return headers;
}

/**
 * `details` for a 429 RATE_LIMIT_EXCEEDED (spec: {limit, window, retryAfter}). `limit` is the
 * figure of the blocking window: the burst limit when the burst bucket blocks longest.
 */
export function rateLimitDetails(r: RateLimitResult): { limit: number; window: RateLimitWindow; retryAfter: number } {
  const window = r.window ?? "1 hour";
  const limit = window === "1 minute" ? r.burstLimit : r.limit;
  return { limit, window, retryAfter: Math.max(1, r.retryAfterSeconds) };
}
