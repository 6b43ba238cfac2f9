import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { daysValues, deliveryRate, resolvePeriodAndZone } from "../../../src/services/analytics";
import { dayBoundaries, periodWindow } from "../../../src/domain/time-series";
import { AppError } from "../../../src/errors";

describe("deliveryRate", () => {
  test("sent ÷ (sent + failed) × 100, one decimal, 0 when nothing was attempted", () => {
    expect(deliveryRate(0, 0)).toBe(0);
    expect(deliveryRate(3, 1)).toBe(75);
    expect(deliveryRate(2, 1)).toBe(66.7);
    expect(deliveryRate(1, 2)).toBe(33.3);
    expect(deliveryRate(0, 5)).toBe(0);
    expect(deliveryRate(999, 1)).toBe(99.9);
  });
});

describe("resolvePeriodAndZone", () => {
  test("defaults and canonical zone names", () => {
    expect(resolvePeriodAndZone(undefined, undefined)).toEqual({ period: "30d", timezone: "UTC" });
    expect(resolvePeriodAndZone("1y", "asia/kolkata")).toEqual({ period: "1y", timezone: "Asia/Kolkata" });
    expect(resolvePeriodAndZone("7d", undefined, "America/New_York").timezone).toBe("America/New_York");
  });
  test("bad values are a VALIDATION_ERROR listing both", () => {
    try {
      resolvePeriodAndZone("2d", "Mars/Base");
      throw new Error("no throw");
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).errors!.map((x) => x.field)).toEqual(["period", "timezone"]);
    }
  });
});

describe("daysValues", () => {
  test("one SQL row per day with [start, next start) as ISO strings; DST days are 23/25 h", () => {
    const now = Date.parse("2026-11-02T12:00:00Z");
    const { days } = periodWindow("7d", now, "America/New_York");
    const b = dayBoundaries(days, "America/New_York");
    const db = new Database(":memory:");
    const rows = db.query(`WITH d(i, lo, hi) AS (${daysValues(b)}) SELECT i, lo, hi FROM d ORDER BY i`).all() as any[];
    expect(rows.length).toBe(7);
    expect(rows[0].lo).toBe("2026-10-27T04:00:00.000Z");
    // 2026-11-01 is the fall-back day in New York: 25 hours.
    const nov1 = rows[days.indexOf("2026-11-01")];
    expect(Date.parse(nov1.hi) - Date.parse(nov1.lo)).toBe(25 * 3_600_000);
    for (let i = 1; i < rows.length; i++) expect(rows[i].lo).toBe(rows[i - 1].hi);
  });
});
