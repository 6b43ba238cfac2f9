import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { checkDerived, rebuildDerived } from "../../src/services/doctor";
import { derivedCounts } from "../../src/db/derived-counts";
import { PendingSearchIndex } from "../../src/db/stores/contacts/search-pending";
import { runCli } from "../../src/main";
import { cliIO } from "../helpers/cli-io";

// Every writer of messages keeps the derived data (rollups, message_counts,
// monthly_usage, the search index) equal to a from-scratch recomputation — `textwire doctor`.
let s: TestServer;
let formId: string;
beforeAll(async () => {
  s = await startTestServer({ sendRatePerMinute: 1_000_000 });
});
afterAll(() => s.stop());

const clean = () => expect(checkDerived(s.running.deps.sqlite).differences).toEqual([]);
const webhook = (body: Record<string, unknown>) =>
  fetch(`${s.base}/forms/${formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("every writer keeps the derived data exact", () => {
  test("webhook submissions in concurrent batches (one upsert set per batch), re-submissions too", async () => {
    formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
    const before = derivedCounts(s.running.deps.sqlite).stats.upserts;
    const batches = s.running.deps.writer.stats.batches;
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => webhook({ phoneNumber: `+1415555${String(1000 + (i % 40)).padStart(4, "0")}`, firstName: `P${i % 40}` })));
    for (const r of answers) expect(r.status).toBe(200);
    // A bad submission changes nothing.
    expect((await webhook({ phoneNumber: "not a phone" })).status).toBe(400);
    const written = s.running.deps.writer.stats.batches - batches;
    // 60 messages in one form and one quarter hour: ≤ 9 upserts (1 count, 1 usage, 6 rollup rows,
    // maybe a second quarter) per batch, not 3 per message.
    expect(derivedCounts(s.running.deps.sqlite).stats.upserts - before).toBeLessThanOrEqual(written * 16);
    expect(written).toBeLessThan(60);
    clean();
  });

  test("manual messages, broadcasts, leases, sent/failed reports, bulk cancel, deletes", async () => {
    const manual = (await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "4155550100", content: "Hello" } }), 201)).data;
    await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "All", content: "Shop closed Monday" } }), 202);
    await new Promise((r) => setTimeout(r, 300));
    const leased = (await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 10 } }), 200)).data.messages as any[];
    expect(leased.length).toBe(10);
    for (const [i, m] of leased.entries()) {
      const json = i % 2 === 0 ? { status: "sent", sentAt: new Date().toISOString(), leaseToken: m.leaseToken } : { status: "failed", failureReason: i % 3 === 0 ? "invalid-phone" : "network-error", leaseToken: m.leaseToken };
      await expectStatus(await s.api(`/messages/${m.id}/status`, { method: "PUT", json }), 200);
    }
    clean();
    const queued = (await expectStatus(await s.api("/messages?status=queued&limit=5"), 200)).data.messages as Array<{ id: string }>;
    await expectStatus(await s.api("/messages/bulk", { method: "PUT", json: { messageIds: queued.map((q) => q.id), status: "cancelled" } }), 200);
    await expectStatus(await s.api(`/messages/${manual.messageId}`, { method: "DELETE" }), 200);
    clean();
  });

  test("contact deletes, form deletes and account deletes (cascades) leave nothing behind", async () => {
    const contact = { id: (await expectStatus(await s.api("/messages?limit=100"), 200)).data.messages.find((m: any) => m.contactId).contactId as string };
    await expectStatus(await s.api(`/contacts/${contact.id}`, { method: "DELETE" }), 200);
    clean();
    await expectStatus(await s.api(`/forms/${formId}`, { method: "DELETE" }), 200);
    clean();
    const other = s.running.deps.accounts.createAccount({ name: "Other" });
    const f = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody(), key: other.apiKey }), 201)).data.form.id;
    await expectStatus(await fetch(`${s.base}/forms/${f}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550199" }) }), 200);
    expect(s.running.deps.accounts.deleteAccount(other.account.id)).toBe(true);
    expect(s.running.deps.sqlite.query("SELECT COUNT(*) AS n FROM message_rollups WHERE account_id = ?").get(other.account.id)).toEqual({ n: 0 });
    clean();
  });
});

describe("textwire doctor", () => {

  test("--check finds a wrong rollup, count, usage and search index; exit 1; --rebuild repairs all; exit 0", async () => {
    formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
    await expectStatus(await webhook({ phoneNumber: "+14155550123", firstName: "Kim" }), 200);
    // Read after the webhook: the getter waits for the applier (the changes below must not be overwritten by its batch).
    const sqlite = s.running.deps.sqlite;
    sqlite.run(
      `UPDATE message_rollups SET sent = sent + 1 WHERE (account_id, form_id, level, bucket, reason) =
         (SELECT account_id, form_id, level, bucket, reason FROM message_rollups WHERE reason = '' LIMIT 1)`,
    );
    sqlite.run("UPDATE message_counts SET n = n + 2 WHERE rowid IN (SELECT rowid FROM message_counts LIMIT 1)");
    sqlite.run("UPDATE monthly_usage SET n = 0");
    sqlite.run("INSERT INTO contacts_fts (rowid, search_text, custom_fields) VALUES (999999, 'ghost', '{}')");
    const r = checkDerived(sqlite);
    expect(r.counts.message_rollups).toBeGreaterThan(0);
    expect(r.counts.message_counts).toBe(1);
    expect(r.counts.monthly_usage).toBeGreaterThan(0);
    expect(r.counts.contacts_fts).toBe(1);

    const check = cliIO();
    expect(await runCli(["doctor", "--check", "--db", s.dbPath], check.cli)).toBe(1);
    expect(check.out.join("\n")).toContain("message_counts");
    expect(check.out.join("\n")).toContain("textwire doctor --rebuild");
    const json = cliIO();
    expect(await runCli(["doctor", "--check", "--json", "--db", s.dbPath], json.cli)).toBe(1);
    expect(JSON.parse(json.out[0]).ok).toBe(false);

    const rebuild = cliIO();
    expect(await runCli(["doctor", "--rebuild", "--db", s.dbPath], rebuild.cli)).toBe(0);
    expect(rebuild.out[0]).toMatch(/^Rebuilding derived data from \d+ message/);
    expect(rebuild.out.some((l) => l.includes("message_rollups: quarter hours"))).toBe(true);
    const ok = cliIO();
    expect(await runCli(["doctor", "--check", "--db", s.dbPath], ok.cli)).toBe(0);
    expect(ok.out.every((l) => l.endsWith(" ok"))).toBe(true);
    clean();
  });

  test("a rebuild of correct data changes no figure", async () => {
    // The figures, without the window's own ends (they follow the clock between the two reads).
    const figures = async () => JSON.parse(JSON.stringify((await expectStatus(await s.api("/messages/analytics?period=7d"), 200)).data, (k, v) => (k === "from" || k === "to" ? undefined : v)));
    const before = await figures();
    rebuildDerived(s.running.deps.sqlite);
    expect(await figures()).toEqual(before);
  });

  test("usage: neither or both of --check and --rebuild is exit 2", async () => {
    const a = cliIO();
    expect(await runCli(["doctor", "--db", s.dbPath], a.cli)).toBe(2);
    const b = cliIO();
    expect(await runCli(["doctor", "--check", "--rebuild", "--db", s.dbPath], b.cli)).toBe(2);
  });
});

describe("the contact search index is written once per text", () => {
  test("a re-submission from the same person with the same details leaves the FTS index untouched; changed details rewrite it", async () => {
    formId = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form.id;
    const fts = () => s.running.deps.sqlite.query("SELECT COUNT(*) AS n, SUM(length(block)) AS bytes, MAX(id) AS top FROM contacts_fts_data").get();
    const body = { phoneNumber: "+14155550777", firstName: "Rosa", company: "Bakery" };
    await expectStatus(await webhook(body), 200);
    // The new contact is indexed off the write path (migration 0023): index it now, so the
    // applier Worker's background indexing does not move the index under the test.
    new PendingSearchIndex(s.running.deps.sqlite).indexChunk(Number.MAX_SAFE_INTEGER);
    const once = fts();
    await expectStatus(await webhook(body), 200);
    await expectStatus(await webhook(body), 200);
    expect(fts()).toEqual(once);
    await expectStatus(await webhook({ ...body, company: "Flower shop" }), 200);
    expect(fts()).not.toEqual(once);
    clean();
  });
});
