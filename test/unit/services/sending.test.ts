/**
 * The one sending path's rules on their own (src/services/sending): admit()'s order, what each
 * refusal says, the quota unit it reserves, quiet hours; and that `queued()` puts entries in the
 * queue and wakes each account's phones once. The API tests of every path (messages, broadcasts,
 * automations, keyword replies, inbound, the SMSGate API, team notices) cover the whole path.
 */
import { describe, expect, test } from "bun:test";
import { admit, requeue, Sending, sendTime, type QueueEntry } from "../../../src/services/sending";
import type { QuotaRefusal } from "../../../src/services/quota";

/** A quota with `left` units: reserve takes one or refuses, as MonthlyQuota does. */
function quotaWith(left: number) {
  const calls: Array<{ accountId: string; limit: number | null }> = [];
  return {
    calls,
    reserve(accountId: string, limit: number | null): QuotaRefusal | null {
      calls.push({ accountId, limit });
      if (limit === null) return null;
      if (left <= 0) return { accountId, limit, used: limit, resetsAt: "2027-01-01T00:00:00.000Z" };
      left--;
      return null;
    },
  };
}

describe("admit(): the send rules in one order", () => {
  test("an opted-out number is refused first, whatever else would refuse, and no quota unit is taken", () => {
    const quota = quotaWith(0);
    const a = admit({
      recipient: { optedOut: true },
      consent: { field: "agree", values: {} },
      recipientLimit: { perDay: 1, sentInDay: () => 5 },
      quota: { quota, accountId: "a", limit: 10 },
    });
    expect(a).toEqual({ ok: false, reason: "opted-out" });
    expect(quota.calls).toEqual([]);
  });

  test("the replies the law asks for go to an opted-out number", () => {
    expect(admit({ recipient: { optedOut: true }, keywordReply: true }).ok).toBe(true);
  });

  test("then consent, then the per-recipient limit, then the quota", () => {
    const limitNotAsked = () => {
      throw new Error("the limit is not counted once consent refused");
    };
    expect(admit({ recipient: null, consent: { field: "agree", values: { agree: "no" } }, recipientLimit: { perDay: 1, sentInDay: limitNotAsked } })).toEqual({ ok: false, reason: "no-consent" });
    expect(admit({ consent: { field: "agree", values: {}, vouched: true }, recipientLimit: { perDay: 2, sentInDay: () => 2 } })).toEqual({ ok: false, reason: "recipient-limit" });
    const quota = quotaWith(0);
    const refused = admit({ recipientLimit: { perDay: 2, sentInDay: () => 1 }, quota: { quota, accountId: "a", limit: 3 } });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.reason).toBe("quota");
      expect(refused.quota).toMatchObject({ accountId: "a", limit: 3 });
    }
  });

  test("no limit set: nothing is counted; an unlimited quota reserves nothing", () => {
    const quota = quotaWith(0);
    const a = admit({ recipientLimit: { perDay: null, sentInDay: () => Number.POSITIVE_INFINITY }, quota: { quota, accountId: "a", limit: null } });
    expect(a).toEqual({ ok: true, at: null, reserved: false });
    expect(quota.calls).toEqual([]);
  });

  test("admitted with a limited quota: one unit reserved, for the caller to settle", () => {
    const quota = quotaWith(1);
    expect(admit({ quota: { quota, accountId: "a", limit: 5 } })).toEqual({ ok: true, at: null, reserved: true });
    expect(quota.calls).toEqual([{ accountId: "a", limit: 5 }]);
  });

  test("quiet hours move the time past them, in the zone given; outside them it stays", () => {
    const hours = { start: "21:00", end: "08:00" };
    const late = Date.parse("2026-12-07T22:30:00Z");
    const a = admit({ quietHours: { at: late, timezone: "UTC", hours } });
    expect(a.ok && a.at).toBe(Date.parse("2026-12-08T08:00:00Z"));
    expect(sendTime({ at: late, timezone: "UTC", hours })).toBe(Date.parse("2026-12-08T08:00:00Z"));
    const noon = Date.parse("2026-12-07T12:00:00Z");
    expect(sendTime({ at: noon, timezone: "UTC", hours })).toBe(noon);
    expect(sendTime({ at: late, timezone: "UTC", hours: null })).toBe(late);
  });
});

describe("after the commit", () => {
  const entry = (id: string, accountId: string): QueueEntry => ({ id, accountId, priority: "normal", scheduledFor: 0, seq: 1 });

  test("queued(): every entry into the queue, each account's phones woken once, the path's own announcement when it makes one", () => {
    const inserted: string[] = [];
    const woken: string[] = [];
    const announced: string[] = [];
    const changes = { message: (accountId: string, what: string, cause: string) => announced.push(`${accountId} ${what} ${cause}`) };
    const sending = new Sending(null as never, { insert: (e: QueueEntry) => inserted.push(e.id) }, { notify: (a: string) => woken.push(a) }, changes as never);
    sending.queued([entry("m1", "a"), entry("m2", "a"), entry("m3", "b")], "api");
    expect(inserted).toEqual(["m1", "m2", "m3"]);
    expect(woken).toEqual(["a", "b"]);
    expect(announced).toEqual(["a queued api", "b queued api"]);
    sending.queued([]);
    expect(woken).toEqual(["a", "b"]);
  });

  test("requeue(): existing rows back into the queue, nobody woken (the caller's rule)", () => {
    const inserted: string[] = [];
    requeue({ insert: (e: QueueEntry) => inserted.push(e.id) }, [entry("m1", "a"), entry("m2", "b")]);
    expect(inserted).toEqual(["m1", "m2"]);
  });
});
