import { describe, expect, test } from "bun:test";
import { COUNTED_PER_ADDRESS, EMAIL_FAILURES_PER_HOUR, PAIR_FAILURES, PAIR_REFILL_PER_HOUR, PasswordGuessLimits } from "../../../src/limits/password-guesses";

const HOUR = 3_600_000;

function limits(perAddressPerMinute = 1000) {
  const clock = { now: Date.parse("2026-12-01T00:00:00Z") };
  return { clock, l: new PasswordGuessLimits(perAddressPerMinute, () => clock.now) };
}
const never = () => false;

describe("password guesses for one e-mail and one address", () => {
  test(`${PAIR_FAILURES} failures, then one more every ${60 / PAIR_REFILL_PER_HOUR} minutes; other addresses are not held`, () => {
    const { clock, l } = limits();
    for (let i = 0; i < PAIR_FAILURES; i++) {
      expect(l.check("ann@x", "1.1.1.1", never)).toBeNull();
      l.failed("ann@x", "1.1.1.1");
    }
    const r = l.check("ann@x", "1.1.1.1", never)!;
    expect(r.scope).toBe("pair");
    expect(r.retryAfterMs).toBeGreaterThan(0);
    expect(l.check("ann@x", "2.2.2.2", never)).toBeNull();
    expect(l.check("bob@x", "1.1.1.1", never)).toBeNull();
    clock.now += HOUR / PAIR_REFILL_PER_HOUR;
    expect(l.check("ann@x", "1.1.1.1", never)).toBeNull();
  });
});

describe("password guesses for one e-mail from many addresses", () => {
  test("one address alone never reaches the e-mail's total", () => {
    const { clock, l } = limits();
    for (let i = 0; i < 200; i++) {
      if (l.check("ann@x", "1.1.1.1", never) === null) l.failed("ann@x", "1.1.1.1");
      clock.now += 60_000;
    }
    expect(l.check("ann@x", "9.9.9.9", never)).toBeNull();
  });

  test(`past ${EMAIL_FAILURES_PER_HOUR} counted failures, untrusted addresses wait for the oldest to age out; trusted ones do not`, () => {
    const { clock, l } = limits();
    const start = clock.now;
    let failures = 0;
    for (let a = 0; failures < EMAIL_FAILURES_PER_HOUR; a++) {
      for (let i = 0; i < COUNTED_PER_ADDRESS && failures < EMAIL_FAILURES_PER_HOUR; i++) {
        expect(l.check("ann@x", `10.0.0.${a}`, never)).toBeNull();
        l.failed("ann@x", `10.0.0.${a}`);
        failures++;
        clock.now += 1_000;
      }
    }
    const r = l.check("ann@x", "10.0.1.1", never)!;
    expect(r.scope).toBe("email");
    expect(r.retryAfterMs).toBe(start + HOUR - clock.now);
    expect(l.check("ann@x", "10.0.1.1", () => true)).toBeNull();
    expect(l.check("bob@x", "10.0.1.1", never)).toBeNull();
    clock.now = start + HOUR + 1;
    expect(l.check("ann@x", "10.0.1.1", never)).toBeNull();
  });
});

describe("a guesser spread over many addresses", () => {
  test.each([2, 3, 4, 10, 200])("with %p addresses, trying every minute for three hours: at most 35 tries in any hour", (addresses) => {
    const { clock, l } = limits();
    const tries: number[] = [];
    for (let minute = 0; minute < 180; minute++) {
      for (let a = 0; a < addresses; a++) {
        for (let burst = 0; burst < 20; burst++) {
          if (l.check("ann@x", `10.1.${a >> 8}.${a & 255}`, never) !== null) break;
          l.failed("ann@x", `10.1.${a >> 8}.${a & 255}`);
          tries.push(clock.now);
        }
      }
      clock.now += 60_000;
    }
    let worst = 0;
    for (const t of tries) worst = Math.max(worst, tries.filter((x) => x >= t && x < t + HOUR).length);
    expect(worst).toBeLessThanOrEqual(35);
    expect(worst).toBeGreaterThanOrEqual(EMAIL_FAILURES_PER_HOUR);
  });
});

describe("password guesses from one address", () => {
  test("the address's per-minute limit covers every e-mail", () => {
    const { l } = limits(3);
    for (let i = 0; i < 3; i++) l.failed(`p${i}@x`, "1.1.1.1");
    expect(l.check("someone@x", "1.1.1.1", () => true)!.scope).toBe("address");
    expect(l.check("someone@x", "2.2.2.2", never)).toBeNull();
  });
});
