import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage } from "../helpers/fixtures";
import { formTallies } from "../../src/db/stores/forms";
import { countConversations, unreadTotal } from "../../src/db/stores/contacts/conversations";

// The counts the dashboard asks on every visit of Forms and Conversations read a few small rows
// or an index alone, never every message or every contact of the account (docs/api-decisions.md,
// "Pages with years of data"): with a year of data those were seconds per visit.
let s: TestServer;
let other: { account: { id: string }; apiKey: string };
const forms: string[] = [];
beforeAll(async () => {
  s = await startTestServer();
  const d = s.running.deps;
  other = d.accounts.createAccount({ name: "Neighbour" });
  forms.push(insertForm(d, s.accountId, { name: "Quotes" }), insertForm(d, s.accountId, { name: "Bookings" }));
  const statuses = ["queued", "sent", "sent", "failed", "cancelled", "sent"] as const;
  for (let i = 0; i < 12; i++) {
    const formId = forms[i % 2];
    const contactId = insertContact(d, s.accountId, { formId, phone: `+1415555${String(1000 + i)}`, status: i % 3 === 0 ? "converted" : "contacted" });
    insertMessage(d, s.accountId, { formId, contactId, status: statuses[i % statuses.length] });
    insertMessage(d, s.accountId, { formId, contactId, status: "sent", createdAt: new Date(Date.now() - (i + 1) * 86_400_000).toISOString() });
  }
  // A message without a form and another account's form: neither is counted for these forms.
  insertMessage(d, s.accountId, { status: "sent" });
  const theirs = insertForm(d, other.account.id, { name: "Quotes" });
  insertMessage(d, other.account.id, { formId: theirs, contactId: insertContact(d, other.account.id, { formId: theirs }), status: "sent" });
});
afterAll(() => s.stop());

/** Every statement `fn` runs through sqlite.query, with its parameters. */
function capture(sqlite: Database, fn: () => void): Array<{ sql: string; params: unknown[] }> {
  const seen: Array<{ sql: string; params: unknown[] }> = [];
  const orig = sqlite.query;
  (sqlite as any).query = (sql: string) => {
    const st = orig.call(sqlite, sql);
    return new Proxy(st, {
      get(target, prop) {
        const v = (target as any)[prop];
        if (typeof v === "function" && ["all", "get", "run", "values"].includes(prop as string)) return (...params: unknown[]) => (seen.push({ sql, params }), v.apply(target, params));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  };
  try {
    fn();
  } finally {
    (sqlite as any).query = orig;
  }
  return seen;
}
const plan = (sqlite: Database, sql: string, params: unknown[]) =>
  (sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as any[])) as Array<{ detail: string }>).map((p) => p.detail);

describe("the Forms page's counts", () => {
  test("texts per form come from the rollups (never the messages) and contacts from the (form, status) index; the figures are the rows'", () => {
    const sqlite = s.running.deps.sqlite;
    let tallies!: ReturnType<typeof formTallies>;
    const ran = capture(sqlite, () => (tallies = formTallies(s.running.deps.db, s.accountId, forms)));
    expect(ran.length).toBe(2);
    for (const q of ran) expect(q.sql).not.toMatch(/\bFROM messages\b/);
    const contactPlan = plan(sqlite, ran[1].sql, ran[1].params);
    expect(contactPlan.join(" | ")).toContain("COVERING INDEX contacts_form_status_idx");

    for (const formId of forms) {
      const rows = sqlite.query("SELECT count(*) AS n, coalesce(sum(status = 'sent'), 0) AS sent FROM messages WHERE form_id = ?").get(formId) as { n: number; sent: number };
      const people = sqlite.query("SELECT count(*) AS n, coalesce(sum(status = 'converted'), 0) AS converted FROM contacts WHERE form_id = ?").get(formId) as { n: number; converted: number };
      expect(tallies.messages.find((m) => m.formId === formId)).toEqual({ formId, n: rows.n, sent: rows.sent });
      expect(tallies.contacts.find((c) => c.formId === formId)).toEqual({ formId, n: people.n, converted: people.converted });
      expect(rows.n).toBe(12);
    }
  });

  test("after status changes the counts follow, through the API as the dashboard reads them", async () => {
    const sqlite = s.running.deps.sqlite;
    const queued = sqlite.query("SELECT id FROM messages WHERE form_id = ? AND status = 'queued' LIMIT 1").get(forms[0]) as { id: string };
    await expectStatus(await s.api(`/messages/${queued.id}/status`, { method: "PUT", json: { status: "cancelled" } }), 200);
    const listed = (await expectStatus(await s.api("/forms?counts=true"), 200)).data.forms;
    for (const f of listed) {
      const rows = sqlite.query("SELECT count(*) AS n, coalesce(sum(status = 'sent'), 0) AS sent FROM messages WHERE form_id = ?").get(f.id) as { n: number; sent: number };
      expect(f.counts).toMatchObject({ messages: rows.n, messagesSent: rows.sent });
    }
  });

  test("another account's form ids count nothing for this account", () => {
    const theirs = (s.running.deps.sqlite.query("SELECT id FROM forms WHERE account_id = ?").get(other.account.id) as { id: string }).id;
    expect(formTallies(s.running.deps.db, s.accountId, [theirs]).messages).toEqual([]);
  });
});

describe("the Conversations page's counts", () => {
  test("without a contact filter the total reads conversations alone, the same figure as the join; with one it still joins", async () => {
    const sqlite = s.running.deps.sqlite;
    await expectStatus(await s.api("/messages/inbound", { method: "POST", json: { from: "+14155551001", body: "Is Friday ok?" } }), 201);
    const joined = (sqlite.query("SELECT count(*) AS n FROM conversations v JOIN contacts c ON c.id = v.contact_id WHERE v.account_id = ?1 AND c.account_id = ?1").get(s.accountId) as { n: number }).n;
    expect(joined).toBeGreaterThan(10);

    for (const unread of [undefined, true, false] as const) {
      let n = -1;
      const ran = capture(sqlite, () => (n = countConversations(sqlite, s.accountId, { filter: {}, unread })));
      expect(ran.map((q) => q.sql).join("\n")).not.toMatch(/\bcontacts\b/);
      const expected = (
        sqlite
          .query(`SELECT count(*) AS n FROM conversations v JOIN contacts c ON c.id = v.contact_id WHERE v.account_id = ?1 AND c.account_id = ?1 ${unread === undefined ? "" : unread ? "AND v.unread_count > 0" : "AND v.unread_count = 0"}`)
          .get(s.accountId) as { n: number }
      ).n;
      expect(n).toBe(expected);
    }
    expect(countConversations(sqlite, s.accountId, { filter: {}, unread: true })).toBe(1);
    // A filter on the contacts keeps the join (and its answer).
    expect(countConversations(sqlite, s.accountId, { filter: { status: "converted" } })).toBe(
      (sqlite.query("SELECT count(*) AS n FROM conversations v JOIN contacts c ON c.id = v.contact_id WHERE v.account_id = ?1 AND c.status = 'converted'").get(s.accountId) as { n: number }).n,
    );
    // Tenant isolation: the other account's conversation is not in this account's figure.
    expect(countConversations(sqlite, other.account.id, { filter: {} })).toBe(1);
    const d = (await expectStatus(await s.api("/conversations?limit=5"), 200)).data;
    expect(d.pagination.total).toBe(joined);
    expect(d.unreadTotal).toBe(1);
  });

  test("the unread total reads the conversations with something unread, not the whole table", () => {
    const sqlite = s.running.deps.sqlite;
    const ran = capture(sqlite, () => expect(unreadTotal(sqlite, s.accountId)).toBe(1));
    const lines = plan(sqlite, ran[0].sql, ran[0].params);
    expect(lines.join(" | ")).toContain("conversations_account_unread_idx");
    expect(lines.some((l) => /^SCAN conversations/.test(l))).toBe(false);
  });
});

describe("the Overview's figures", () => {
  test("today and the week come from the rollups alone (no reply-rate probe per contact) and equal the analytics' figures", async () => {
    const sqlite = s.running.deps.sqlite;
    const zone = "America/New_York";
    let answer: any;
    const ran = capture(sqlite, () => {
      answer = s.running.deps.analytics.volume(s.accountId, { period: "7d", timezone: zone }, Date.now());
    });
    // What analytics.messages reads besides the rollups: the reply rate's contacts and replies, and forms.
    expect(ran.map((q) => q.sql).join("\n")).not.toMatch(/\b(inbound_messages|contacts|forms)\b/);
    const full = s.running.deps.analytics.messages(s.accountId, { period: "7d", timezone: zone }, Date.now());
    expect(answer).toEqual({ statusBreakdown: full.statusBreakdown, dailyVolume: full.dailyVolume });
    const d = (await expectStatus(await s.api(`/overview?timezone=${encodeURIComponent(zone)}`), 200)).data;
    expect(d.week).toEqual(full.dailyVolume.map((x: any) => ({ date: x.date, sent: x.sent, failed: x.failed })));
    const today = s.running.deps.analytics.messages(s.accountId, { period: "1d", timezone: zone }, Date.now());
    expect(d.today).toEqual({ sent: today.statusBreakdown.sent, failed: today.statusBreakdown.failed });
    expect(d.week.reduce((n: number, x: any) => n + x.sent, 0)).toBeGreaterThan(0);
  });

  test("the Overview request runs no reply-rate query", async () => {
    const sqlite = s.running.deps.sqlite;
    const seen: string[] = [];
    const orig = sqlite.query;
    (sqlite as any).query = (sql: string) => (seen.push(sql), orig.call(sqlite, sql));
    try {
      await expectStatus(await s.api("/overview?timezone=UTC"), 200);
    } finally {
      (sqlite as any).query = orig;
    }
    expect(seen.join("\n")).not.toMatch(/inbound_messages/);
  });
});
