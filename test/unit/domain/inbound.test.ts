import { describe, expect, test } from "bun:test";
import { normalizeSender, parseReceivedAt, validateInbound, INBOUND_BODY_MAX } from "../../../src/domain/inbound";

const NOW = Date.parse("2026-11-23T09:00:00.000Z");

describe("normalizeSender", () => {
  test("writes any valid number as E.164, whatever its punctuation", () => {
    expect(normalizeSender("+1 (415) 555-2671")).toEqual({ ok: true, e164: "+14155552671" });
    expect(normalizeSender("4155552671")).toEqual({ ok: true, e164: "+14155552671" });
    expect(normalizeSender("0044 7911 123456")).toEqual({ ok: true, e164: "+447911123456" });
  });
  test("a landline that texts is still a sender", () => {
    expect(normalizeSender("+442071838750")).toEqual({ ok: true, e164: "+442071838750" });
  });
  test("short codes, named senders and junk are refused", () => {
    for (const v of ["12345", "VERIFY", "", "   ", null, 42, "+1 415 555 2671 ext 3", "1".repeat(41)]) {
      expect(normalizeSender(v).ok).toBe(false);
    }
  });
});

describe("parseReceivedAt", () => {
  test("epoch ms, epoch seconds (Tasker %TIMES), numeric strings and ISO", () => {
    expect(parseReceivedAt(NOW)).toBe(NOW);
    expect(parseReceivedAt(NOW / 1000)).toBe(NOW);
    expect(parseReceivedAt(String(NOW))).toBe(NOW);
    expect(parseReceivedAt("2026-11-23T09:00:00Z")).toBe(NOW);
    expect(parseReceivedAt("2026-11-23T10:00:00+01:00")).toBe(NOW);
  });
  test("nonsense is null", () => {
    for (const v of [0, -5, NaN, Infinity, "yesterday", "2026-13-01T00:00:00Z", {}, true]) expect(parseReceivedAt(v)).toBeNull();
  });
});

describe("validateInbound", () => {
  test("a good report", () => {
    const r = validateInbound({ from: "+14155552671", body: "Yes please", receivedAt: NOW - 5_000, deviceId: "pixel", externalId: 77 }, NOW);
    expect(r).toEqual({ ok: true, value: { from: "+14155552671", body: "Yes please", receivedAt: NOW - 5_000, deviceId: "pixel", externalId: "77" } });
  });
  test("receivedAt defaults to now and is never later than now", () => {
    const a = validateInbound({ from: "+14155552671", body: "" }, NOW);
    expect(a.ok && a.value.receivedAt).toBe(NOW);
    const b = validateInbound({ from: "+14155552671", body: "x", receivedAt: NOW + 3_600_000 }, NOW);
    expect(b.ok && b.value.receivedAt).toBe(NOW);
  });
  test("every bad field is reported by name", () => {
    const r = validateInbound({ from: "VERIFY", body: 5, receivedAt: "soon", deviceId: {}, externalId: "x".repeat(201) }, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field).sort()).toEqual(["body", "deviceId", "externalId", "from", "receivedAt"]);
  });
  test("body length is bounded", () => {
    expect(validateInbound({ from: "+14155552671", body: "x".repeat(INBOUND_BODY_MAX) }, NOW).ok).toBe(true);
    expect(validateInbound({ from: "+14155552671", body: "x".repeat(INBOUND_BODY_MAX + 1) }, NOW).ok).toBe(false);
  });
});
