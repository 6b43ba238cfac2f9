import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server";
import { insertForm, insertMessage } from "../helpers/fixtures";

// Migration 0019: a whole-account page by created or scheduled time merges the four status ranges
// of (account_id, status, time) (src/db/stores/messages/list.ts). Its pages must be exactly those of one
// ordered read of the account's messages, ties (equal times) included, on every page.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  const d = s.running.deps;
  const formId = insertForm(d, s.accountId, { name: "Merge" });
  const statuses = ["queued", "sent", "failed", "cancelled"] as const;
  const priorities = ["low", "normal", "high", "urgent"] as const;
  const base = Date.parse("2026-03-01T00:00:00Z");
  for (let i = 0; i < 157; i++) {
    // Few distinct instants: many ties across statuses, broken by rowid.
    const createdAt = new Date(base + (i % 23) * 60_000).toISOString();
    const scheduledFor = new Date(base + ((i * 7) % 19) * 3_600_000).toISOString();
    insertMessage(d, s.accountId, { formId, status: statuses[(i * 5) % 4 === 0 ? 1 : (i * 3) % 4], priority: priorities[i % 4], createdAt, scheduledFor });
  }
  // Another account's messages never show.
  const other = d.accounts.createAccount({ name: "Other" }).account.id;
  for (let i = 0; i < 20; i++) insertMessage(d, other, { createdAt: new Date(base + i * 60_000).toISOString() });
});
afterAll(() => s.stop());

/** The page as one ordered read without any index would give it. */
function reference(where: string, params: Array<string | number>, col: string, dir: "ASC" | "DESC", limit: number, offset: number): string[] {
  return (
    s.running.deps.sqlite
      .query(`SELECT id FROM messages NOT INDEXED WHERE account_id = ? ${where} ORDER BY ${col} ${dir}, rowid ${dir} LIMIT ? OFFSET ?`)
      .all(s.accountId, ...params, limit, offset) as Array<{ id: string }>
  ).map((r) => r.id);
}

describe("whole-account pages merged from the status ranges", () => {
  const cases: Array<{ q: Record<string, string>; where: string; params: Array<string | number> }> = [
    { q: {}, where: "", params: [] },
    { q: { priority: "high" }, where: "AND priority_rank = ?", params: [1] },
    { q: { createdAfter: "2026-03-01T00:05:00Z", createdBefore: "2026-03-01T00:17:00Z" }, where: "AND created_at >= ? AND created_at < ?", params: ["2026-03-01T00:05:00.000Z", "2026-03-01T00:17:00.000Z"] },
  ];
  for (const { q, where, params } of cases) {
    for (const sortBy of ["createdAt", "scheduledFor"] as const) {
      for (const order of ["desc", "asc"] as const) {
        test(`${JSON.stringify(q)} by ${sortBy} ${order}: every page equals one ordered read`, () => {
          const col = sortBy === "createdAt" ? "created_at" : "scheduled_for";
          const dir = order === "asc" ? "ASC" : "DESC";
          let pages = 0;
          for (const limit of [1, 7, 50]) {
            for (let page = 1; ; page++) {
              const got = s.running.deps.messages.list(s.accountId, { ...q, sortBy, order, page, limit });
              const want = reference(where, params, col, dir, limit, (page - 1) * limit);
              expect({ page, limit, ids: got.messages.map((m: { id: string }) => m.id) }).toEqual({ page, limit, ids: want });
              pages++;
              if (want.length === 0) break;
            }
          }
          expect(pages).toBeGreaterThan(5);
        });
      }
    }
  }

  test("a page beyond the end is empty, and the rows carry the list's fields", () => {
    const d = s.running.deps;
    expect(d.messages.list(s.accountId, { page: 1000, limit: 50 }).messages).toEqual([]);
    const [first] = d.messages.list(s.accountId, { limit: 1 }).messages;
    expect(Object.keys(first).sort()).toEqual(["contactId", "content", "createdAt", "formId", "formName", "id", "priority", "recipientName", "recipientPhone", "scheduledFor", "sentAt", "stage", "status"]);
  });
});
