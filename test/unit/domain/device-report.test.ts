import { describe, expect, test } from "bun:test";
import { believedTime, DEVICE_CLOCK_SKEW_MS, readDeviceReport, reportIdOf } from "../../../src/domain/device-report";

const ID = "0192f7a0-0000-7000-8000-000000000001";

describe("readDeviceReport", () => {
  test("the app's item reads; the first recipient error is the reason, cut to 200 characters", () => {
    const r = readDeviceReport({ id: ID, state: "Failed", recipients: [{ phoneNumber: "+1", state: "Failed", error: null }, { error: "  E".padEnd(500, "E") }], states: { Failed: "2026-11-23T10:00:00.000+02:00" }, extra: 1 }, null);
    if (!r.ok) throw new Error(r.message);
    expect(r.report.failureReason).toHaveLength(200);
    expect(r.report.times.Failed).toEqual({ raw: "2026-11-23T10:00:00.000+02:00", at: Date.parse("2026-11-23T08:00:00.000Z") });
  });

  test("no recipients and no states: a generic reason, no times", () => {
    const r = readDeviceReport({ id: ID, state: "Failed" }, null);
    expect(r).toEqual({ ok: true, report: { id: ID, state: "Failed", times: {}, failureReason: "generic failure" } });
    expect(readDeviceReport({ id: ID, state: "Sent", recipients: null, states: null }, null).ok).toBe(true);
  });

  test("zone-less dates are read in the account's time zone", () => {
    const r = readDeviceReport({ id: ID, state: "Sent", states: { Sent: "2026-11-23T10:00:00" } }, "Europe/Paris");
    expect(r.ok && r.report.times.Sent?.at).toBe(Date.parse("2026-11-23T09:00:00.000Z"));
  });

  test.each([
    [null, "item"], [[], "item"], ["Sent", "item"],
    [{ state: "Sent" }, "id"], [{ id: 7, state: "Sent" }, "id"], [{ id: "", state: "Sent" }, "id"], [{ id: "x".repeat(101), state: "Sent" }, "id"],
    [{ id: ID, state: ["Sent"] }, "state"], [{ id: ID, state: "sent" }, "state"], [{ id: ID }, "state"],
    [{ id: ID, state: "Failed", recipients: [null] }, "recipients"], [{ id: ID, state: "Failed", recipients: {} }, "recipients"],
    [{ id: ID, state: "Failed", recipients: new Array(101).fill({}) }, "recipients"], [{ id: ID, state: "Failed", recipients: [{ error: 7 }] }, "recipients.error"],
    [{ id: ID, state: "Sent", states: [] }, "states"], [{ id: ID, state: "Sent", states: { Sent: 1795500000000 } }, "states.Sent"],
    [{ id: ID, state: "Sent", states: { Sent: "yesterday" } }, "states.Sent"], [{ id: ID, state: "Sent", states: { Delivered: "2026-02-30T10:00:00Z" } }, "states.Delivered"],
  ])("%j is refused on %s", (item, field) => {
    const r = readDeviceReport(item, null);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.field).toBe(field);
  });

  test("reportIdOf names the item in the log only when it has a string id", () => {
    expect(reportIdOf({ id: "abc" })).toBe("abc");
    expect(reportIdOf({ id: 7 })).toBeNull();
    expect(reportIdOf(null)).toBeNull();
    expect(reportIdOf({ id: "x".repeat(1_000) })).toHaveLength(100);
  });
});

describe("believedTime", () => {
  const leased = Date.parse("2026-11-23T10:00:00.000Z");
  const now = leased + 60_000;
  const at = (ms: number) => ({ raw: new Date(ms).toISOString(), at: ms });
  test("within [lease − 5 min, now + 5 min] the phone's time stands", () => {
    expect(believedTime(at(leased - DEVICE_CLOCK_SKEW_MS), leased, now)).toEqual({ at: leased - DEVICE_CLOCK_SKEW_MS });
    expect(believedTime(at(now + DEVICE_CLOCK_SKEW_MS), leased, now)).toEqual({ at: now + DEVICE_CLOCK_SKEW_MS });
  });
  test("outside it the server's time, with the raw text kept", () => {
    const early = at(leased - DEVICE_CLOCK_SKEW_MS - 1);
    expect(believedTime(early, leased, now)).toEqual({ at: now, deviceTime: early.raw });
    const late = at(now + DEVICE_CLOCK_SKEW_MS + 1);
    expect(believedTime(late, leased, now)).toEqual({ at: now, deviceTime: late.raw });
  });
  test("no date: the server's time", () => {
    expect(believedTime(undefined, leased, now)).toEqual({ at: now });
  });
});
