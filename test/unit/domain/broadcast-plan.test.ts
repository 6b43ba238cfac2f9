import { describe, expect, test } from "bun:test";
import { planSending, recipientDueAt, type SendingPlanInput } from "../../../src/domain/broadcast";
import { rng } from "../../helpers/rng";

/** The plan the slow way: every group of texts due at one instant, one at a time. */
function groupByGroup(p: SendingPlanInput) {
  const size = p.pacePerMinute ?? Math.max(p.count, 1);
  let delayed = 0;
  let t = -Infinity;
  for (let g = 0; g < Math.ceil(p.count / size); g++) {
    const n = Math.min(size, p.count - g * size);
    const paced = p.pacePerMinute ? p.start + g * 60_000 : p.start;
    const due = recipientDueAt(p.start, g * size, p.pacePerMinute, p.quiet);
    if (due !== paced) delayed += n;
    if (p.phoneRatePerMinute > 0) t = Math.max(t, due) + (n / p.phoneRatePerMinute) * 60_000;
  }
  return { delayed, finishesAt: p.phoneRatePerMinute > 0 ? Math.ceil(t) : null };
}

const NY_NIGHT = { hours: { start: "21:00", end: "08:00" }, timezone: "America/New_York" };

describe("planSending: the broadcast confirmation's time to send", () => {
  test("without a pace every text is due at the start and the phones' rate decides", () => {
    const start = Date.parse("2026-11-21T15:00:00.000Z"); // 10:00 in New York
    expect(planSending({ count: 120, start, pacePerMinute: null, quiet: NY_NIGHT, phoneRatePerMinute: 40 })).toEqual({ delayedByQuietHours: 0, firstDueAt: start, finishesAt: start + 3 * 60_000 });
    // Inside the quiet hours all of them wait for 08:00.
    const night = Date.parse("2026-11-21T03:30:00.000Z");
    expect(planSending({ count: 10, start: night, pacePerMinute: null, quiet: NY_NIGHT, phoneRatePerMinute: 10 })).toEqual({
      delayedByQuietHours: 10,
      firstDueAt: Date.parse("2026-11-21T13:00:00.000Z"),
      finishesAt: Date.parse("2026-11-21T13:01:00.000Z"),
    });
  });

  test("no phone connected: no finishing time; nobody to send to: done at the start", () => {
    const start = Date.parse("2026-11-21T15:00:00.000Z");
    expect(planSending({ count: 5, start, pacePerMinute: 2, quiet: NY_NIGHT, phoneRatePerMinute: 0 }).finishesAt).toBeNull();
    expect(planSending({ count: 0, start, pacePerMinute: null, quiet: NY_NIGHT, phoneRatePerMinute: 5 })).toEqual({ delayedByQuietHours: 0, firstDueAt: start, finishesAt: start });
  });

  test("a pace slower than the phones ends with the last minute's texts; faster, with the phones' backlog", () => {
    const start = Date.parse("2026-11-21T15:00:00.000Z");
    const none = { hours: null, timezone: "UTC" };
    expect(planSending({ count: 25, start, pacePerMinute: 10, quiet: none, phoneRatePerMinute: 100 }).finishesAt).toBe(start + 2 * 60_000 + 3_000);
    expect(planSending({ count: 25, start, pacePerMinute: 10, quiet: none, phoneRatePerMinute: 5 }).finishesAt).toBe(start + 5 * 60_000);
  });

  test("taking runs of groups whole gives the figures of going group by group, across quiet hours and a DST change", () => {
    const random = rng(24);
    const zones = [NY_NIGHT, { hours: { start: "08:00", end: "09:30" }, timezone: "Europe/London" }, { hours: null, timezone: "UTC" }];
    for (let i = 0; i < 400; i++) {
      const p: SendingPlanInput = {
        count: Math.floor(random() * 800),
        // Around 8 March 2026, when New York's clocks go forward.
        start: Date.parse("2026-03-07T00:00:00.000Z") + Math.floor(random() * 3 * 86_400_000),
        pacePerMinute: [null, 1, 3, 7, 50][i % 5],
        quiet: zones[i % 3],
        phoneRatePerMinute: [0, 1, 2, 5, 50, 1000][i % 6],
      };
      const fast = planSending(p);
      const slow = groupByGroup(p);
      expect(fast.delayedByQuietHours).toBe(slow.delayed);
      if (slow.finishesAt === null) expect(fast.finishesAt).toBeNull();
      else expect(Math.abs(fast.finishesAt! - slow.finishesAt)).toBeLessThanOrEqual(1);
    }
  });

  test("100,000 recipients at one a minute across weeks of quiet hours are planned quickly", () => {
    const t0 = performance.now();
    const plan = planSending({ count: 100_000, start: Date.parse("2026-11-21T03:30:00.000Z"), pacePerMinute: 1, quiet: NY_NIGHT, phoneRatePerMinute: 50 });
    expect(plan.delayedByQuietHours).toBeGreaterThan(0);
    // A group-by-group loop over 100,000 one-a-minute sends is far slower; a loaded machine is not
    // (scripts/bench/hostile-input.ts measures the plan's time).
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
});
