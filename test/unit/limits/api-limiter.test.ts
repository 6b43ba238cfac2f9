import { describe, expect, test } from "bun:test";
import {
  ApiLimiter,
  DEFAULT_API_LIMITS,
  WebhookLimiter,
  rateLimitDetails,
  rateLimitHeaders,
} from "../../../src/limits/api-limiter";

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0);

function fakeClock(start = T0) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

describe("ApiLimiter", () => {
  test("defaults: 1000/hour, burst 100/minute", () => {
    expect(DEFAULT_API_LIMITS).toEqual({ hourly: 1000, burst: 100 });
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const r = lim.check("key1");
    expect(r).toEqual({
      allowed: true,
      limit: 1000,
      remaining: 999,
      resetAt: T0 + 3_600,
      burstLimit: 100,
      burstRemaining: 99,
      burstResetAt: T0 + 600,
      retryAfterSeconds: 0,
      window: null,
      blockedBy: [],
    });
  });

  test("the 101st request inside a minute is refused by the burst bucket", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    for (let i = 0; i < 100; i++) {
      expect(lim.check("k").allowed).toBe(true);
      c.advance(5); // 100 requests within 0.5 s (less than one refill period of 600 ms)
    }
    const r = lim.check("k");
    expect(r.allowed).toBe(false);
    expect(r.blockedBy).toEqual(["burst"]);
    expect(r.window).toBe("1 minute");
    expect(r.burstRemaining).toBe(0);
    expect(r.retryAfterSeconds).toBe(1);
    // no partial consumption: the hourly bucket did not lose a token
    expect(r.remaining).toBe(900);
    expect(lim.peek("k").remaining).toBe(900);
  });

  test("refill over time lets requests through again", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    for (let i = 0; i < 100; i++) lim.check("k");
    expect(lim.check("k").allowed).toBe(false);
    c.advance(600);
    expect(lim.check("k").allowed).toBe(true);
    expect(lim.check("k").allowed).toBe(false);
    c.advance(60_000);
    expect(lim.peek("k").burstRemaining).toBe(100);
  });

  test("hourly plan limit blocks; retry-after is the longer wait", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const limits = { hourly: 10, burst: 100 };
    for (let i = 0; i < 10; i++) expect(lim.check("k", limits).allowed).toBe(true);
    const r = lim.check("k", limits);
    expect(r.allowed).toBe(false);
    expect(r.blockedBy).toEqual(["hourly"]);
    expect(r.window).toBe("1 hour");
    expect(r.limit).toBe(10);
    expect(r.remaining).toBe(0);
    expect(r.retryAfterSeconds).toBe(360); // one token per 6 minutes
    expect(r.resetAt).toBe(T0 + 3_600_000);
    // burst bucket untouched by the refusal
    expect(r.burstRemaining).toBe(90);
  });

  test("both buckets blocking: the longer wait wins", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const limits = { hourly: 5, burst: 5 };
    for (let i = 0; i < 5; i++) lim.check("k", limits);
    const r = lim.check("k", limits);
    expect(r.blockedBy).toEqual(["hourly", "burst"]);
    expect(r.retryAfterSeconds).toBe(720);
    expect(r.window).toBe("1 hour");
  });

  test("no partial consumption when only the hourly bucket refuses", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const limits = { hourly: 3, burst: 10 };
    for (let i = 0; i < 3; i++) lim.check("k", limits);
    for (let i = 0; i < 20; i++) expect(lim.check("k", limits).allowed).toBe(false);
    expect(lim.peek("k", limits).burstRemaining).toBe(7);
  });

  test("per-account overrides and keys are independent", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const pro = { hourly: 5000, burst: 200 };
    const r = lim.check("pro-key", pro);
    expect(r).toMatchObject({ limit: 5000, remaining: 4999, burstLimit: 200, burstRemaining: 199 });
    expect(lim.check("std-key")).toMatchObject({ limit: 1000, remaining: 999 });
  });

  test("retryAfterSeconds rounds up and is at least 1", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const limits = { hourly: 1000, burst: 7 }; // 1 token per 8571.43 ms
    for (let i = 0; i < 7; i++) lim.check("k", limits);
    expect(lim.check("k", limits).retryAfterSeconds).toBe(9);
    c.advance(8_500);
    expect(lim.check("k", limits).retryAfterSeconds).toBe(1);
  });

  test("sweep and size", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock, sweepEveryMs: 0 });
    const limits = { hourly: 10, burst: 100 };
    lim.check("a", limits);
    lim.check("b", limits);
    expect(lim.size()).toBe(4);
    c.advance(60_000); // burst buckets full again, hourly ones not yet (1 token per 6 minutes)
    expect(lim.sweep()).toBe(2);
    c.advance(6 * 60_000);
    expect(lim.sweep()).toBe(2);
    expect(lim.size()).toBe(0);
  });

  test("a limit of 0 always refuses with a finite Retry-After", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    const r = lim.check("k", { hourly: 0, burst: 100 });
    expect(r.allowed).toBe(false);
    expect(r.retryAfterSeconds).toBe(3600);
  });
});

describe("WebhookLimiter", () => {
  test("100 per minute per form, the 101st refused, burst fields mirror the limit", () => {
    const c = fakeClock();
    const lim = new WebhookLimiter({ clock: c.clock });
    let r = lim.check("form-1");
    expect(r).toEqual({
      allowed: true,
      limit: 100,
      remaining: 99,
      resetAt: T0 + 600,
      burstLimit: 100,
      burstRemaining: 99,
      retryAfterSeconds: 0,
      window: null,
    });
    for (let i = 0; i < 99; i++) r = lim.check("form-1");
    expect(r.allowed).toBe(true);
    r = lim.check("form-1");
    expect(r).toMatchObject({ allowed: false, remaining: 0, burstRemaining: 0, retryAfterSeconds: 1, window: "1 minute" });
    expect(lim.check("form-2").allowed).toBe(true);
    c.advance(60_000);
    for (let i = 0; i < 100; i++) expect(lim.check("form-1").allowed).toBe(true);
    expect(lim.check("form-1").allowed).toBe(false);
  });

  test("configurable limit and per-form override", () => {
    const c = fakeClock();
    const lim = new WebhookLimiter({ clock: c.clock, perMinute: 2 });
    expect(lim.check("f").allowed).toBe(true);
    expect(lim.check("f").allowed).toBe(true);
    const r = lim.check("f");
    expect(r).toMatchObject({ allowed: false, limit: 2, retryAfterSeconds: 30 });
    expect(lim.check("g", 5)).toMatchObject({ limit: 5, remaining: 4 });
    expect(lim.peek("g", 5)).toMatchObject({ remaining: 4 });
    expect(lim.size()).toBe(2);
    c.advance(60_000);
    expect(lim.sweep()).toBe(2);
  });
});

describe("rateLimitHeaders / rateLimitDetails", () => {
  test("allowed: no Retry-After; reset in Unix seconds rounded up", () => {
    const h = rateLimitHeaders({
      allowed: true,
      limit: 1000,
      remaining: 999,
      resetAt: 1_763_737_203_600.4,
      burstLimit: 100,
      burstRemaining: 99,
      retryAfterSeconds: 0,
    });
    expect(h).toEqual({
      "X-RateLimit-Limit": "1000",
      "X-RateLimit-Remaining": "999",
      "X-RateLimit-Reset": "1763737204",
      "X-RateLimit-Burst-Limit": "100",
      "X-RateLimit-Burst-Remaining": "99",
    });
  });

  test("refused: Retry-After present", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    for (let i = 0; i < 100; i++) lim.check("k");
    const r = lim.check("k");
    const h = rateLimitHeaders(r);
    expect(h["Retry-After"]).toBe("1");
    expect(h["X-RateLimit-Burst-Remaining"]).toBe("0");
    expect(h["X-RateLimit-Remaining"]).toBe("900");
    expect(h["X-RateLimit-Reset"]).toBe(String(Math.ceil(r.resetAt / 1000)));
    expect(rateLimitDetails(r)).toEqual({ limit: 100, window: "1 minute", retryAfter: 1 });
  });

  test("webhook headers and details", () => {
    const c = fakeClock();
    const lim = new WebhookLimiter({ clock: c.clock });
    for (let i = 0; i < 100; i++) lim.check("f");
    const r = lim.check("f");
    const h = rateLimitHeaders(r);
    expect(h["X-RateLimit-Limit"]).toBe("100");
    expect(h["X-RateLimit-Burst-Limit"]).toBe("100");
    expect(h["X-RateLimit-Remaining"]).toBe("0");
    expect(h["X-RateLimit-Burst-Remaining"]).toBe("0");
    expect(h["X-RateLimit-Reset"]).toBe(String(Math.ceil((T0 + 60_000) / 1000)));
    expect(h["Retry-After"]).toBe("1");
    expect(rateLimitDetails(r)).toEqual({ limit: 100, window: "1 minute", retryAfter: 1 });
  });

  test("hourly details", () => {
    const c = fakeClock();
    const lim = new ApiLimiter({ clock: c.clock });
    lim.check("k", { hourly: 1, burst: 100 });
    expect(rateLimitDetails(lim.check("k", { hourly: 1, burst: 100 }))).toEqual({ limit: 1, window: "1 hour", retryAfter: 3600 });
  });
});
