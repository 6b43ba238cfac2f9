import { describe, expect, test } from "bun:test";
import {
  DAY_MS, DEFAULT_SENDING_LIMITS, HOUR_MS, MINUTE_MS, WindowLog, appMessageSettings, parseLimits, partsOf, resolveLimits, textsPerHour,
} from "../../../src/domain/sending-budget";
import { backoffMs, classifyFailure, pauseFor } from "../../../src/domain/send-failure";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const limits = (o = {}) => resolveLimits(o);

describe("parts are counted as the phone splits the text", () => {
  test("GSM-7 160 in one part, 161 in two (153 each); UCS-2 70 / 71 → 2 (67 each)", () => {
    expect(partsOf("a".repeat(160))).toBe(1);
    expect(partsOf("a".repeat(161))).toBe(2);
    expect(partsOf("a".repeat(306))).toBe(2);
    expect(partsOf("a".repeat(307))).toBe(3);
    expect(partsOf("é".repeat(70))).toBe(1); // é is GSM-7
    expect(partsOf("ł".repeat(70))).toBe(1);
    expect(partsOf("ł".repeat(71))).toBe(2);
    expect(partsOf("ł".repeat(134))).toBe(2);
    expect(partsOf("ł".repeat(135))).toBe(3);
  });
});

describe("defaults survive stock Android and an ordinary SIM", () => {
  test("at most 20 parts a minute and 200 an hour; the app is told no more", () => {
    expect(DEFAULT_SENDING_LIMITS.partsPerMinute).toBeLessThanOrEqual(20);
    expect(DEFAULT_SENDING_LIMITS.partsPerHour).toBeLessThanOrEqual(200);
    const app = appMessageSettings(limits());
    expect(app).toEqual({ send_interval_min: 3, send_interval_max: 3, limit_period: "PerMinute", limit_value: 20 });
  });
  test("levels resolve key by key: account, then phone, then SIM", () => {
    const r = resolveLimits({ partsPerHour: 150 }, { partsPerMinute: 10 }, { partsPerHour: 100, spacingSeconds: { min: 1, max: 2 } });
    expect(r).toMatchObject({ partsPerMinute: 10, partsPerHour: 100, partsPerDay: 1_000, spacingSeconds: { min: 1, max: 2 } });
  });
});

describe("parseLimits names the field at fault", () => {
  const bad = (v: unknown) => {
    const r = parseLimits(v, "limits");
    if (r.ok) throw new Error("accepted " + JSON.stringify(v));
    return r.errors.map((e) => e.field);
  };
  test("positive whole numbers only", () => {
    for (const n of [0, -1, 1.5, "5", true, 2_000_000]) expect(bad({ partsPerHour: n })).toEqual(["limits.partsPerHour"]);
  });
  test("spacing min ≤ max, whole seconds, only min and max", () => {
    expect(bad({ spacingSeconds: { min: 9, max: 3 } })).toEqual(["limits.spacingSeconds.min"]);
    expect(bad({ spacingSeconds: { min: 1 } })).toEqual(["limits.spacingSeconds.max"]);
    expect(bad({ spacingSeconds: { min: 1, max: 2, avg: 1 } })).toEqual(["limits.spacingSeconds.avg"]);
    expect(bad({ spacingSeconds: 5 })).toEqual(["limits.spacingSeconds"]);
  });
  test("windows nest: a minute may not allow more than an hour", () => {
    expect(bad({ partsPerMinute: 50, partsPerHour: 40 })).toEqual(["limits.partsPerMinute"]);
    expect(bad({ newRecipientsPerDay: 50, newRecipientsPerMonth: 40 })).toEqual(["limits.newRecipientsPerDay"]);
  });
  test("unknown keys and non-objects are refused; null means the level above", () => {
    expect(bad({ partsPerWeek: 5 })).toEqual(["limits.partsPerWeek"]);
    expect(bad([1])).toEqual(["limits"]);
    expect(parseLimits(null, "limits")).toEqual({ ok: true, limits: {} });
    expect(parseLimits({ partsPerHour: null, partsPerDay: 500 }, "limits")).toEqual({ ok: true, limits: { partsPerDay: 500 } });
  });
});

describe("rolling windows", () => {
  test("the minute: 20 parts, then the text waits until the oldest leaves", () => {
    const log = new WindowLog();
    for (let i = 0; i < 20; i++) log.add({ at: T0 + i * 1_000, parts: 1, recipient: `+1555000${i}` });
    const v = log.check(limits(), T0 + 20_000, 1, "+15550009999");
    expect(v).toEqual({ ok: false, reason: "phone-budget", until: T0 + MINUTE_MS });
    expect(log.check(limits(), T0 + MINUTE_MS, 1, "+15550009999").ok).toBe(true);
  });
  test("a long text needs room for all its parts", () => {
    const log = new WindowLog();
    for (let i = 0; i < 6; i++) log.add({ at: T0 + i * 3_000, parts: 3, recipient: `+1555100${i}` });
    // 18 used: a 3-part text does not fit in 20 until the first 3-part text leaves.
    expect(log.check(limits(), T0 + 20_000, 3, "+15559")).toEqual({ ok: false, reason: "phone-budget", until: T0 + MINUTE_MS });
    expect(log.check(limits(), T0 + 20_000, 2, "+15559").ok).toBe(true);
  });
  test("the hour and the day", () => {
    const log = new WindowLog();
    // 200 parts spread over 50 minutes: the hour is full; it frees as the first leave.
    for (let i = 0; i < 200; i++) log.add({ at: T0 + i * 15_000, parts: 1, recipient: `+1555${i}` });
    const at = T0 + 200 * 15_000;
    expect(log.check(limits(), at, 1, "+1555")).toEqual({ ok: false, reason: "phone-budget", until: T0 + HOUR_MS });
    expect(log.use(at)).toMatchObject({ partsLastHour: 200, partsLastDay: 200, newRecipientsLastDay: 200 });
    const day = new WindowLog();
    for (let h = 0; h < 5; h++) for (let i = 0; i < 200; i++) day.add({ at: T0 + h * HOUR_MS + i * 10_000, parts: 1, recipient: `+1${h}55${i}` });
    const v = day.check(limits({ newRecipientsPerDay: 10_000, newRecipientsPerMonth: 10_000 }), T0 + 5 * HOUR_MS + 1, 1, "+1x");
    expect(v).toEqual({ ok: false, reason: "phone-budget", until: T0 + DAY_MS });
  });
  test("new recipients: a number already texted is not new; the cap counts distinct numbers", () => {
    const log = new WindowLog();
    const l = limits({ newRecipientsPerDay: 3 });
    for (const [i, r] of ["+1a", "+1b", "+1c", "+1a"].entries()) log.add({ at: T0 + i * 60_000, parts: 1, recipient: r });
    expect(log.check(l, T0 + 5 * 60_000, 1, "+1b").ok).toBe(true);
    expect(log.check(l, T0 + 5 * 60_000, 1, "+1d")).toEqual({ ok: false, reason: "new-recipient-limit", until: T0 + 60_000 + DAY_MS });
    // The month counts the last 30 days.
    const m = limits({ newRecipientsPerDay: 10, newRecipientsPerMonth: 10 });
    const month = new WindowLog();
    for (let d = 0; d < 10; d++) month.add({ at: T0 + d * DAY_MS, parts: 1, recipient: `+1m${d}` });
    expect(month.check(m, T0 + 10 * DAY_MS, 1, "+1new")).toEqual({ ok: false, reason: "new-recipient-limit", until: T0 + 30 * DAY_MS });
  });
  test("prune drops only what no window sees", () => {
    const log = new WindowLog();
    log.add({ at: T0, parts: 1, recipient: "+1" });
    log.add({ at: T0 + 31 * DAY_MS, parts: 1, recipient: "+2" });
    log.prune(T0 + 31 * DAY_MS);
    expect(log.size).toBe(1);
    expect(log.texted("+1", T0 + 31 * DAY_MS, 60 * DAY_MS)).toBe(false);
  });
  test("out-of-order adds (boot, equal times) are kept in time order", () => {
    const log = new WindowLog();
    log.add({ at: T0 + 2_000, parts: 1, recipient: "+2" });
    log.add({ at: T0, parts: 1, recipient: "+1" });
    expect(log.parts(T0 + 1_000, MINUTE_MS)).toBe(1);
    expect(log.last()?.recipient).toBe("+2");
  });
  test("the long-run rate is the tightest window", () => {
    expect(textsPerHour(limits())).toBeCloseTo(1_000 / 24, 5);
    expect(textsPerHour(limits({ partsPerDay: 100_000 }))).toBe(200);
    expect(textsPerHour(limits({ partsPerDay: 100_000, partsPerHour: 10_000, partsPerMinute: 10_000, spacingSeconds: { min: 10, max: 10 } }))).toBe(360);
  });
});

describe("the app's failure words", () => {
  test("as the SMSGate app words them, and bare", () => {
    expect(classifyFailure("Send result: RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)")).toBe("android-limit");
    expect(classifyFailure("RESULT_ERROR_LIMIT_EXCEEDED")).toBe("android-limit");
    expect(classifyFailure("Send result: RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)")).toBe("no-service");
    expect(classifyFailure("Send result: RESULT_ERROR_RADIO_OFF (Failed because radio was explicitly turned off)")).toBe("radio-off");
    expect(classifyFailure("Send result: RESULT_ERROR_GENERIC_FAILURE (Generic failure cause)")).toBe("generic");
    expect(classifyFailure("Send result: RESULT_ERROR_NULL_PDU (Failed because no PDU provided)")).toBe("text");
    expect(classifyFailure("invalid-phone")).toBe("text");
    expect(classifyFailure(null)).toBe("text");
  });
  test("pauses: Android's limit stops the phone for its minute; no service backs off; generic after 3 in a row", () => {
    expect(pauseFor("android-limit", 1)).toEqual({ ms: 60_000, phone: true, reason: "android-limit" });
    expect(pauseFor("no-service", 1)).toEqual({ ms: 60_000, phone: false, reason: "no-service" });
    expect(pauseFor("no-service", 3)!.ms).toBe(240_000);
    expect(backoffMs(20)).toBe(30 * 60_000);
    expect(pauseFor("generic", 2)).toBeNull();
    expect(pauseFor("generic", 3)).toEqual({ ms: 60_000, phone: false, reason: "repeated-failures" });
    expect(pauseFor("text", 9)).toBeNull();
  });
});
