import { describe, expect, test } from "bun:test";
import { BucketRegistry, TokenBucket, perHour, perMinute } from "../../../src/limits/token-bucket";

const T0 = Date.UTC(2026, 10, 21, 15, 0, 0);

function fakeClock(start = T0) {
  let now = start;
  const clock = () => now;
  return { clock, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) };
}

describe("rate helpers", () => {
  test("perMinute / perHour", () => {
    expect(perMinute(100) * 60_000).toBeCloseTo(100, 10);
    expect(perHour(1000) * 3_600_000).toBeCloseTo(1000, 10);
    expect(perMinute(60)).toBe(0.001);
  });
});

describe("TokenBucket", () => {
  test("starts full; 100 taken at once, the 101st refused", () => {
    const b = new TokenBucket(100, perMinute(100), T0);
    for (let i = 0; i < 100; i++) expect(b.take(T0)).toBe(true);
    expect(b.take(T0)).toBe(false);
    expect(b.peek(T0)).toBe(0);
    // still refused a little later inside the same token period
    expect(b.take(T0 + 599)).toBe(false);
  });

  test("refills continuously: one token per 600 ms at 100/minute", () => {
    const b = new TokenBucket(100, perMinute(100), T0);
    expect(b.take(T0, 100)).toBe(true);
    expect(b.msUntil(T0)).toBe(600);
    expect(b.msUntil(T0, 2)).toBe(1200);
    expect(b.peek(T0 + 599)).toBe(0);
    expect(b.peek(T0 + 600)).toBe(1);
    expect(b.take(T0 + 600)).toBe(true);
    expect(b.take(T0 + 600)).toBe(false);
    expect(b.peek(T0 + 600 + 30_000)).toBe(50);
  });

  test("exactly one period refills exactly to capacity (no float drift)", () => {
    for (const cap of [3, 7, 100, 1000, 5000]) {
      const b = new TokenBucket(cap, perHour(cap), T0);
      expect(b.take(T0, cap)).toBe(true);
      expect(b.peek(T0 + 3_600_000)).toBe(cap);
      expect(b.isFull(T0 + 3_600_000)).toBe(true);
      expect(b.take(T0 + 3_600_000, cap)).toBe(true);
    }
  });

  test("never exceeds capacity", () => {
    const b = new TokenBucket(10, perMinute(10), T0);
    expect(b.peek(T0 + 10 * 60_000)).toBe(10);
    expect(b.take(T0 + 10 * 60_000, 11)).toBe(false);
  });

  test("a refused take of n consumes nothing", () => {
    const b = new TokenBucket(10, perMinute(10), T0);
    expect(b.take(T0, 8)).toBe(true);
    expect(b.take(T0, 3)).toBe(false);
    expect(b.peek(T0)).toBe(2);
    expect(b.take(T0, 2)).toBe(true);
  });

  test("msUntil: 0 when available, Infinity when n exceeds capacity", () => {
    const b = new TokenBucket(5, perMinute(5), T0);
    expect(b.msUntil(T0, 5)).toBe(0);
    expect(b.msUntil(T0, 6)).toBe(Infinity);
  });

  test("resetAt: now when full, otherwise when full again", () => {
    const b = new TokenBucket(100, perMinute(100), T0);
    expect(b.resetAt(T0)).toBe(T0);
    b.take(T0, 100);
    expect(b.resetAt(T0)).toBe(T0 + 60_000);
    b.take(T0 + 30_000, 0);
    expect(b.resetAt(T0 + 30_000)).toBe(T0 + 60_000);
  });

  test("clock going backwards neither adds nor removes tokens", () => {
    const b = new TokenBucket(10, perMinute(10), T0);
    b.take(T0, 10);
    expect(b.peek(T0 - 3_600_000)).toBe(0);
    expect(b.peek(T0 - 3_600_000 + 6_000)).toBe(1);
  });

  test("reconfigure keeps consumption", () => {
    const b = new TokenBucket(100, perMinute(100), T0);
    b.take(T0, 30);
    b.reconfigure(T0, 200, perMinute(200));
    expect(b.peek(T0)).toBe(170);
    b.reconfigure(T0, 20, perMinute(20));
    expect(b.peek(T0)).toBe(0);
  });

  test("rejects invalid configuration", () => {
    expect(() => new TokenBucket(-1, 1, T0)).toThrow(RangeError);
    expect(() => new TokenBucket(1, Number.NaN, T0)).toThrow(RangeError);
  });

  test("fromState restores a bucket", () => {
    const b = TokenBucket.fromState(10, perMinute(10), { tokens: 4, updatedAt: T0 });
    expect(b.peek(T0)).toBe(4);
    expect(b.snapshot()).toEqual({ tokens: 4, updatedAt: T0 });
  });
});

describe("BucketRegistry", () => {
  test("per-key buckets with LimitResult", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 100, refillPerMs: perMinute(100), clock: c.clock });
    let last = reg.take("form-a");
    expect(last).toEqual({ allowed: true, limit: 100, remaining: 99, resetAt: T0 + 600, retryAfterMs: 0 });
    for (let i = 0; i < 99; i++) last = reg.take("form-a");
    expect(last.allowed).toBe(true);
    expect(last.remaining).toBe(0);
    expect(last.resetAt).toBe(T0 + 60_000);
    const refused = reg.take("form-a");
    expect(refused).toEqual({ allowed: false, limit: 100, remaining: 0, resetAt: T0 + 60_000, retryAfterMs: 600 });
    // other keys are independent
    expect(reg.take("form-b").remaining).toBe(99);
    c.advance(600);
    expect(reg.take("form-a").allowed).toBe(true);
    expect(reg.take("form-a").allowed).toBe(false);
  });

  test("take with n", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 10, refillPerMs: perMinute(10), clock: c.clock });
    expect(reg.take("k", 7).remaining).toBe(3);
    const r = reg.take("k", 4);
    expect(r.allowed).toBe(false);
    expect(r.remaining).toBe(3);
    expect(r.retryAfterMs).toBe(6_000);
  });

  test("peek does not consume or create", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 5, refillPerMs: perMinute(5), clock: c.clock });
    expect(reg.peek("x")).toEqual({ allowed: true, limit: 5, remaining: 5, resetAt: T0, retryAfterMs: 0 });
    expect(reg.size()).toBe(0);
    reg.take("x", 5);
    expect(reg.peek("x")).toEqual({ allowed: false, limit: 5, remaining: 0, resetAt: T0 + 60_000, retryAfterMs: 12_000 });
    expect(reg.peek("x").remaining).toBe(0);
  });

  test("overrides: per-key capacity and rate", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 100, refillPerMs: perMinute(100), clock: c.clock });
    const small = { capacity: 2, refillPerMs: perMinute(2) };
    expect(reg.take("a", 1, small)).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(reg.take("a", 1, small)).toMatchObject({ allowed: true, remaining: 0 });
    const r = reg.take("a", 1, small);
    expect(r).toMatchObject({ allowed: false, limit: 2, remaining: 0, retryAfterMs: 30_000 });
    // peek with another override reports on that config but changes nothing
    expect(reg.peek("a", { capacity: 10, refillPerMs: perMinute(10) })).toMatchObject({ allowed: true, limit: 10, remaining: 8 });
    expect(reg.peek("a", small)).toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    // raising the limit on take keeps the two used tokens counted
    expect(reg.take("a", 1, { capacity: 10, refillPerMs: perMinute(10) })).toMatchObject({ allowed: true, limit: 10, remaining: 7 });
    // default key unaffected
    expect(reg.take("b")).toMatchObject({ limit: 100, remaining: 99 });
  });

  test("sweep drops full (idle) buckets only", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 10, refillPerMs: perMinute(10), clock: c.clock, sweepEveryMs: 0 });
    for (let i = 0; i < 1000; i++) reg.take(`k${i}`);
    reg.take("busy", 10);
    expect(reg.size()).toBe(1001);
    expect(reg.sweep()).toBe(0);
    c.advance(6_000); // one token back: the k* buckets are full again, "busy" has 1 of 10
    expect(reg.sweep()).toBe(1000);
    expect(reg.size()).toBe(1);
    // dropping a full bucket loses nothing: a new one is also full
    expect(reg.peek("k1")).toMatchObject({ remaining: 10 });
    expect(reg.peek("busy")).toMatchObject({ remaining: 1 });
    c.advance(60_000);
    expect(reg.sweep()).toBe(1);
    expect(reg.size()).toBe(0);
  });

  test("automatic sweep on take keeps memory bounded", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 10, refillPerMs: perMinute(10), clock: c.clock, sweepEveryMs: 60_000 });
    for (let minute = 0; minute < 30; minute++) {
      for (let i = 0; i < 100; i++) reg.take(`m${minute}-${i}`);
      c.advance(60_000);
    }
    expect(reg.size()).toBeLessThanOrEqual(200);
  });

  test("delete forgets a key", () => {
    const c = fakeClock();
    const reg = new BucketRegistry({ capacity: 1, refillPerMs: perMinute(1), clock: c.clock });
    reg.take("k");
    expect(reg.take("k").allowed).toBe(false);
    expect(reg.delete("k")).toBe(true);
    expect(reg.take("k").allowed).toBe(true);
  });
});
