import { describe, expect, test } from "bun:test";
import { humanDuration } from "../../../src/domain/duration";

describe("humanDuration", () => {
  test("n/a for missing values", () => {
    expect(humanDuration(null)).toBe("n/a");
    expect(humanDuration(undefined)).toBe("n/a");
    expect(humanDuration(Number.NaN)).toBe("n/a");
    expect(humanDuration(Number.POSITIVE_INFINITY)).toBe("n/a");
    expect(humanDuration("12" as unknown as number)).toBe("n/a");
  });

  test("contract examples", () => {
    expect(humanDuration(0)).toBe("0s");
    expect(humanDuration(42)).toBe("42s");
    expect(humanDuration(252)).toBe("4m 12s");
    expect(humanDuration(3900)).toBe("1h 5m");
    expect(humanDuration(2 * 86400 + 3 * 3600)).toBe("2d 3h");
  });

  test("second unit dropped when zero", () => {
    expect(humanDuration(3600)).toBe("1h");
    expect(humanDuration(300)).toBe("5m");
    expect(humanDuration(86400)).toBe("1d");
    expect(humanDuration(86400 + 60)).toBe("1d"); // 1d 0h 1m: only the two largest units
    expect(humanDuration(3600 + 59)).toBe("1h"); // 1h 0m 59s
    expect(humanDuration(60)).toBe("1m");
  });

  test("only two units, smaller ones truncated", () => {
    expect(humanDuration(90061)).toBe("1d 1h");
    expect(humanDuration(3661)).toBe("1h 1m");
    expect(humanDuration(7199)).toBe("1h 59m");
    expect(humanDuration(59)).toBe("59s");
    expect(humanDuration(100 * 86400)).toBe("100d");
  });

  test("rounds to whole seconds first", () => {
    expect(humanDuration(0.4)).toBe("0s");
    expect(humanDuration(0.5)).toBe("1s");
    expect(humanDuration(59.5)).toBe("1m");
    expect(humanDuration(251.6)).toBe("4m 12s");
    expect(humanDuration(3599.7)).toBe("1h");
  });

  test("negative durations keep their sign", () => {
    expect(humanDuration(-252)).toBe("-4m 12s");
    expect(humanDuration(-0.2)).toBe("0s");
  });
});
