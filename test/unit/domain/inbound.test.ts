import { describe, expect, test } from "bun:test";
import {
  normalizeSender, parseReceivedAt, validateInbound, INBOUND_BODY_MAX, isResentHistory, EXPORT_OPEN_MS, HISTORY_LIVE_MARGIN_MS,
} from "../../../src/domain/inbound";

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

describe("isResentHistory: a text its phone sends again after an inbox export", () => {
  const DAY = 86_400_000;
  const asked = { since: NOW - 30 * DAY, until: NOW, requestedAt: NOW };
  test("a text from the export's window, received well before the request, is history", () => {
    expect(isResentHistory(NOW - 3 * DAY, [asked], NOW + 1_000)).toBe(true);
    expect(isResentHistory(asked.since, [asked], NOW)).toBe(true);
    expect(isResentHistory(NOW - HISTORY_LIVE_MARGIN_MS - 1, [asked], NOW)).toBe(true);
  });
  test("no export asked: never history, however old the text (a phone that was offline)", () => {
    expect(isResentHistory(NOW - 300 * DAY, [], NOW)).toBe(false);
  });
  test("a text received after the request, or just before it (its live report may be on its way), is new", () => {
    expect(isResentHistory(NOW + 5_000, [{ ...asked, until: NOW + DAY }], NOW + 10_000)).toBe(false);
    expect(isResentHistory(NOW - HISTORY_LIVE_MARGIN_MS, [asked], NOW)).toBe(false);
    expect(isResentHistory(NOW - 60_000, [asked], NOW)).toBe(false);
  });
  test("outside the window asked for: new", () => {
    expect(isResentHistory(asked.since - 1, [asked], NOW)).toBe(false);
    const earlier = { since: NOW - 10 * DAY, until: NOW - 5 * DAY, requestedAt: NOW };
    expect(isResentHistory(NOW - 3 * DAY, [earlier], NOW)).toBe(false);
    expect(isResentHistory(NOW - 6 * DAY, [earlier], NOW)).toBe(true);
  });
  test("an export asked more than EXPORT_OPEN_MS ago no longer counts", () => {
    expect(isResentHistory(NOW - 3 * DAY, [asked], NOW + EXPORT_OPEN_MS)).toBe(true);
    expect(isResentHistory(NOW - 3 * DAY, [asked], NOW + EXPORT_OPEN_MS + 1)).toBe(false);
  });
  test("any of several exports may cover it", () => {
    const old = { since: NOW - 90 * DAY, until: NOW - 60 * DAY, requestedAt: NOW - 3 * EXPORT_OPEN_MS };
    expect(isResentHistory(NOW - 70 * DAY, [old, asked], NOW)).toBe(false);
    expect(isResentHistory(NOW - 20 * DAY, [old, asked], NOW)).toBe(true);
  });
});
