import { describe, expect, test } from "bun:test";
import {
  PERIODS,
  PERIOD_DAYS,
  addDays,
  bucketIndex,
  canonicalTimeZone,
  countByDay,
  dateRange,
  dayBoundaries,
  dayStart,
  fillDaily,
  isPeriod,
  isValidDate,
  isValidTimeZone,
  localDate,
  nextDayStart,
  periodWindow,
  startOfLocalDay,
  utcOffsetMinutesAt,
} from "../../../src/domain/time-series";

const ms = (iso: string) => Date.parse(iso);
const H = 3_600_000;
const NY = "America/New_York";
const TOKYO = "Asia/Tokyo";
const LONDON = "Europe/London";

describe("periods", () => {
  test("list and lengths", () => {
    expect(PERIODS).toEqual(["1d", "7d", "30d", "90d", "1y"]);
    expect(PERIOD_DAYS).toEqual({ "1d": 1, "7d": 7, "30d": 30, "90d": 90, "1y": 365 });
    expect(isPeriod("30d")).toBe(true);
    expect(isPeriod("2d")).toBe(false);
    expect(isPeriod(undefined)).toBe(false);
  });
});

describe("isValidTimeZone / canonicalTimeZone", () => {
  test("IANA names", () => {
    for (const tz of ["UTC", NY, TOKYO, LONDON, "Etc/GMT+5", "America/Argentina/Buenos_Aires"]) {
      expect(isValidTimeZone(tz)).toBe(true);
    }
    expect(canonicalTimeZone("america/new_york")).toBe(NY);
    expect(canonicalTimeZone("utc")).toBe("UTC");
  });
  test("rejects unknown zones, raw offsets and junk", () => {
    for (const tz of ["", "Mars/Olympus", "EST5EDT/Nope", "+05:00", "-0300", "12", "x".repeat(100)]) {
      expect(isValidTimeZone(tz)).toBe(false);
    }
    expect(isValidTimeZone(undefined as unknown as string)).toBe(false);
    expect(canonicalTimeZone("Nope/Nope")).toBeNull();
  });
});

describe("localDate around midnight", () => {
  test("UTC instant seen in different zones", () => {
    const t = ms("2026-11-21T03:30:00Z");
    expect(localDate(t, "UTC")).toBe("2026-11-21");
    expect(localDate(t, NY)).toBe("2026-11-20"); // 22:30 EST
    expect(localDate(t, TOKYO)).toBe("2026-11-21"); // 12:30 JST
    expect(localDate(t, LONDON)).toBe("2026-11-21");
  });
  test("Tokyo midnight is 15:00 UTC the day before", () => {
    expect(localDate(ms("2026-11-20T14:59:59.999Z"), TOKYO)).toBe("2026-11-20");
    expect(localDate(ms("2026-11-20T15:00:00.000Z"), TOKYO)).toBe("2026-11-21");
  });
  test("New York midnight in winter and summer", () => {
    expect(localDate(ms("2026-01-15T04:59:59.999Z"), NY)).toBe("2026-01-14");
    expect(localDate(ms("2026-01-15T05:00:00.000Z"), NY)).toBe("2026-01-15");
    expect(localDate(ms("2026-07-15T03:59:59.999Z"), NY)).toBe("2026-07-14");
    expect(localDate(ms("2026-07-15T04:00:00.000Z"), NY)).toBe("2026-07-15");
  });
  test("London in summer time", () => {
    expect(localDate(ms("2026-06-30T23:30:00Z"), LONDON)).toBe("2026-07-01");
    expect(localDate(ms("2026-12-31T23:30:00Z"), LONDON)).toBe("2026-12-31");
  });
});

describe("utcOffsetMinutesAt", () => {
  test("standard and daylight offsets", () => {
    expect(utcOffsetMinutesAt(ms("2026-01-15T12:00:00Z"), NY)).toBe(-300);
    expect(utcOffsetMinutesAt(ms("2026-07-15T12:00:00Z"), NY)).toBe(-240);
    expect(utcOffsetMinutesAt(ms("2026-07-15T12:00:00Z"), TOKYO)).toBe(540);
    expect(utcOffsetMinutesAt(ms("2026-01-15T12:00:00Z"), LONDON)).toBe(0);
    expect(utcOffsetMinutesAt(ms("2026-07-15T12:00:00Z"), LONDON)).toBe(60);
    expect(utcOffsetMinutesAt(ms("2026-07-15T12:00:00Z"), "Asia/Kolkata")).toBe(330);
    expect(utcOffsetMinutesAt(ms("2026-07-15T12:00:00.999Z"), "UTC")).toBe(0);
  });
  test("switches exactly at the transition instant", () => {
    // New York springs forward at 2026-03-08 02:00 EST = 07:00Z
    expect(utcOffsetMinutesAt(ms("2026-03-08T06:59:59.999Z"), NY)).toBe(-300);
    expect(utcOffsetMinutesAt(ms("2026-03-08T07:00:00.000Z"), NY)).toBe(-240);
    // and falls back at 2026-11-01 02:00 EDT = 06:00Z
    expect(utcOffsetMinutesAt(ms("2026-11-01T05:59:59.999Z"), NY)).toBe(-240);
    expect(utcOffsetMinutesAt(ms("2026-11-01T06:00:00.000Z"), NY)).toBe(-300);
  });
});

describe("startOfLocalDay / nextDayStart", () => {
  test("ordinary days", () => {
    expect(startOfLocalDay("2026-11-21", "UTC")).toBe(ms("2026-11-21T00:00:00Z"));
    expect(startOfLocalDay("2026-11-21", TOKYO)).toBe(ms("2026-11-20T15:00:00Z"));
    expect(startOfLocalDay("2026-11-21", NY)).toBe(ms("2026-11-21T05:00:00Z"));
    expect(startOfLocalDay("2026-07-04", NY)).toBe(ms("2026-07-04T04:00:00Z"));
    expect(startOfLocalDay("2026-07-04", LONDON)).toBe(ms("2026-07-03T23:00:00Z"));
    expect(startOfLocalDay("2028-02-29", NY)).toBe(ms("2028-02-29T05:00:00Z"));
  });

  test("New York 2026-03-08 is 23 hours long", () => {
    const start = startOfLocalDay("2026-03-08", NY);
    const end = startOfLocalDay("2026-03-09", NY);
    expect(start).toBe(ms("2026-03-08T05:00:00Z"));
    expect(end).toBe(ms("2026-03-09T04:00:00Z"));
    expect(end - start).toBe(23 * H);
    expect(nextDayStart(start, NY)).toBe(end);
    expect(nextDayStart(ms("2026-03-08T12:00:00Z"), NY)).toBe(end);
    expect(nextDayStart(end - 1, NY)).toBe(end);
  });

  test("New York 2026-11-01 is 25 hours long", () => {
    const start = startOfLocalDay("2026-11-01", NY);
    const end = startOfLocalDay("2026-11-02", NY);
    expect(start).toBe(ms("2026-11-01T04:00:00Z"));
    expect(end).toBe(ms("2026-11-02T05:00:00Z"));
    expect(end - start).toBe(25 * H);
    // an instant inside the repeated hour (01:30 EST, second time)
    expect(nextDayStart(ms("2026-11-01T06:30:00Z"), NY)).toBe(end);
    expect(dayStart(ms("2026-11-01T06:30:00Z"), NY)).toBe(start);
  });

  test("London DST days (23 h and 25 h)", () => {
    expect(startOfLocalDay("2026-03-30", LONDON) - startOfLocalDay("2026-03-29", LONDON)).toBe(23 * H);
    expect(startOfLocalDay("2026-10-26", LONDON) - startOfLocalDay("2026-10-25", LONDON)).toBe(25 * H);
    expect(startOfLocalDay("2026-03-29", LONDON)).toBe(ms("2026-03-29T00:00:00Z"));
    expect(startOfLocalDay("2026-03-30", LONDON)).toBe(ms("2026-03-29T23:00:00Z"));
  });

  test("Tokyo has no DST: every day is 24 h", () => {
    let d = "2026-01-01";
    for (let i = 0; i < 365; i++) {
      const next = addDays(d, 1);
      expect(startOfLocalDay(next, TOKYO) - startOfLocalDay(d, TOKYO)).toBe(24 * H);
      d = next;
    }
  });

  test("a DST change at midnight: the day starts at 01:00 local", () => {
    // Chile (America/Santiago) skips 2026-09-06 00:00 → 01:00.
    const s = startOfLocalDay("2026-09-06", "America/Santiago");
    expect(localDate(s, "America/Santiago")).toBe("2026-09-06");
    expect(localDate(s - 1, "America/Santiago")).toBe("2026-09-05");
    expect(s).toBe(ms("2026-09-06T04:00:00Z"));
    // Beirut skips 2026-03-29 00:00 → 01:00
    const b = startOfLocalDay("2026-03-29", "Asia/Beirut");
    expect(localDate(b, "Asia/Beirut")).toBe("2026-03-29");
    expect(localDate(b - 1, "Asia/Beirut")).toBe("2026-03-28");
  });

  test("every day of 2026 in several zones: start is the first instant of the date", () => {
    for (const tz of [NY, LONDON, TOKYO, "America/Santiago", "Australia/Lord_Howe", "Asia/Kathmandu"]) {
      let d = "2026-01-01";
      for (let i = 0; i < 365; i++) {
        const s = startOfLocalDay(d, tz);
        expect(localDate(s, tz)).toBe(d);
        expect(localDate(s - 1, tz)).toBe(addDays(d, -1));
        d = addDays(d, 1);
      }
    }
  });

  test("invalid dates throw", () => {
    expect(() => startOfLocalDay("2026-02-30", NY)).toThrow(RangeError);
    expect(() => startOfLocalDay("2026-2-3", NY)).toThrow(RangeError);
    expect(() => startOfLocalDay("yesterday", NY)).toThrow(RangeError);
    expect(isValidDate("2028-02-29")).toBe(true);
    expect(isValidDate("2026-02-29")).toBe(false);
  });
});

describe("addDays / dateRange", () => {
  test("calendar arithmetic", () => {
    expect(addDays("2026-02-28", 1)).toBe("2026-03-01");
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
    expect(addDays("2026-03-08", 1)).toBe("2026-03-09");
    expect(dateRange("2026-03-02", 3)).toEqual(["2026-02-28", "2026-03-01", "2026-03-02"]);
  });
});

describe("periodWindow", () => {
  test("7d in New York just after local midnight", () => {
    const now = ms("2026-11-21T05:30:00Z"); // 00:30 EST on the 21st
    const w = periodWindow("7d", now, NY);
    expect(w.days).toEqual(["2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"]);
    expect(w.from).toBe(ms("2026-11-15T05:00:00Z"));
    expect(w.to).toBe(now);
  });

  test("the same instant is a different day in Tokyo and in New York", () => {
    const now = ms("2026-11-21T03:30:00Z");
    expect(periodWindow("1d", now, TOKYO)).toEqual({ from: ms("2026-11-20T15:00:00Z"), to: now, days: ["2026-11-21"] });
    expect(periodWindow("1d", now, NY)).toEqual({ from: ms("2026-11-20T05:00:00Z"), to: now, days: ["2026-11-20"] });
  });

  test("lengths of every period", () => {
    const now = ms("2026-11-21T12:00:00Z");
    for (const p of PERIODS) {
      const w = periodWindow(p, now, LONDON);
      expect(w.days.length).toBe(PERIOD_DAYS[p]);
      expect(w.days[w.days.length - 1]).toBe("2026-11-21");
      expect(w.from).toBe(startOfLocalDay(w.days[0], LONDON));
    }
    expect(periodWindow("1y", now, "UTC").days[0]).toBe("2025-11-22");
  });

  test("a window across the spring-forward day", () => {
    const now = ms("2026-03-09T16:00:00Z");
    const w = periodWindow("7d", now, NY);
    expect(w.days[0]).toBe("2026-03-03");
    expect(w.from).toBe(ms("2026-03-03T05:00:00Z"));
    const b = dayBoundaries(w.days, NY);
    expect(b.length).toBe(8);
    expect(b[6] - b[5]).toBe(23 * H); // 2026-03-08
    expect(b[7]).toBe(ms("2026-03-10T04:00:00Z"));
  });

  test("invalid period throws", () => {
    expect(() => periodWindow("2w" as never, 0, "UTC")).toThrow(RangeError);
  });
});

describe("dayBoundaries / bucketIndex", () => {
  const days = ["2026-10-31", "2026-11-01", "2026-11-02"];
  const b = dayBoundaries(days, NY);

  test("boundaries across fall-back", () => {
    expect(b).toEqual([
      ms("2026-10-31T04:00:00Z"),
      ms("2026-11-01T04:00:00Z"),
      ms("2026-11-02T05:00:00Z"),
      ms("2026-11-03T05:00:00Z"),
    ]);
    expect(dayBoundaries([], NY)).toEqual([]);
  });

  test("bucket lookup", () => {
    expect(bucketIndex(b, ms("2026-10-31T03:59:59.999Z"))).toBe(-1);
    expect(bucketIndex(b, ms("2026-10-31T04:00:00Z"))).toBe(0);
    expect(bucketIndex(b, ms("2026-11-01T03:59:59.999Z"))).toBe(0);
    expect(bucketIndex(b, ms("2026-11-01T04:00:00Z"))).toBe(1);
    expect(bucketIndex(b, ms("2026-11-01T06:30:00Z"))).toBe(1); // repeated 01:30
    expect(bucketIndex(b, ms("2026-11-02T04:59:59.999Z"))).toBe(1);
    expect(bucketIndex(b, ms("2026-11-02T05:00:00Z"))).toBe(2);
    expect(bucketIndex(b, ms("2026-11-03T04:59:59.999Z"))).toBe(2);
    expect(bucketIndex(b, ms("2026-11-03T05:00:00Z"))).toBe(-1);
    expect(bucketIndex(b, Number.NaN)).toBe(-1);
    expect(bucketIndex([], 0)).toBe(-1);
    expect(bucketIndex([5], 5)).toBe(-1);
  });

  test("bucketIndex agrees with localDate for a year of hours", () => {
    const w = periodWindow("1y", ms("2026-12-31T12:00:00Z"), NY);
    const bounds = dayBoundaries(w.days, NY);
    for (let t = w.from; t < w.to; t += 3 * H + 7 * 60_000) {
      expect(w.days[bucketIndex(bounds, t)]).toBe(localDate(t, NY));
    }
  });

  test("countByDay", () => {
    const counts = countByDay(days, NY, [
      ms("2026-10-31T12:00:00Z"),
      ms("2026-11-01T05:30:00Z"),
      ms("2026-11-01T06:30:00Z"),
      ms("2026-12-01T00:00:00Z"),
    ]);
    expect([...counts]).toEqual([
      ["2026-10-31", 1],
      ["2026-11-01", 2],
    ]);
  });
});

describe("fillDaily", () => {
  test("zero days included, oldest first, date first", () => {
    const days = ["2026-11-19", "2026-11-20", "2026-11-21"];
    const rows = new Map([["2026-11-20", { sent: 3, failed: 1 }]]);
    const out = fillDaily(days, rows, () => ({ sent: 0, failed: 0 }));
    expect(out).toEqual([
      { date: "2026-11-19", sent: 0, failed: 0 },
      { date: "2026-11-20", sent: 3, failed: 1 },
      { date: "2026-11-21", sent: 0, failed: 0 },
    ]);
    expect(Object.keys(out[0])[0]).toBe("date");
  });
  test("fresh zero objects, rows outside the days ignored", () => {
    const out = fillDaily(["2026-01-01", "2026-01-02"], new Map([["2025-12-31", { n: 9 }]]), () => ({ n: 0 }));
    out[0].n = 5;
    expect(out[1].n).toBe(0);
    expect(out.length).toBe(2);
  });
});
