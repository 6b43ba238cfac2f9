import { describe, expect, test } from "bun:test";
import { messageTimeline, type TimelineInput } from "../../../src/domain/message-timeline";

const base: TimelineInput = {
  status: "queued",
  createdAt: "2026-11-20T12:00:00.000Z",
  scheduledFor: "2026-11-20T12:00:00.000Z",
  sentAt: null,
  updatedAt: "2026-11-20T12:00:00.000Z",
  failureReason: null,
  leaseDeviceId: null,
  leaseExpiresAt: null,
  metadata: {},
};

describe("messageTimeline", () => {
  test("a schedule after creation is a step; one moved by a retry is not (the original is gone)", () => {
    const later = { ...base, scheduledFor: "2026-11-20T13:00:00.000Z" };
    expect(messageTimeline(later).map((e) => e.kind)).toEqual(["created", "scheduled"]);
    const retried = { ...later, metadata: { failures: [{ at: "2026-11-20T12:01:00.000Z", reason: "x", retryAt: "2026-11-20T13:00:00.000Z" }] } };
    expect(messageTimeline(retried).map((e) => e.kind)).toEqual(["created", "attempt_failed"]);
  });

  test("steps are in time order, ties kept in the order they happen", () => {
    const m: TimelineInput = {
      ...base,
      status: "cancelled",
      updatedAt: "2026-11-20T12:05:00.000Z",
      metadata: {
        leases: [
          { at: "2026-11-20T12:03:00.000Z", deviceId: "b", expiresAt: "2026-11-20T12:04:00.000Z" },
          { at: "2026-11-20T12:00:00.000Z", deviceId: "a", expiresAt: "2026-11-20T12:02:00.000Z", expired: true },
        ],
      },
    };
    expect(messageTimeline(m, (id) => (id === "a" ? "Shop phone" : null))).toEqual([
      { at: "2026-11-20T12:00:00.000Z", kind: "created" },
      { at: "2026-11-20T12:00:00.000Z", kind: "leased", deviceId: "a", deviceName: "Shop phone", expiresAt: "2026-11-20T12:02:00.000Z" },
      { at: "2026-11-20T12:02:00.000Z", kind: "lease_expired", deviceId: "a", deviceName: "Shop phone" },
      { at: "2026-11-20T12:03:00.000Z", kind: "leased", deviceId: "b", deviceName: null, expiresAt: "2026-11-20T12:04:00.000Z" },
      { at: "2026-11-20T12:05:00.000Z", kind: "cancelled", reason: null },
    ]);
  });

  test("entries that are not what the server writes are left out, never thrown on", () => {
    const m = { ...base, metadata: { leases: [null, 3, { at: "yesterday" }, { at: "2026-11-20T12:01:00Z", deviceId: 7 }], failures: "no" } };
    expect(messageTimeline(m as TimelineInput)).toEqual([
      { at: "2026-11-20T12:00:00.000Z", kind: "created" },
      { at: "2026-11-20T12:01:00.000Z", kind: "leased", deviceId: null, deviceName: null },
    ]);
  });
});
