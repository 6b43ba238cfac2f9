import { describe, expect, test } from "bun:test";
import { failureReason } from "../../../web/failure-reasons";
import { TRANSIENT_FAILURE_REASONS } from "../../../src/domain/retry-policy";

describe("failure reasons in plain words", () => {
  test("Android's codes, in any of the spellings the phone reports, become sentences; the code is kept", () => {
    for (const code of ["RESULT_ERROR_NO_SERVICE", "NO_SERVICE", "no service", "No-Service"]) expect(failureReason(code)).toEqual({ sentence: "The phone had no signal.", code });
    expect(failureReason("RESULT_ERROR_RADIO_OFF").sentence).toContain("network was off");
    expect(failureReason("RESULT_ERROR_GENERIC_FAILURE").sentence).toContain("refused");
    expect(failureReason("RESULT_ERROR_NULL_PDU").sentence).toContain("could not put the text together");
    expect(failureReason("RESULT_ERROR_LIMIT_EXCEEDED").sentence).toContain("limit");
  });

  test("Textwire's own reasons, and every reason the retry policy knows, read as sentences", () => {
    for (const code of ["no-report", "expired", "opted-out", "invalid-phone", "no-consent", ...TRANSIENT_FAILURE_REASONS]) {
      const r = failureReason(code);
      expect(r.sentence).not.toContain(code);
      expect(r.sentence).toMatch(/^[A-Z].*\.$/);
    }
  });

  test("an unknown reason is quoted as the phone wrote it; none at all says so", () => {
    expect(failureReason("Carrier said 42")).toEqual({ sentence: "The phone reported: “Carrier said 42”.", code: "Carrier said 42" });
    expect(failureReason(null)).toEqual({ sentence: "No reason was given.", code: null });
    expect(failureReason("  ").code).toBeNull();
  });
});
