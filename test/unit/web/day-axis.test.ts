import { describe, expect, test } from "bun:test";
import { dayAxis, dayPoints, dayText } from "../../../web/day-axis";

describe("a daily chart's axis", () => {
  test("one tick per day of the data, labelled with the day and never an hour", () => {
    const dates = ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"];
    const xs = dayPoints(dates);
    const axis = dayAxis(xs);
    expect(axis.splits()).toEqual(xs);
    const labels = axis.values(null, axis.splits());
    expect(labels.length).toBe(7);
    for (const [i, l] of labels.entries()) {
      expect(l).toContain(String(20 + i));
      expect(l).not.toMatch(/\d:\d\d|am|pm/i);
    }
    expect(dayText(xs[0])).toBe(labels[0]);
  });
});
