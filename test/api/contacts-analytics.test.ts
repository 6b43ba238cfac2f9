import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm } from "../helpers/contact-fixtures";
import { newAccount } from "../helpers/accounts";

const NOW = Date.parse("2026-03-15T12:00:00.000Z");
let s: TestServer;
let formA: string;
let formB: string;

const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => NOW });
  // arrange: contacts made on set days weeks ago, with reply times (the API stamps contacts with
  // the clock of the request that makes them, and a reply time only comes from a phone)
  const d = s.running.deps.sqlite;
  formA = insertForm(d, s.accountId, "Form A");
  formB = insertForm(d, s.accountId, "Form B");
  const t1 = "2026-03-10T09:00:00.000Z";
  insertContact(d, s.accountId, { formId: formA, status: "converted", createdAt: t1, lastResponseAt: plus(t1, 3600) });
  insertContact(d, s.accountId, { formId: formA, status: "converted", createdAt: "2026-03-11T09:00:00.000Z" });
  insertContact(d, s.accountId, { formId: formA, status: "new", createdAt: "2026-03-12T09:00:00.000Z" });
  const t4 = "2026-03-15T03:00:00.000Z";
  insertContact(d, s.accountId, { formId: formA, status: "responded", createdAt: t4, lastResponseAt: plus(t4, 60) });
  insertContact(d, s.accountId, { formId: formB, status: "converted", createdAt: "2026-03-13T09:00:00.000Z" });
  const t6 = "2026-03-14T09:00:00.000Z";
  insertContact(d, s.accountId, { formId: formB, status: "contacted", createdAt: t6, lastResponseAt: plus(t6, 120) });
  insertContact(d, s.accountId, { status: "new", createdAt: "2026-03-09T00:00:00.000Z" });
  // Outside 7d, inside 30d.
  insertContact(d, s.accountId, { formId: formA, status: "converted", createdAt: "2026-03-01T00:00:00.000Z" });
  // Just before the 7d window (window starts 2026-03-09T00:00Z).
  insertContact(d, s.accountId, { status: "new", createdAt: "2026-03-08T23:59:59.999Z" });
  // Another account.
  const other = newAccount(s, { name: "O" }).account.id;
  insertContact(d, other, { status: "converted", createdAt: "2026-03-14T00:00:00.000Z" });
});
afterAll(() => s.stop());

const get = async (q: string) => {
  const { data } = await expectStatus(await s.api(`/contacts/analytics${q}`), 200);
  // The figures stand directly in data (as the spec lists them) and again under data.analytics.
  const { analytics, ...flat } = data;
  expect(flat).toEqual(analytics);
  return analytics;
};

describe("GET /contacts/analytics", () => {
  test("7d, UTC: figures computed by hand", async () => {
    const a = await get("?period=7d");
    expect(a.totalContacts).toBe(7);
    expect(a.statusDistribution).toEqual({ new: 2, contacted: 1, responded: 1, converted: 3 });
    expect(a.conversionRate).toBe(42.9); // 3 / 7
    expect(a.averageTimeToResponseSeconds).toBe(1260); // (3600 + 60 + 120) / 3
    expect(a.averageTimeToResponse).toBe("21m");
    expect(a.topPerformingForms).toEqual([
      { formId: formA, formName: "Form A", contacts: 4, converted: 2, conversionRate: 50 },
      { formId: formB, formName: "Form B", contacts: 2, converted: 1, conversionRate: 50 },
    ]);
    expect(a.from).toBe("2026-03-09T00:00:00.000Z");
  });

  test("default period is 30d", async () => {
    const a = await get("");
    expect(a.period).toBe("30d");
    expect(a.totalContacts).toBe(9);
    expect(a.statusDistribution.converted).toBe(4);
    expect(a.conversionRate).toBe(44.4); // 4 / 9
    expect(a.topPerformingForms[0]).toEqual({ formId: formA, formName: "Form A", contacts: 5, converted: 3, conversionRate: 60 });
  });

  test("formId narrows every figure", async () => {
    const a = await get(`?period=7d&formId=${formB}`);
    expect(a.totalContacts).toBe(2);
    expect(a.statusDistribution).toEqual({ new: 0, contacted: 1, responded: 0, converted: 1 });
    expect(a.conversionRate).toBe(50);
    expect(a.averageTimeToResponse).toBe("2m");
    expect(a.topPerformingForms).toEqual([{ formId: formB, formName: "Form B", contacts: 2, converted: 1, conversionRate: 50 }]);
  });

  test("timezone decides where the days start", async () => {
    // 1d in UTC starts 2026-03-15T00:00Z: the 03:00Z contact counts.
    expect((await get("?period=1d")).totalContacts).toBe(1);
    // In Los Angeles (UTC-7 after 8 March) today starts at 07:00Z: it does not.
    const la = await get("?period=1d&timezone=America/Los_Angeles");
    expect(la.totalContacts).toBe(0);
    expect(la.conversionRate).toBe(0);
    expect(la.averageTimeToResponse).toBe("n/a");
    expect(la.averageTimeToResponseSeconds).toBeNull();
    expect(la.statusDistribution).toEqual({ new: 0, contacted: 0, responded: 0, converted: 0 });
    expect(la.topPerformingForms).toEqual([]);
  });

  test("bad parameters: 400 naming them; unknown form 404", async () => {
    for (const [q, field] of [["?period=2w", "period"], ["?timezone=Mars/Base", "timezone"], ["?timezone=%2B05:00", "timezone"]]) {
      const body = await expectStatus(await s.api(`/contacts/analytics${q}`), 400);
      expect(body.details.field).toBe(field);
    }
    const p = await expectStatus(await s.api("/contacts/analytics?period=2w"), 400);
    expect(p.message).toContain("1d, 7d, 30d, 90d, 1y");
    expect((await expectStatus(await s.api(`/contacts/analytics?formId=${crypto.randomUUID()}`), 404)).code).toBe("FORM_NOT_FOUND");
  });
});
