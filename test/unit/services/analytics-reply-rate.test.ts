import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../helpers/server";
import { insertForm } from "../../helpers/fixtures";
import { insertContact } from "../../helpers/contact-fixtures";
import { rng } from "../../helpers/rng";

// replyRate reads the partial index of texted contacts (migration 0018) instead of every contact
// row: the figure must stay what a plain scan of every contact gives, for the account and per
// form, in every period — texted before, at and after the period's start, never texted, replies
// before and inside the period, another account's contacts.
const NOW = Date.parse("2026-11-20T12:00:00.000Z");
const DAY = 86_400_000;
let s: TestServer;
let forms: string[] = [];

beforeAll(async () => {
  s = await startTestServer({}, { clock: () => NOW });
  const d = s.running.deps;
  forms = [insertForm(d, s.accountId, { name: "One" }), insertForm(d, s.accountId, { name: "Two" })];
  const other = d.accounts.createAccount({ name: "Other" }).account.id;
  const r = rng(18);
  const inbound = d.sqlite.query(
    "INSERT INTO inbound_messages (id, account_id, contact_id, from_phone, body, received_at, created_at) VALUES (?1, ?2, ?3, '+14155550000', 'hi', ?4, ?4)",
  );
  for (let i = 0; i < 400; i++) {
    const account = i % 10 === 9 ? other : s.accountId;
    // A third never texted; the rest texted up to 400 days ago, some exactly at a period's start.
    const texted = r() < 0.33 ? null : i % 25 === 0 ? new Date(NOW - 30 * DAY).toISOString() : new Date(NOW - Math.floor(r() * 400 * DAY)).toISOString();
    const formId = account === s.accountId ? [forms[0], forms[1], null][i % 3] : null;
    const id = insertContact(d.sqlite, account, { formId, lastContactedAt: texted ?? undefined, createdAt: new Date(NOW - 500 * DAY + i * 1000).toISOString() });
    for (let k = Math.floor(r() * 3); k > 0; k--) inbound.run(crypto.randomUUID(), account, id, new Date(NOW - Math.floor(r() * 400 * DAY)).toISOString());
  }
});
afterAll(() => s.stop());

/** The figure as a scan of every contact of the account computes it (no index). */
function reference(formId: string | null, from: string): number {
  const r = s.running.deps.sqlite
    .query(
      `SELECT COUNT(*) AS texted, COALESCE(SUM(EXISTS (SELECT 1 FROM inbound_messages i WHERE i.contact_id = c.id AND i.received_at >= ?3)), 0) AS replied
       FROM contacts c NOT INDEXED WHERE c.account_id = ?2 AND (?1 IS NULL OR c.form_id = ?1) AND c.last_contacted_at >= ?3`,
    )
    .get(formId, s.accountId, from) as { texted: number; replied: number };
  return r.texted === 0 ? 0 : Math.round((r.replied / r.texted) * 1000) / 10;
}

describe("analytics replyRate from the texted-contacts index", () => {
  for (const period of ["7d", "30d", "90d", "1y"]) {
    test(`${period}: the account and each form equal a scan of every contact`, () => {
      const a = s.running.deps.analytics;
      const whole = a.messages(s.accountId, { period }, NOW);
      expect(whole.replyRate).toBe(reference(null, whole.from));
      for (const formId of forms) {
        const one = a.messages(s.accountId, { period, formId }, NOW);
        expect(one.replyRate).toBe(reference(formId, one.from));
      }
    });
  }

  test("the data set has texted contacts that replied and some that did not", () => {
    const from = new Date(NOW - 365 * DAY).toISOString();
    const rate = reference(null, from);
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(100);
  });

  test("the query reads the partial index, not the contact rows", () => {
    const plan = (s.running.deps.sqlite.query("EXPLAIN QUERY PLAN SELECT COUNT(*) FROM contacts c INDEXED BY contacts_account_contacted_idx WHERE c.account_id = ?1 AND c.last_contacted_at IS NOT NULL AND c.last_contacted_at >= ?2").all("a", "b") as Array<{ detail: string }>)
      .map((r) => r.detail)
      .join(" | ");
    expect(plan).toContain("COVERING INDEX contacts_account_contacted_idx");
  });
});
