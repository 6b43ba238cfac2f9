/**
 * The SQL the messages list runs (src/db/stores/messages/list.ts) uses an index for every filter
 * and sort and never sorts the page (moved from the messages API tests: their subject is the
 * database's plans).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server";
import { insertContact, insertForm } from "../helpers/fixtures";

let t: TestServer;
let formA: string;
let contact: string;
beforeAll(async () => {
  t = await startTestServer();
  formA = insertForm(t.running.deps, t.accountId, { name: "A" });
  contact = insertContact(t.running.deps, t.accountId, { formId: formA });
});
afterAll(() => t.stop());

describe("message list query plans", () => {
  test("the SQL the list really runs uses an index for every filter and sort, never sorting the page", () => {
    const d = t.running.deps;
    const seen: string[] = [];
    const original = d.sqlite.query.bind(d.sqlite);
    (d.sqlite as any).query = (sql: string) => {
      seen.push(sql);
      return original(sql);
    };
    try {
      const cases: Array<Record<string, string>> = [
        {},
        { status: "sent" },
        { priority: "urgent" },
        { createdAfter: "2026-11-02", createdBefore: "2026-11-05" },
        { formId: formA },
        { contactId: contact },
        { contactId: contact, status: "queued" },
        { formId: formA, status: "sent" },
        { sortBy: "scheduledFor" },
        { sortBy: "sentAt", order: "asc" },
        { sortBy: "priority" },
        { sortBy: "priority", order: "asc" },
      ];
      for (const q of cases) {
        seen.length = 0;
        t.running.deps.sqlite.run("UPDATE messages SET updated_at = updated_at WHERE rowid = 1"); // invalidate cached counts
        d.messages.list(t.accountId, q);
        const messageQueries = seen.filter((sql) => /FROM messages/.test(sql));
        expect(messageQueries.length).toBeGreaterThanOrEqual(1);
        for (const sql of messageQueries) {
          const plan = (original(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail);
          const lines = plan.filter((l) => /\bmessages\b/.test(l));
          expect(lines.length).toBeGreaterThan(0);
          // A merged whole-account page reads its rows by rowid (src/db/stores/messages/list.ts).
          for (const line of lines) expect(line).toMatch(/^SEARCH .*USING ((COVERING )?INDEX|INTEGER PRIMARY KEY \(rowid=\?\))/);
          if (/ORDER BY/.test(sql)) expect(plan.join(" | ")).not.toContain("TEMP B-TREE FOR ORDER BY");
        }
      }
    } finally {
      (d.sqlite as any).query = original;
    }
  });

  test("every list query uses an index (EXPLAIN QUERY PLAN)", () => {
    const sqlite = t.running.deps.sqlite;
    const plans = [
      // A whole-account page by created or scheduled time: one status range at a time (migration 0019).
      "SELECT created_at, rowid FROM messages WHERE status = 'queued' AND account_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 AND status = 'sent' ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 AND priority_rank = 0 ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 AND form_id = 'x' ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 AND contact_id = 'x' ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT created_at, rowid FROM messages WHERE status = 'sent' AND account_id = ?1 AND created_at >= 'a' AND created_at <= 'b' ORDER BY created_at DESC, rowid DESC LIMIT 50",
      "SELECT scheduled_for, rowid FROM messages WHERE status = 'failed' AND account_id = ?1 ORDER BY scheduled_for ASC, rowid ASC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 AND status = 'queued' ORDER BY scheduled_for ASC, rowid ASC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 ORDER BY sent_at DESC, rowid DESC LIMIT 50",
      "SELECT id FROM messages WHERE account_id = ?1 ORDER BY priority_rank ASC, created_at ASC, rowid ASC LIMIT 50",
      "SELECT status, COUNT(*) FROM messages WHERE account_id = ?1 GROUP BY status",
    ];
    for (const q of plans) {
      const plan = (sqlite.query(`EXPLAIN QUERY PLAN ${q}`).all("acc") as Array<{ detail: string }>).map((r) => r.detail).join(" | ");
      expect(plan).toMatch(/USING (COVERING )?INDEX/);
      expect(plan).not.toContain("TEMP B-TREE");
    }
  });
});
