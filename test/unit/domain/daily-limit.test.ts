import { describe, expect, test } from "bun:test";
import { deferForDailyLimit } from "../../../src/domain/daily-limit";

describe("deferForDailyLimit", () => {
  const at = (s: string) => Date.parse(s);
  test("keeps the instant while its day has room", () => {
    expect(deferForDailyLimit(at("2026-01-10T15:00:00Z"), "UTC", 3, () => 2)).toBe(at("2026-01-10T15:00:00Z"));
  });
  test("moves to the start of the next local day with room", () => {
    const full = new Set([at("2026-01-10T05:00:00Z"), at("2026-01-11T05:00:00Z")]); // local midnights in New York (UTC-5)
    const counted: Array<[number, number]> = [];
    const r = deferForDailyLimit(at("2026-01-10T15:00:00Z"), "America/New_York", 1, (from, to) => {
      counted.push([from, to]);
      return full.has(from) ? 1 : 0;
    });
    expect(r).toBe(at("2026-01-12T05:00:00Z"));
    expect(counted[0]).toEqual([at("2026-01-10T05:00:00Z"), at("2026-01-11T05:00:00Z")]);
  });
  test("gives up after maxDays", () => {
    expect(deferForDailyLimit(0, "UTC", 1, () => 5, 3)).toBe(3 * 86_400_000);
  });
});
