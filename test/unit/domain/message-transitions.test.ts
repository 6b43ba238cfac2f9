import { describe, expect, test } from "bun:test";
import {
  MESSAGE_STATUSES,
  decideTransition,
  isAllowedTransition,
  parseIsoTimestamp,
  type MessageState,
  type MessageStatus,
  type StatusRequest,
} from "../../../src/domain/message-transitions";

const SENT_AT = "2026-11-21T15:11:30.664Z";

/** A realistic stored state for each status. */
function stateOf(status: MessageStatus): MessageState {
  switch (status) {
    case "queued":
      return { status, sentAt: null, failureReason: null, retryCount: 0 };
    case "sent":
      return { status, sentAt: SENT_AT, failureReason: null, retryCount: 0 };
    case "failed":
      return { status, sentAt: null, failureReason: "network-error", retryCount: 1 };
    case "cancelled":
      return { status, sentAt: null, failureReason: null, retryCount: 0 };
  }
}

/** A well-formed request for each target status (same values as stateOf for the repeats). */
function requestFor(status: MessageStatus): StatusRequest {
  switch (status) {
    case "sent":
      return { status, sentAt: SENT_AT };
    case "failed":
      return { status, failureReason: "network-error" };
    default:
      return { status };
  }
}

// The full 4×4 matrix with well-formed requests.
const MATRIX: Record<MessageStatus, Record<MessageStatus, "noop" | "apply" | "invalid">> = {
  queued: { queued: "noop", sent: "apply", failed: "apply", cancelled: "apply" },
  sent: { queued: "invalid", sent: "noop", failed: "invalid", cancelled: "invalid" },
  failed: { queued: "apply", sent: "invalid", failed: "noop", cancelled: "invalid" },
  cancelled: { queued: "invalid", sent: "invalid", failed: "invalid", cancelled: "noop" },
};

describe("4×4 matrix", () => {
  for (const from of MESSAGE_STATUSES) {
    for (const to of MESSAGE_STATUSES) {
      const expected = MATRIX[from][to];
      test(`${from} → ${to}: ${expected}`, () => {
        const r = decideTransition(stateOf(from), requestFor(to));
        expect(r.kind).toBe(expected);
        if (r.kind === "invalid") {
          expect(r.currentStatus).toBe(from);
          expect(r.requestedStatus).toBe(to);
          expect(r.message).toBe(`Cannot change status from ${from} to ${to}`);
        }
        expect(isAllowedTransition(from, to)).toBe(expected === "apply");
      });
    }
  }
});

describe("applied transitions", () => {
  test("queued → sent records the normalised sentAt and signals the contact update", () => {
    const r = decideTransition(stateOf("queued"), { status: "sent", sentAt: "2026-11-21T10:11:30-05:00" });
    expect(r).toEqual({
      kind: "apply",
      next: { status: "sent", sentAt: "2026-11-21T15:11:30.000Z", failureReason: null, retryCount: 0 },
      becameSent: true,
      leftQueue: true,
      enteredQueue: false,
    });
  });

  test("queued → failed records the trimmed reason", () => {
    const r = decideTransition(stateOf("queued"), { status: "failed", failureReason: "  invalid-phone " });
    expect(r).toEqual({
      kind: "apply",
      next: { status: "failed", sentAt: null, failureReason: "invalid-phone", retryCount: 0 },
      becameSent: false,
      leftQueue: true,
      enteredQueue: false,
    });
  });

  test("queued → cancelled", () => {
    const r = decideTransition({ status: "queued", sentAt: null, failureReason: null, retryCount: 2 }, { status: "cancelled" });
    expect(r).toEqual({
      kind: "apply",
      next: { status: "cancelled", sentAt: null, failureReason: null, retryCount: 2 },
      becameSent: false,
      leftQueue: true,
      enteredQueue: false,
    });
  });

  test("failed → queued increments retryCount and clears failureReason", () => {
    const r = decideTransition(stateOf("failed"), { status: "queued" });
    expect(r).toEqual({
      kind: "apply",
      next: { status: "queued", sentAt: null, failureReason: null, retryCount: 2 },
      becameSent: false,
      leftQueue: false,
      enteredQueue: true,
    });
  });

  test("fields the target status does not use are ignored", () => {
    const c = decideTransition(stateOf("queued"), { status: "cancelled", failureReason: "x", sentAt: "garbage" });
    expect(c.kind).toBe("apply");
    const f = decideTransition(stateOf("queued"), { status: "failed", failureReason: "rate-limit", sentAt: "garbage" });
    expect(f.kind === "apply" && f.next.sentAt).toBe(null);
    const s = decideTransition(stateOf("queued"), { status: "sent", sentAt: SENT_AT, failureReason: "x" });
    expect(s.kind === "apply" && s.next.failureReason).toBe(null);
    const q = decideTransition(stateOf("failed"), { status: "queued", sentAt: SENT_AT });
    expect(q.kind === "apply" && q.next.sentAt).toBe(null);
  });
});

describe("idempotent repeats", () => {
  test("sent → sent with the same instant written differently is a noop", () => {
    for (const sentAt of [SENT_AT, "2026-11-21T10:11:30.664-05:00", "2026-11-21T15:11:30.6640Z", "2026-11-22T00:11:30.664+09:00"]) {
      expect(decideTransition(stateOf("sent"), { status: "sent", sentAt })).toEqual({ kind: "noop" });
    }
  });

  test("sent → sent with a different sentAt is invalid", () => {
    const r = decideTransition(stateOf("sent"), { status: "sent", sentAt: "2026-11-21T15:11:31.000Z" });
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") {
      expect(r.currentStatus).toBe("sent");
      expect(r.requestedStatus).toBe("sent");
      expect(r.message).toContain("already sent");
    }
  });

  test("failed → failed: same reason noop (trim-insensitive), different reason invalid", () => {
    expect(decideTransition(stateOf("failed"), { status: "failed", failureReason: " network-error" })).toEqual({ kind: "noop" });
    const r = decideTransition(stateOf("failed"), { status: "failed", failureReason: "rate-limit" });
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") expect(r.message).toContain("already failed");
  });

  test("queued → queued and cancelled → cancelled ignore extra fields", () => {
    expect(decideTransition(stateOf("queued"), { status: "queued", failureReason: "x" })).toEqual({ kind: "noop" });
    expect(decideTransition(stateOf("cancelled"), { status: "cancelled", sentAt: SENT_AT })).toEqual({ kind: "noop" });
  });
});

describe("validation vs legality (order of checks)", () => {
  test("unknown status is a validation error on field status", () => {
    const r = decideTransition(stateOf("queued"), { status: "delivered" as MessageStatus });
    expect(r).toMatchObject({ kind: "validation", field: "status", provided: "delivered" });
    expect(decideTransition(stateOf("sent"), {} as StatusRequest)).toMatchObject({ kind: "validation", field: "status", provided: null });
  });

  test("queued → sent without / with a bad sentAt: validation", () => {
    expect(decideTransition(stateOf("queued"), { status: "sent" })).toMatchObject({
      kind: "validation",
      field: "sentAt",
      message: "sentAt is required when status is sent",
    });
    expect(decideTransition(stateOf("queued"), { status: "sent", sentAt: "" })).toMatchObject({ kind: "validation", field: "sentAt" });
    expect(decideTransition(stateOf("queued"), { status: "sent", sentAt: "yesterday" })).toMatchObject({
      kind: "validation",
      field: "sentAt",
      message: "sentAt must be a valid ISO 8601 timestamp",
      provided: "yesterday",
    });
    expect(decideTransition(stateOf("queued"), { status: "sent", sentAt: 1763737890664 as unknown as string })).toMatchObject({
      kind: "validation",
      field: "sentAt",
    });
  });

  test("queued → failed without / with a bad failureReason: validation", () => {
    expect(decideTransition(stateOf("queued"), { status: "failed" })).toMatchObject({ kind: "validation", field: "failureReason" });
    expect(decideTransition(stateOf("queued"), { status: "failed", failureReason: "   " })).toMatchObject({
      kind: "validation",
      field: "failureReason",
    });
    expect(decideTransition(stateOf("queued"), { status: "failed", failureReason: 42 as unknown as string })).toMatchObject({
      kind: "validation",
      field: "failureReason",
    });
    expect(decideTransition(stateOf("queued"), { status: "failed", failureReason: "x".repeat(201) })).toMatchObject({
      kind: "validation",
      field: "failureReason",
      message: "failureReason must be at most 200 characters",
    });
    expect(decideTransition(stateOf("queued"), { status: "failed", failureReason: "x".repeat(200) }).kind).toBe("apply");
  });

  test("a move that is not allowed is invalid even when its fields are missing or bad", () => {
    expect(decideTransition(stateOf("failed"), { status: "sent" }).kind).toBe("invalid");
    expect(decideTransition(stateOf("cancelled"), { status: "sent", sentAt: "garbage" }).kind).toBe("invalid");
    expect(decideTransition(stateOf("sent"), { status: "failed" }).kind).toBe("invalid");
    expect(decideTransition(stateOf("cancelled"), { status: "failed", failureReason: "" }).kind).toBe("invalid");
  });

  test("the repeats sent → sent / failed → failed still require their field", () => {
    expect(decideTransition(stateOf("sent"), { status: "sent" })).toMatchObject({ kind: "validation", field: "sentAt" });
    expect(decideTransition(stateOf("failed"), { status: "failed" })).toMatchObject({ kind: "validation", field: "failureReason" });
  });

  test("sent → queued: the spec's example", () => {
    expect(decideTransition(stateOf("sent"), { status: "queued" })).toEqual({
      kind: "invalid",
      currentStatus: "sent",
      requestedStatus: "queued",
      message: "Cannot change status from sent to queued",
    });
  });
});

describe("parseIsoTimestamp", () => {
  test("accepted forms", () => {
    const base = Date.UTC(2026, 10, 21, 15, 11, 30, 664);
    expect(parseIsoTimestamp("2026-11-21T15:11:30.664Z")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T15:11:30.664+00:00")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T10:11:30.664-05:00")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T10:11:30.664-0500")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T20:41:30.664+05:30")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T15:11:30.664123Z")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21 15:11:30.664z")).toBe(base);
    expect(parseIsoTimestamp("2026-11-21T15:11:30.664")).toBe(base); // no zone → UTC
    expect(parseIsoTimestamp("2026-11-21T15:11Z")).toBe(Date.UTC(2026, 10, 21, 15, 11));
    expect(parseIsoTimestamp("2026-11-21T15:11:30+09")).toBe(Date.UTC(2026, 10, 21, 6, 11, 30));
    expect(parseIsoTimestamp("2028-02-29T00:00:00Z")).toBe(Date.UTC(2028, 1, 29));
  });

  test("refused forms", () => {
    for (const v of [
      "",
      "2026-11-21",
      "2026-02-29T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-11-31T00:00:00Z",
      "2026-11-21T24:00:00Z",
      "2026-11-21T15:60:00Z",
      "2026-11-21T15:11:60Z",
      "2026-11-21T15:11:30+25:00",
      "0099-01-01T00:00:00Z",
      "Sat, 21 Nov 2026 15:11:30 GMT",
      "1763737890664",
      "2026-11-21T15:11:30.664ZZ",
    ]) {
      expect(parseIsoTimestamp(v)).toBeNull();
    }
    expect(parseIsoTimestamp(null)).toBeNull();
    expect(parseIsoTimestamp(1763737890664)).toBeNull();
  });
});
