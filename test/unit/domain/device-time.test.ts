import { describe, expect, test } from "bun:test";
import { normalizeDeviceTime, parseDeviceTime } from "../../../src/domain/device-time";

describe("parseDeviceTime", () => {
  test("unpadded date and time parts (MacroDroid variables)", () => {
    expect(parseDeviceTime("2026-11-5T9:3:7", null)).toBe(Date.parse("2026-11-05T09:03:07Z"));
    expect(parseDeviceTime("2026-1-05 14:30", null)).toBe(Date.parse("2026-01-05T14:30:00Z"));
    expect(parseDeviceTime("2026-11-05T09:03:07.5+1:00", null)).toBe(Date.parse("2026-11-05T08:03:07.500Z"));
  });

  test("a zone-less time is read in the account's zone, across DST", () => {
    expect(parseDeviceTime("2026-11-23T10:00:00", "Europe/Berlin")).toBe(Date.parse("2026-11-23T09:00:00Z"));
    expect(parseDeviceTime("2026-7-1T10:00", "Europe/Berlin")).toBe(Date.parse("2026-07-01T08:00:00Z"));
    expect(parseDeviceTime("2026-11-23T10:00:00", "America/New_York")).toBe(Date.parse("2026-11-23T15:00:00Z"));
    expect(parseDeviceTime("2026-11-23T10:00:00Z", "America/New_York")).toBe(Date.parse("2026-11-23T10:00:00Z"));
  });

  test("impossible values are refused", () => {
    for (const v of ["2026-13-01T10:00", "2026-02-30T10:00", "2026-11-23T24:00", "2026-11-23", "yesterday", "2026-11-23T10:60"]) {
      expect(parseDeviceTime(v, null)).toBeNull();
    }
    expect(normalizeDeviceTime("nonsense", null)).toBe("nonsense");
    expect(normalizeDeviceTime(42, null)).toBe(42);
  });
});
