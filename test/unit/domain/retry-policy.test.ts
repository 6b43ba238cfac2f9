import { describe, expect, test } from "bun:test";
import { decideRetry, isTransientFailure, maxAttemptsError, retryBackoffMs, RETRY_BACKOFF_MS } from "../../../src/domain/retry-policy";

describe("transient failure reasons", () => {
  test.each(["no-report", "generic failure", "Generic Failure", "GENERIC_FAILURE", "RESULT_ERROR_GENERIC_FAILURE", " no service ", "NO_SERVICE", "radio off", "Radio-Off"])(
    "%p is transient",
    (r) => expect(isTransientFailure(r)).toBe(true),
  );
  test.each(["invalid number", "opted-out", "generic failure 2", "network-error", "", "no", null, undefined])("%p is permanent", (r) =>
    expect(isTransientFailure(r as string)).toBe(false),
  );
});

describe("decideRetry", () => {
  const now = Date.parse("2026-11-20T12:00:00Z");
  test("backoff is 1 min, 5 min, then 30 min for every later attempt", () => {
    expect(RETRY_BACKOFF_MS).toEqual([60_000, 300_000, 1_800_000]);
    expect([0, 1, 2, 3, 9].map(retryBackoffMs)).toEqual([60_000, 300_000, 1_800_000, 1_800_000, 1_800_000]);
  });
  test("a transient failure with attempts left is retried after the backoff", () => {
    expect(decideRetry({ retryCount: 0, maxAttempts: 2, reason: "no service", now })).toEqual({ retry: true, retryCount: 1, scheduledFor: now + 60_000 });
    expect(decideRetry({ retryCount: 1, maxAttempts: 4, reason: "no service", now })).toEqual({ retry: true, retryCount: 2, scheduledFor: now + 300_000 });
    expect(decideRetry({ retryCount: 2, maxAttempts: 4, reason: "radio off", now })).toEqual({ retry: true, retryCount: 3, scheduledFor: now + 1_800_000 });
  });
  test("the last attempt's failure is final", () => {
    expect(decideRetry({ retryCount: 1, maxAttempts: 2, reason: "no service", now })).toEqual({ retry: false });
    expect(decideRetry({ retryCount: 0, maxAttempts: 1, reason: "no service", now })).toEqual({ retry: false });
    expect(decideRetry({ retryCount: 5, maxAttempts: 2, reason: "no service", now })).toEqual({ retry: false });
  });
  test("a permanent reason is final at once", () => {
    expect(decideRetry({ retryCount: 0, maxAttempts: 10, reason: "invalid number", now })).toEqual({ retry: false });
  });
});

test("maxAttempts values", () => {
  expect(maxAttemptsError(undefined)).toBeNull();
  for (const ok of [1, 2, 10]) expect(maxAttemptsError(ok)).toBeNull();
  for (const bad of [0, 11, 1.5, "2", null, -1]) expect(maxAttemptsError(bad)).toContain("1 to 10");
});
