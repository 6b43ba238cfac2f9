import { describe, expect, test } from "bun:test";
import { IntakeOverlay, type PendingEntry } from "../../../src/services/intake/overlay";
import { admit } from "../../../src/services/sending";

/** The webhook's question to the one sending path (src/services/submissions/write.ts). */
function submissionSuppression(optedOut: boolean, field: string | null, values: Record<string, unknown>) {
  const a = admit({ recipient: { optedOut }, consent: { field, values } });
  return a.ok ? null : a.reason;
}

const entry = (seq: number, over: Partial<PendingEntry> = {}): PendingEntry => ({
  seq,
  accountId: "a",
  phone: "+14155550100",
  formId: "f",
  contactId: "c",
  messageId: `m${seq}`,
  createdAt: 1_000 * seq,
  scheduledFor: 10_000 * seq,
  ...over,
});

describe("the intake overlay (acknowledged, unapplied submissions the rules read)", () => {
  test("entries past the applied mark count by phone, by form's schedule and for the quota; applied ones leave", () => {
    const o = new IntakeOverlay();
    o.add(entry(1));
    o.add(entry(2, { phone: "+14155550101" }));
    o.add(entry(3, { messageId: null }));
    expect(o.forPhone("a", "+14155550100", 0).map((e) => e.seq)).toEqual([1, 3]);
    // Read with the mark of the same snapshot: an entry already applied is not counted twice.
    expect(o.forPhone("a", "+14155550100", 1).map((e) => e.seq)).toEqual([3]);
    expect(o.forPhone("b", "+14155550100", 0)).toEqual([]);
    expect(o.countScheduled("f", 0, 25_000, 0)).toBe(2);
    expect(o.countScheduled("f", 0, 25_000, 1)).toBe(1);
    expect(o.pendingMessages("a", 0, 0)).toBe(2);
    expect(o.pendingMessages("a", 1_500, 0)).toBe(1);
    expect(o.size()).toBe(3);
    o.prune(2);
    expect(o.size()).toBe(1);
    expect(o.forPhone("a", "+14155550100", 0).map((e) => e.seq)).toEqual([3]);
    expect(o.countScheduled("f", 0, Infinity, 0)).toBe(0);
  });

  test("a job whose commit failed takes its entry back", () => {
    const o = new IntakeOverlay();
    o.add(entry(1));
    o.add(entry(2));
    o.remove(2);
    expect(o.forPhone("a", "+14155550100", 0).map((e) => e.seq)).toEqual([1]);
    expect(o.countScheduled("f", 0, Infinity, 0)).toBe(1);
    o.remove(99);
    expect(o.size()).toBe(1);
  });
});

describe("why a valid submission is saved but texted nothing", () => {
  test("an opted-out number wins over consent; a missing or unticked consent box suppresses", () => {
    expect(submissionSuppression(true, "consent", { consent: "yes" })).toBe("opted-out");
    expect(submissionSuppression(false, null, {})).toBeNull();
    expect(submissionSuppression(false, "consent", {})).toBe("no-consent");
    expect(submissionSuppression(false, "consent", { consent: "" })).toBe("no-consent");
    expect(submissionSuppression(false, "consent", { consent: "on" })).toBeNull();
    // Only the body's own property counts, not one inherited from Object.prototype.
    expect(submissionSuppression(false, "toString", {})).toBe("no-consent");
  });
});
