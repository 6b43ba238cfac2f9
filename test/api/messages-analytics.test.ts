import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage, insertSubmission } from "../helpers/fixtures";
import { newAccount } from "../helpers/accounts";

// Fixed "now": 2026-11-20 12:00 UTC = 07:00 in New York (UTC−5 in November).
const NOW = Date.parse("2026-11-20T12:00:00.000Z");
let s: TestServer;
let formA: string;
let formB: string;
let otherKey: string;

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => NOW });
  const d = s.running.deps;
  formA = insertForm(d, s.accountId, { name: "Alpha", timezone: "America/New_York" });
  formB = insertForm(d, s.accountId, { name: "Beta" });
  const c1 = insertContact(d, s.accountId, { formId: formA, createdAt: "2026-11-19T23:30:00.000Z" });
  const c2 = insertContact(d, s.accountId, { formId: formA, createdAt: "2026-11-20T04:00:00.000Z" });
  insertContact(d, s.accountId, { formId: formA, createdAt: "2026-10-01T00:00:00.000Z" });
  const A = { formId: formA, formName: "Alpha" };
  const m1 = insertMessage(d, s.accountId, { ...A, contactId: c1, createdAt: "2026-11-19T23:30:00.000Z", status: "sent", sentAt: "2026-11-19T23:31:30.000Z" });
  const m2 = insertMessage(d, s.accountId, { ...A, contactId: c2, createdAt: "2026-11-20T00:30:00.000Z", status: "failed", failureReason: "invalid-phone" });
  const m3 = insertMessage(d, s.accountId, { ...A, createdAt: "2026-11-20T04:59:59.999Z", status: "sent", sentAt: "2026-11-20T05:00:29.999Z" });
  const m4 = insertMessage(d, s.accountId, { ...A, createdAt: "2026-11-20T05:00:00.000Z", status: "queued" });
  insertMessage(d, s.accountId, { ...A, createdAt: "2026-11-14T02:00:00.000Z", status: "cancelled" });
  insertMessage(d, s.accountId, { ...A, createdAt: "2026-11-13T23:00:00.000Z", status: "failed", failureReason: "rate-limit" });
  insertMessage(d, s.accountId, { formId: formB, formName: "Beta", createdAt: "2026-11-18T12:00:00.000Z", status: "sent", sentAt: "2026-11-18T13:00:00.000Z" });
  insertSubmission(d, s.accountId, formA, c1, m1, "2026-11-19T23:30:00.000Z");
  insertSubmission(d, s.accountId, formA, c2, m2, "2026-11-20T00:30:00.000Z");
  insertSubmission(d, s.accountId, formA, c2, m3, "2026-11-20T04:59:59.999Z", false);
  insertSubmission(d, s.accountId, formA, c2, m4, "2026-11-20T05:00:00.000Z", false);
  // Another account's messages never count.
  const other = newAccount(s, { name: "Other" });
  otherKey = other.apiKey;
  insertMessage(d, other.account.id, { createdAt: "2026-11-20T01:00:00.000Z", status: "sent" });
});
afterAll(() => s.stop());

const analytics = async (qs: string) => (await expectStatus(await s.api(`/messages/analytics${qs}`), 200)).data.analytics;
const nonZero = (daily: any[]) => daily.filter((d) => d.sent + d.failed + d.queued + d.cancelled > 0);

describe("GET /messages/analytics", () => {
  test("UTC, 7 days: figures by hand", async () => {
    const a = await analytics("?period=7d");
    expect(a.timezone).toBe("UTC");
    expect(a.totalMessages).toBe(6);
    expect(a.statusBreakdown).toEqual({ sent: 3, queued: 1, failed: 1, cancelled: 1 });
    expect(a.deliveryRate).toBe(75);
    // (90 s + 30 s + 3600 s) / 3 = 1240 s
    expect(a.averageResponseTimeSeconds).toBe(1240);
    expect(a.averageResponseTime).toBe("20m 40s");
    expect(a.dailyVolume.map((d: any) => d.date)).toEqual(["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20"]);
    expect(nonZero(a.dailyVolume)).toEqual([
      { date: "2026-11-14", sent: 0, failed: 0, queued: 0, cancelled: 1 },
      { date: "2026-11-18", sent: 1, failed: 0, queued: 0, cancelled: 0 },
      { date: "2026-11-19", sent: 1, failed: 0, queued: 0, cancelled: 0 },
      { date: "2026-11-20", sent: 1, failed: 1, queued: 1, cancelled: 0 },
    ]);
    expect(a.topForms).toEqual([
      { formId: formA, formName: "Alpha", messageCount: 5, deliveryRate: 66.7 },
      { formId: formB, formName: "Beta", messageCount: 1, deliveryRate: 100 },
    ]);
    expect(a.failureReasons).toEqual({ "invalid-phone": 1 });
  });

  test("New York, 7 days: the same messages fall on other days around midnight", async () => {
    const a = await analytics("?period=7d&timezone=America/New_York");
    expect(a.timezone).toBe("America/New_York");
    expect(a.from).toBe("2026-11-14T05:00:00.000Z");
    expect(a.totalMessages).toBe(5);
    expect(a.statusBreakdown).toEqual({ sent: 3, queued: 1, failed: 1, cancelled: 0 });
    expect(a.dailyVolume.length).toBe(7);
    expect(a.dailyVolume[0].date).toBe("2026-11-14");
    expect(nonZero(a.dailyVolume)).toEqual([
      { date: "2026-11-18", sent: 1, failed: 0, queued: 0, cancelled: 0 },
      { date: "2026-11-19", sent: 2, failed: 1, queued: 0, cancelled: 0 },
      { date: "2026-11-20", sent: 0, failed: 0, queued: 1, cancelled: 0 },
    ]);
    expect(a.topForms[0]).toEqual({ formId: formA, formName: "Alpha", messageCount: 4, deliveryRate: 66.7 });
  });

  test("1 day is today so far, in the zone", async () => {
    const utc = await analytics("?period=1d");
    expect(utc.dailyVolume).toEqual([{ date: "2026-11-20", sent: 1, failed: 1, queued: 1, cancelled: 0 }]);
    const ny = await analytics("?period=1d&timezone=america/new_york");
    expect(ny.dailyVolume).toEqual([{ date: "2026-11-20", sent: 0, failed: 0, queued: 1, cancelled: 0 }]);
    expect(ny.deliveryRate).toBe(0);
    expect(ny.averageResponseTime).toBe("n/a");
    expect(ny.averageResponseTimeSeconds).toBeNull();
  });

  test("form filter, default 30 days", async () => {
    const a = await analytics(`?formId=${formA}`);
    expect(a.period).toBe("30d");
    expect(a.dailyVolume.length).toBe(30);
    expect(a.totalMessages).toBe(6);
    expect(a.statusBreakdown).toEqual({ sent: 2, queued: 1, failed: 2, cancelled: 1 });
    expect(a.deliveryRate).toBe(50);
    expect(a.averageResponseTime).toBe("1m");
    expect(a.failureReasons).toEqual({ "invalid-phone": 1, "rate-limit": 1 });
    expect(a.topForms.map((f: any) => f.formId)).toEqual([formA]);
    const y = await analytics("?period=1y");
    expect(y.dailyVolume.length).toBe(365);
    expect(y.totalMessages).toBe(7);
  });

  test("bad period, zone or form → 400 / 404; another account sees nothing of ours", async () => {
    for (const [qs, field] of [["?period=2w", "period"], ["?timezone=Mars/Olympus", "timezone"], ["?timezone=%2B05:00", "timezone"]] as const) {
      const b = await expectStatus(await s.api(`/messages/analytics${qs}`), 400);
      expect(b.code).toBe("VALIDATION_ERROR");
      expect(b.details.field).toBe(field);
    }
    const nf = await expectStatus(await s.api(`/messages/analytics?formId=${crypto.randomUUID()}`), 404);
    expect(nf.code).toBe("FORM_NOT_FOUND");
    await expectStatus(await s.api(`/messages/analytics?formId=${formA}`, { key: otherKey }), 404);
    const o = (await expectStatus(await s.api("/messages/analytics", { key: otherKey }), 200)).data.analytics;
    expect(o.totalMessages).toBe(1);
    expect(o.topForms).toEqual([]);
  });
});

describe("GET /forms/<id>/stats", () => {
  const stats = async (id: string, qs = "") => (await expectStatus(await s.api(`/forms/${id}/stats${qs}`), 200)).data.stats;

  test("UTC: all-time totals, the period's figures, daily breakdown", async () => {
    const st = await stats(formA, "?period=7d&timezone=UTC");
    expect(st).toMatchObject({ totalSubmissions: 4, totalMessages: 6, totalContacts: 3, deliveryRate: 66.7, averageResponseTime: 60 });
    expect(st.periodStats).toMatchObject({ period: "7d", submissions: 4, messages: 5, newContacts: 2 });
    expect(st.dailyBreakdown.length).toBe(7);
    expect(st.dailyBreakdown.filter((d: any) => d.submissions + d.messages + d.contacts > 0)).toEqual([
      { date: "2026-11-14", submissions: 0, messages: 1, contacts: 0 },
      { date: "2026-11-19", submissions: 1, messages: 1, contacts: 1 },
      { date: "2026-11-20", submissions: 3, messages: 3, contacts: 1 },
    ]);
  });

  test("the form's own zone (New York) is the default", async () => {
    const st = await stats(formA, "?period=7d");
    expect(st.periodStats).toMatchObject({ period: "7d", timezone: "America/New_York", submissions: 4, messages: 4, newContacts: 2 });
    expect(st.dailyBreakdown.filter((d: any) => d.submissions + d.messages + d.contacts > 0)).toEqual([
      { date: "2026-11-19", submissions: 3, messages: 3, contacts: 2 },
      { date: "2026-11-20", submissions: 1, messages: 1, contacts: 0 },
    ]);
  });

  test("defaults, empty forms, errors", async () => {
    const b = await stats(formB);
    expect(b.periodStats.period).toBe("30d");
    expect(b.dailyBreakdown.length).toBe(30);
    expect(b).toMatchObject({ totalSubmissions: 0, totalMessages: 1, totalContacts: 0, deliveryRate: 100, averageResponseTime: 3600 });
    const empty = insertForm(s.running.deps, s.accountId);
    expect(await stats(empty, "?period=1d")).toMatchObject({ deliveryRate: 0, averageResponseTime: 0, totalMessages: 0 });
    await expectStatus(await s.api(`/forms/${formA}/stats?period=5d`), 400);
    await expectStatus(await s.api(`/forms/${formA}/stats?timezone=Nowhere/Land`), 400);
    expect((await expectStatus(await s.api(`/forms/${crypto.randomUUID()}/stats`), 404)).code).toBe("FORM_NOT_FOUND");
    await expectStatus(await s.api(`/forms/${formA}/stats`, { key: otherKey }), 404);
  });
});
