import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { startTestServer, type TestServer } from "../../helpers/server";
import { insertContact, insertForm, insertMessage } from "../../helpers/fixtures";
import { Sequence } from "../../../src/lib/seq";
import { largestMessageSeq } from "../../../src/db/database-info";
import { OLDEST_DUE_SQL } from "../../../src/db/stores/devices";
import { rollupIntervals } from "../../../src/db/stores/messages/rollups";

// With the analytics indexes gone and the lease index partial (migration 0015),
// every filter and sort of the messages list, the lease (next) path and the queue/lease boot and
// sweep still reach messages through an index — never a full scan.
let s: TestServer;
let formId: string;
let contactId: string;
beforeAll(async () => {
  s = await startTestServer();
  const d = s.running.deps;
  formId = insertForm(d, s.accountId, { name: "Plans" });
  contactId = insertContact(d, s.accountId, { formId });
  for (let i = 0; i < 50; i++) insertMessage(d, s.accountId, { formId, formName: "Plans", contactId, status: (["queued", "sent", "failed", "cancelled"] as const)[i % 4] });
});
afterAll(() => s.stop());

/** Statements touching `messages` that fn runs through sqlite.query/prepare, with their parameters. */
function capture(sqlite: Database, fn: () => void): Array<{ sql: string; params: unknown[] }> {
  const seen: Array<{ sql: string; params: unknown[] }> = [];
  const orig = { query: sqlite.query, prepare: sqlite.prepare };
  const wrap = (make: (sql: string) => any) => (sql: string) => {
    const st = make.call(sqlite, sql);
    if (!/\bmessages\b/.test(sql)) return st;
    return new Proxy(st, {
      get(target, prop) {
        const v = target[prop];
        if (typeof v === "function" && ["all", "get", "run", "values", "iterate"].includes(prop as string))
          return (...params: unknown[]) => (seen.push({ sql, params }), v.apply(target, params));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  };
  (sqlite as any).query = wrap(orig.query);
  (sqlite as any).prepare = wrap(orig.prepare);
  try {
    fn();
  } finally {
    (sqlite as any).query = orig.query;
    (sqlite as any).prepare = orig.prepare;
  }
  return seen;
}

/** The plan lines of a statement that read `messages` (or its alias) without an index. */
function fullScans(sqlite: Database, sql: string, params: unknown[]): string[] {
  const plan = sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[])) as Array<{ detail: string }>;
  return plan.map((p) => p.detail).filter((d) => /^SCAN (messages|m)$/.test(d));
}

const listCases: Array<Record<string, string>> = [
  {},
  { status: "sent" },
  { status: "queued" },
  { priority: "urgent" },
  { priority: "high", status: "failed" },
  { createdAfter: "2026-01-01" },
  { createdBefore: "2026-01-01T00:00:00Z" },
  { createdAfter: "2026-01-01", status: "sent" },
  { sortBy: "createdAt", order: "asc" },
  { sortBy: "scheduledFor" },
  { sortBy: "scheduledFor", order: "asc" },
  { sortBy: "sentAt" },
  { sortBy: "priority" },
  { sortBy: "priority", order: "asc" },
  // Whole-account pages merged from the status ranges (migration 0019), with the other filters.
  { sortBy: "scheduledFor", priority: "low" },
  { sortBy: "scheduledFor", createdAfter: "2026-01-01", order: "asc" },
  { status: "queued", sortBy: "scheduledFor", order: "asc" },
  { createdAfter: "2026-01-01", createdBefore: "2040-01-01", sortBy: "createdAt", order: "asc" },
];

describe("messages query plans", () => {
  test("every list filter and sort (and form and contact filters) uses an index", () => {
    const d = s.running.deps;
    const cases = [...listCases, { formId }, { formId, status: "sent" }, { contactId }, { contactId, status: "queued" }, { formId, sortBy: "sentAt" }];
    let statements = 0;
    for (const q of cases) {
      // A write first: the list must answer its counts without its cache.
      d.sqlite.run("UPDATE messages SET updated_at = updated_at WHERE rowid = 1");
      const seen = capture(d.sqlite, () => d.messages.list(s.accountId, q as any));
      statements += seen.length;
      for (const st of seen) expect({ q, sql: st.sql, scans: fullScans(d.sqlite, st.sql, st.params) }).toEqual({ q, sql: st.sql, scans: [] });
    }
    expect(statements).toBeGreaterThanOrEqual(cases.length);
  });

  test("lease (next), lease reload, sweep, release, queue rebuild and the next due time use an index", () => {
    const d = s.running.deps;
    const seen = capture(d.sqlite, () => {
      d.leases.next(s.accountId, { limit: 3, leaseSeconds: 300 });
    });
    const now = new Date().toISOString();
    const fixed: Array<{ sql: string; params: unknown[] }> = [
      { sql: "UPDATE messages SET lease_token = ?1, lease_expires_at = ?2, lease_device_id = ?3, last_lease_token = ?1 WHERE id = ?4 AND status = 'queued' RETURNING *", params: ["t", now, "d", "x"] },
      { sql: "SELECT id, account_id, lease_expires_at, lease_device_id FROM messages WHERE status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL", params: [] },
      { sql: "SELECT id, account_id, lease_expiries, retry_count, priority, seq, updated_at FROM messages WHERE status = 'queued' AND lease_expires_at <= ?1", params: [now] },
      { sql: "SELECT id FROM messages WHERE status = 'queued' AND lease_expires_at IS NOT NULL AND lease_token IS NOT NULL AND lease_device_id = ?1", params: ["d"] },
      { sql: "SELECT id, account_id, priority, seq FROM messages WHERE status = 'queued'", params: [] },
      { sql: OLDEST_DUE_SQL, params: [] },
    ];
    for (const st of [...seen, ...fixed]) expect({ sql: st.sql, scans: fullScans(d.sqlite, st.sql, st.params) }).toEqual({ sql: st.sql, scans: [] });
    // Without the partial indexes these would be full scans: the check can fail.
    expect(fullScans(d.sqlite, "SELECT id FROM messages WHERE +status = 'queued'", []).length).toBe(1);
  });

  test("the analytics residue (the edges of a range the rollups do not cover) reads status ranges of an index (migration 0019)", () => {
    const d = s.running.deps;
    const seen = capture(d.sqlite, () => {
      // Edges inside quarter hours: the residue is read from messages.
      const from = Date.parse("2026-01-01T00:03:00Z");
      const to = Date.now() + 7 * 60_000;
      rollupIntervals(d.sqlite, s.accountId, "*", [from, to]);
      rollupIntervals(d.sqlite, s.accountId, formId, [from, to]);
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const st of seen) {
      const plan = (d.sqlite.query(`EXPLAIN QUERY PLAN ${st.sql}`).all(...(st.params as any[])) as Array<{ detail: string }>).map((p) => p.detail);
      expect({ sql: st.sql, plan }).toEqual({ sql: st.sql, plan: expect.arrayContaining([expect.stringMatching(/^SEARCH messages USING INDEX messages_account_status_created_idx \(account_id=\? AND status=\? AND created_at>\? AND created_at<\?\)/)]) });
    }
  });

  test("the boot's next message sequence (max(seq)) is one step down messages_seq_idx, not a read of every message (migration 0018)", () => {
    const d = s.running.deps;
    const seen = capture(d.sqlite, () => new Sequence(largestMessageSeq(d.sqlite)));
    expect(seen.length).toBe(1);
    const plan = (d.sqlite.query(`EXPLAIN QUERY PLAN ${seen[0].sql}`).all() as Array<{ detail: string }>).map((p) => p.detail).join(" | ");
    expect(plan).toContain("messages_seq_idx");
    const max = (d.sqlite.query("SELECT max(seq) AS m FROM messages NOT INDEXED").get() as { m: number }).m;
    expect(new Sequence(largestMessageSeq(d.sqlite)).next()).toBe(max + 1);
  });
});
