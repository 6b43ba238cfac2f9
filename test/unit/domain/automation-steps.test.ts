import { describe, expect, test } from "bun:test";
import { checkStepFields, describeStepTime, parseAutomationBody, parseDuration, stepTime, type AutomationStep } from "../../../src/domain/automation-steps";

const at = (s: string) => Date.parse(s);
const iso = (ms: number) => new Date(ms).toISOString();
const time = (step: AutomationStep, start: string, opts: { now?: string; tz?: string; date?: string | null } = {}) => {
  const r = stepTime(step, { start: at(start), now: at(opts.now ?? start), timezone: opts.tz ?? "America/New_York", date: opts.date ?? null });
  return "at" in r ? iso(r.at) : r.skipped;
};

describe("parseDuration", () => {
  test("minutes, hours, days, weeks; a sign only where allowed; a bound", () => {
    expect(parseDuration("30m", false)).toMatchObject({ n: 30, unit: "m", ms: 1_800_000 });
    expect(parseDuration("2h", false)?.ms).toBe(7_200_000);
    expect(parseDuration("1w", false)?.ms).toBe(7 * 86_400_000);
    expect(parseDuration("-1d", true)).toMatchObject({ negative: true, ms: -86_400_000 });
    expect(parseDuration("-1d", false)).toBeNull();
    for (const bad of ["", "2", "2 d", "2days", "1.5h", "d", "367d", "53w", 2, null]) expect(parseDuration(bad, true)).toBeNull();
    expect(parseDuration("366d", false)).not.toBeNull();
  });
});

describe("stepTime in a zone with DST (America/New_York; clocks back 1 Nov 2026, forward 8 Mar 2026)", () => {
  test("days count on the calendar: 2d at 10:00 is 10:00 local two days later, across fall back", () => {
    // Friday 10:00 EDT → Sunday 10:00 EST.
    expect(time({ template: "x", delay: "2d", sendAt: "10:00" }, "2026-10-30T14:00:00.000Z")).toBe("2026-11-01T15:00:00.000Z");
    // Without sendAt: the same wall time (15:30 stays 15:30), not 48 elapsed hours.
    expect(time({ template: "x", delay: "2d" }, "2026-10-30T19:30:00.000Z")).toBe("2026-11-01T20:30:00.000Z");
    // Spring forward: Saturday 09:00 EST → Monday 09:00 EDT.
    expect(time({ template: "x", delay: "2d", sendAt: "09:00" }, "2026-03-07T14:00:00.000Z")).toBe("2026-03-09T13:00:00.000Z");
    expect(time({ template: "x", delay: "1w", sendAt: "09:00" }, "2026-03-07T14:00:00.000Z")).toBe("2026-03-14T13:00:00.000Z");
  });

  test("hours are elapsed time; a sendAt already passed that day moves to the next", () => {
    expect(time({ template: "x", delay: "2h" }, "2026-11-01T05:00:00.000Z")).toBe("2026-11-01T07:00:00.000Z");
    // 09:50 + 30m = 10:20 local, past 10:00 → tomorrow 10:00.
    expect(time({ template: "x", delay: "30m", sendAt: "10:00" }, "2026-10-30T13:50:00.000Z")).toBe("2026-10-31T14:00:00.000Z");
    expect(time({ template: "x", delay: "30m", sendAt: "11:00" }, "2026-10-30T13:50:00.000Z")).toBe("2026-10-30T15:00:00.000Z");
  });

  test("relative to a date: the day before at sendAt, 09:00 without one; local on DST days", () => {
    const step = { template: "x", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" };
    expect(time(step, "2026-10-20T12:00:00.000Z", { date: "2026-11-02" })).toBe("2026-11-01T14:00:00.000Z");
    expect(time({ template: "x", relativeTo: "appointment", offset: "0d" }, "2026-10-20T12:00:00.000Z", { date: "2026-11-01" })).toBe("2026-11-01T14:00:00.000Z");
    expect(time({ template: "x", relativeTo: "appointment", offset: "-2h", sendAt: "10:00" }, "2026-10-20T12:00:00.000Z", { date: "2026-11-01" })).toBe("2026-11-01T13:00:00.000Z");
    // A sendAt the spring-forward skips (02:30 on 8 March) is the instant of the jump.
    expect(time({ template: "x", relativeTo: "appointment", offset: "0d", sendAt: "02:30" }, "2026-03-01T12:00:00.000Z", { date: "2026-03-08" })).toBe("2026-03-08T07:00:00.000Z");
  });

  test("a time passed by more than its own offset is skipped (past); by less it goes now; no date → no-date", () => {
    const step = { template: "x", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" };
    expect(time(step, "2026-11-05T15:00:00.000Z", { date: "2026-11-04" })).toBe("past");
    // The reminder for tomorrow's 09:00 was due today at 09:00; at 10:00 it is 1 h late, within the day.
    expect(time(step, "2026-11-05T15:00:00.000Z", { date: "2026-11-06" })).toBe("2026-11-05T15:00:00.000Z");
    expect(time({ template: "x", relativeTo: "appointment", offset: "0d", sendAt: "09:00" }, "2026-11-05T15:00:00.000Z", { date: "2026-11-05" })).toBe("past");
    expect(time(step, "2026-11-05T15:00:00.000Z", { date: null })).toBe("no-date");
    // A delay step whose run starts late (a server down for days) is skipped past its own delay.
    expect(time({ template: "x", delay: "2h" }, "2026-11-01T00:00:00.000Z", { now: "2026-11-01T05:00:00.000Z" })).toBe("past");
    expect(time({ template: "x", delay: "2h" }, "2026-11-01T00:00:00.000Z", { now: "2026-11-01T03:00:00.000Z" })).toBe("2026-11-01T03:00:00.000Z");
  });

  test("describeStepTime reads like the owner's words", () => {
    expect(describeStepTime({ template: "x", delay: "2d", sendAt: "10:00" })).toBe("2 days after the form, at 10:00");
    expect(describeStepTime({ template: "x", relativeTo: "appointment", offset: "-1d", sendAt: "09:00" })).toBe("1 day before appointment, at 09:00");
  });
});

describe("parseAutomationBody and checkStepFields", () => {
  const good = { name: " Thanks ", formId: "f1", steps: [{ template: "Hi {{firstName | there}}", delay: "2d" }] };

  test("defaults, trimming, and the offset defaulting to 0d", () => {
    const r = parseAutomationBody({ ...good, steps: [...good.steps, { template: "t", relativeTo: "d" }] });
    expect(r.ok && r.value).toEqual({
      name: "Thanks",
      formId: "f1",
      isActive: true,
      steps: [{ template: "Hi {{firstName | there}}", delay: "2d" }, { template: "t", relativeTo: "d", offset: "0d" }],
      stopOnReply: true,
      stopOnStatus: [],
      restartOnResubmit: false,
    });
  });

  test("every problem at once, each naming its step and field", () => {
    const r = parseAutomationBody({ name: "", steps: [{ template: "{{x | }}", delay: "-1d" }, "step", { template: "t", delay: "1d", offset: "1d", extra: 1 }], isActive: "yes", colour: "red" });
    expect(r.ok).toBe(false);
    const fields = !r.ok ? r.errors.map((e) => e.field) : [];
    expect(fields).toEqual(
      expect.arrayContaining(["colour", "name", "formId", "isActive", "steps[0].template", "steps[0].delay", "steps[1]", "steps[2].extra", "steps[2].offset"]),
    );
    expect(parseAutomationBody(null).ok).toBe(false);
    expect(parseAutomationBody({ ...good, steps: [] }).ok).toBe(false);
    expect(parseAutomationBody({ ...good, steps: Array(21).fill(good.steps[0]) }).ok).toBe(false);
  });

  test("an update keeps what it does not give", () => {
    const current = (parseAutomationBody(good) as any).value;
    const r = parseAutomationBody({ isActive: false }, current);
    expect(r.ok && r.value).toMatchObject({ name: "Thanks", isActive: false, steps: current.steps });
  });

  test("relativeTo must be a date field of the form", () => {
    const fields = [{ name: "visit", type: "date" as const }, { name: "note", type: "text" as const }];
    const steps = [{ template: "a", relativeTo: "visit", offset: "-1d" }, { template: "b", relativeTo: "note" }, { template: "c", relativeTo: "nope" }, { template: "d", delay: "1d" }];
    const errors = checkStepFields(steps, fields);
    expect(errors.map((e) => e.field)).toEqual(["steps[1].relativeTo", "steps[2].relativeTo"]);
    expect(errors[1].message).toContain("visit");
  });
});
