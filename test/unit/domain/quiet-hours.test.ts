import { describe, expect, test } from "bun:test";
import { afterQuietHours, instantOfLocalTime, isValidQuietHours } from "../../../src/domain/quiet-hours";
import { deferForDailyLimit } from "../../../src/domain/daily-limit";

const NY = "America/New_York";
const at = (s: string) => Date.parse(s);
const iso = (ms: number) => new Date(ms).toISOString();
const night = { start: "21:00", end: "08:00" };

describe("isValidQuietHours", () => {
  test("HH:MM 24-hour pairs that differ", () => {
    expect(isValidQuietHours(night)).toBe(true);
    expect(isValidQuietHours({ start: "08:00", end: "17:30" })).toBe(true);
    for (const bad of [null, [], {}, { start: "21:00" }, { start: "9:00", end: "10:00" }, { start: "24:00", end: "08:00" }, { start: "08:00", end: "08:00" }, { start: "21:00", end: "08:00", x: 1 }]) {
      expect(isValidQuietHours(bad)).toBe(false);
    }
  });
});

describe("instantOfLocalTime", () => {
  test("plain days, the spring-forward gap and the fall-back repeat", () => {
    expect(iso(instantOfLocalTime("2026-01-15", 8 * 60, NY))).toBe("2026-01-15T13:00:00.000Z");
    expect(iso(instantOfLocalTime("2026-07-15", 8 * 60, NY))).toBe("2026-07-15T12:00:00.000Z");
    // 02:30 does not exist on 2026-03-08: the clocks jump at 07:00Z.
    expect(iso(instantOfLocalTime("2026-03-08", 150, NY))).toBe("2026-03-08T07:00:00.000Z");
    // 01:30 happens twice on 2026-11-01: the first one (EDT).
    expect(iso(instantOfLocalTime("2026-11-01", 90, NY))).toBe("2026-11-01T05:30:00.000Z");
  });
});

describe("afterQuietHours", () => {
  test("outside: unchanged; before midnight: tomorrow's end; after midnight: today's end", () => {
    expect(afterQuietHours(at("2026-01-15T17:00:00Z"), NY, night)).toBe(at("2026-01-15T17:00:00Z")); // 12:00
    expect(iso(afterQuietHours(at("2026-01-16T02:30:00Z"), NY, night))).toBe("2026-01-16T13:00:00.000Z"); // 21:30 → 08:00
    expect(iso(afterQuietHours(at("2026-01-16T08:00:00Z"), NY, night))).toBe("2026-01-16T13:00:00.000Z"); // 03:00 → 08:00
    expect(afterQuietHours(at("2026-01-16T13:00:00Z"), NY, night)).toBe(at("2026-01-16T13:00:00Z")); // exactly 08:00: allowed
    expect(afterQuietHours(at("2026-01-16T02:30:00Z"), NY, null)).toBe(at("2026-01-16T02:30:00Z"));
  });

  test("across DST: the end is 08:00 on the wall clock, whichever offset applies", () => {
    expect(iso(afterQuietHours(at("2026-03-08T03:00:00Z"), NY, night))).toBe("2026-03-08T12:00:00.000Z"); // Sat 22:00 EST → Sun 08:00 EDT
    expect(iso(afterQuietHours(at("2026-11-01T02:00:00Z"), NY, night))).toBe("2026-11-01T13:00:00.000Z"); // Sat 22:00 EDT → Sun 08:00 EST
  });

  test("daytime quiet hours (not over midnight)", () => {
    const lunch = { start: "12:00", end: "13:30" };
    expect(iso(afterQuietHours(at("2026-01-15T17:10:00Z"), NY, lunch))).toBe("2026-01-15T18:30:00.000Z");
    expect(afterQuietHours(at("2026-01-15T18:30:00Z"), NY, lunch)).toBe(at("2026-01-15T18:30:00Z"));
  });
});

describe("daily limit with quiet hours", () => {
  test("a full day defers to the next day's first allowed instant, not midnight", () => {
    const full = new Set(["2026-03-08T05:00:00.000Z"]); // Sunday's day start (EST midnight) is full
    const count = (from: number) => (full.has(iso(from)) ? 1 : 0);
    const allowed = (t: number) => afterQuietHours(t, NY, night);
    const start = allowed(at("2026-03-08T15:00:00Z")); // Sunday 11:00 EDT
    expect(iso(deferForDailyLimit(start, NY, 1, count, 30, allowed))).toBe("2026-03-09T12:00:00.000Z");
    expect(iso(deferForDailyLimit(start, NY, 1, count, 30))).toBe("2026-03-09T04:00:00.000Z"); // v1: midnight EDT
  });
});
