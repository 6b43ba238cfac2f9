import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database, type Statement } from "bun:sqlite";
import { startTestServer, type TestServer } from "../helpers/server";
import { insertContact, insertForm, insertMessage } from "../helpers/fixtures";
import { largestMessageSeq } from "../../src/db/database-info";

// Every index on messages, contacts, submissions and conversations earns its place: each is
// listed here with the list, page or rule that needs it (docs/development.md, "Indexes and
// triggers on messages, contacts and submissions"), and that query's plan, as the server runs
// it, uses it. An index added without its query here, or a query that stopped using its index,
// fails this test.

/** SQL of every statement the main connection runs while `recording` (set around each case). */
const executed = new Set<string>();
let recording = false;
const wrapped = new WeakSet<object>();
const orig = { prepare: Database.prototype.prepare, query: Database.prototype.query };
function hook(make: (this: Database, sql: string, ...rest: any[]) => Statement<any, any>) {
  return function (this: Database, sql: string, ...rest: any[]) {
    const st = make.call(this, sql, ...rest);
    if (!wrapped.has(st)) {
      wrapped.add(st);
      for (const m of ["all", "get", "run", "values", "iterate"] as const) {
        const f = (st as any)[m];
        if (typeof f !== "function") continue;
        (st as any)[m] = (...params: unknown[]) => {
          if (recording) executed.add(sql);
          return f.apply(st, params);
        };
      }
    }
    return st;
  };
}

let s: TestServer;
let formId: string;
let contactId: string;
let broadcastId = "";
const webhookForm = { name: "Plans webhook", messageTemplate: "Hi {{firstName}}", fields: [{ name: "firstName", type: "text", label: "First name" }] };
let webhookFormId = "";
let goneFormId = "";

beforeAll(async () => {
  // Installed before the server starts, so the statements its stores prepare at boot are seen too.
  Database.prototype.prepare = hook(orig.prepare) as any;
  Database.prototype.query = hook(orig.query) as any;
  s = await startTestServer({}, { logger: { info() {}, warn() {}, error: (m, f) => console.error(m, f) } });
  const d = s.running.deps;
  formId = insertForm(d, s.accountId, { name: "Plans" });
  contactId = insertContact(d, s.accountId, { formId });
  goneFormId = insertForm(d, s.accountId, { name: "Plans, deleted" });
  for (let i = 0; i < 40; i++) insertMessage(d, s.accountId, { formId, formName: "Plans", contactId, status: (["queued", "sent", "failed", "cancelled"] as const)[i % 4] });
  const form = await s.api("/forms", { method: "POST", json: { ...webhookForm, settings: { timezone: "UTC", rateLimitPerDay: 100, duplicateWindowMinutes: 10, recipientLimitPerDay: 5 } } });
  webhookFormId = ((await form.json()) as any).data.form.id;
  const b = await s.api("/broadcasts", { method: "POST", json: { name: "Plans", content: "Hello", segment: {} } });
  broadcastId = ((await b.json()) as any).data?.broadcast?.id ?? "";
});
afterAll(async () => {
  planner?.close();
  await s.stop();
  Database.prototype.prepare = orig.prepare;
  Database.prototype.query = orig.query;
});

/** The SQL the main connection ran for `run`. */
async function sqlOf(run: () => unknown): Promise<string[]> {
  executed.clear();
  recording = true;
  try {
    await run();
  } finally {
    recording = false;
  }
  return [...executed];
}

/**
 * The indexes a statement's plan reads (parameters unbound, as a fresh install plans it: no
 * ANALYZE), planned on a read-only connection of its own (the server's stays untouched).
 */
let planner: Database | undefined;
function indexesOf(sql: string): string[] {
  if (!/^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b/i.test(sql)) return [];
  planner ??= new Database(s.dbPath, { readonly: true });
  let plan: Array<{ detail: string }>;
  try {
    plan = orig.query.call(planner, `EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>;
  } catch {
    return [];
  }
  return plan.flatMap((p) => [...p.detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)].map((m) => m[1]));
}

const get = (path: string | (() => string)) => async () => {
  path = typeof path === "string" ? path : path();
  const r = await s.api(path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
};
const del = (path: () => string) => async () => {
  const r = await s.api(path(), { method: "DELETE" });
  if (r.status !== 200) throw new Error(`${path()}: ${r.status} ${await r.text()}`);
};
const post = (path: () => string, body: unknown) => async () => {
  const r = await fetch(`${s.base}${path()}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
};

/** Each index, the query that needs it (as docs/development.md lists them), and a request or call that runs that query. */
const CASES: Array<{ index: string; need: string; run: () => unknown }> = [
  // contacts
  { index: "contacts_account_phone_idx", need: "one number, one contact per account (unique); the webhook's contact by phone", run: post(() => `/forms/${webhookFormId}/webhook`, { phoneNumber: "+14155552671", firstName: "Ann" }) },
  { index: "contacts_account_created_idx", need: "Contacts list, newest first (the default)", run: get("/contacts") },
  { index: "contacts_account_status_created_idx", need: "Contacts list filtered by status", run: get("/contacts?status=new") },
  { index: "contacts_account_updated_idx", need: "Contacts list sorted by last update", run: get("/contacts?sortBy=updatedAt") },
  { index: "contacts_account_first_idx", need: "Contacts list sorted by first name", run: get("/contacts?sortBy=firstName") },
  { index: "contacts_account_last_idx", need: "Contacts list sorted by last name", run: get("/contacts?sortBy=lastName") },
  { index: "contacts_account_opted_out_idx", need: "Contacts list filtered by opted out / not", run: get("/contacts?optedOut=true") },
  { index: "contacts_form_created_idx", need: "Contacts list of one form; a form's new contacts in a range (contact analytics, form stats' edges)", run: get(() => `/contacts?formId=${formId}`) },
  { index: "contacts_form_status_idx", need: "Forms page: contacts per form and status", run: get("/forms?counts=true") },
  { index: "contacts_account_contacted_idx", need: "reply rate: contacts texted in a range (partial: texted ones only)", run: get("/messages/analytics?period=30d") },
  // messages
  { index: "messages_account_recipient_created_idx", need: "the webhook's duplicate window and per-recipient limit (texts to this number lately)", run: post(() => `/forms/${webhookFormId}/webhook`, { phoneNumber: "+14155552672", firstName: "Bo" }) },
  { index: "messages_contact_created_idx", need: "a contact's texts, newest first (contact page, conversation)", run: get(() => `/contacts/${contactId}/messages`) },
  { index: "messages_account_status_created_idx", need: "Messages list (by status ranges), analytics' residue", run: get("/messages?status=sent") },
  { index: "messages_account_status_scheduled_idx", need: "Messages list sorted by scheduled time", run: get("/messages?status=queued&sortBy=scheduledFor") },
  { index: "messages_account_priority_idx", need: "Messages list filtered or sorted by priority", run: get("/messages?priority=high") },
  { index: "messages_account_sent_idx", need: "Messages list sorted by sent time", run: get("/messages?sortBy=sentAt") },
  { index: "messages_form_created_idx", need: "Messages list of one form", run: get(() => `/messages?formId=${formId}`) },
  { index: "messages_form_scheduled_idx", need: "the form's daily limit (texts scheduled that day)", run: post(() => `/forms/${webhookFormId}/webhook`, { phoneNumber: "+14155552673", firstName: "Cy" }) },
  { index: "messages_broadcast_status_idx", need: "a broadcast's progress (its texts by status; partial: broadcast texts only)", run: () => (broadcastId ? get(`/broadcasts/${broadcastId}`)() : get("/broadcasts")()) },
  { index: "messages_seq_idx", need: "the boot's next message sequence (max(seq))", run: () => largestMessageSeq(s.running.deps.sqlite) },
  // submissions
  { index: "submissions_form_created_idx", need: "a deleted form's submissions; a form's submissions in a range (form stats' edges)", run: () => del(() => `/forms/${goneFormId}`)() },
  { index: "submissions_contact_idx", need: "a contact's requests (the contact's timeline, GET /v1/submissions?contactId=); a deleted contact's requests", run: get(() => `/submissions?contactId=${contactId}`) },
  // conversations
  { index: "conversations_account_last_idx", need: "Conversations list, latest first", run: get("/conversations") },
  { index: "conversations_account_unread_idx", need: "the unread total (partial: unread only)", run: get("/conversations") },
];
/** Checked by their own tests (test/unit/services/queue-sync.test.ts, test/unit/db/messages-query-plans.test.ts): the boot's queue rebuild and the lease sweep. */
const ELSEWHERE = ["messages_queued_order_idx", "messages_leased_idx"];

describe("every index on messages, contacts, submissions and conversations earns its place", () => {
  test("each index is listed with the query that needs it (primary keys' own indexes aside)", () => {
    const indexes = (orig.query.call(
      s.running.deps.sqlite,
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('messages', 'contacts', 'submissions', 'conversations') AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name",
    ).all() as Array<{ name: string }>).map((r) => r.name);
    expect(indexes).toEqual([...new Set([...CASES.map((c) => c.index), ...ELSEWHERE])].sort());
  });

  for (const c of CASES) {
    test(`${c.index}: ${c.need}`, async () => {
      const sqls = await sqlOf(c.run);
      const using = sqls.filter((sql) => indexesOf(sql).includes(c.index));
      if (process.env.PLANS_DEBUG && using.length === 0) for (const q of sqls) console.log(q.replace(/\s+/g, " ").slice(0, 300), "=>", indexesOf(q));
      expect({ index: c.index, using: using.length > 0, ran: sqls.length > 0 }).toEqual({ index: c.index, using: true, ran: true });
    });
  }
});
