import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectStatus, formBody, startTestServer, type TestServer } from "../helpers/server";
import { checkDerived } from "../../src/services/doctor";

// Migration 0019: a new message's conversation row is written by its writer (one upsert per
// contact per batch, src/db/derived-counts.ts) instead of a trigger per row. Through every writer
// of new messages — the webhook's intake applier, manual messages, broadcasts, keyword replies —
// the conversations must be exactly what the trigger made: the newest activity either way.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRatePerMinute: 1_000_000 });
});
afterAll(() => s.stop());

/** What the trigger kept, from scratch: per contact, the newest message in either direction. */
function expected(): Array<{ contact_id: string; account_id: string; last_message_at: string }> {
  return s.running.deps.sqlite
    .query(
      `SELECT c.id AS contact_id, c.account_id, max(a.at) AS last_message_at FROM (
         SELECT contact_id, created_at AS at FROM messages WHERE contact_id IS NOT NULL
         UNION ALL SELECT contact_id, received_at FROM inbound_messages) a JOIN contacts c ON c.id = a.contact_id
       GROUP BY c.id ORDER BY c.id`,
    )
    .all() as Array<{ contact_id: string; account_id: string; last_message_at: string }>;
}
const found = () => s.running.deps.sqlite.query("SELECT contact_id, account_id, last_message_at FROM conversations ORDER BY contact_id").all();

describe("conversations kept by every writer of new messages", () => {
  test("webhook (applied in batches), manual, broadcast and keyword-reply messages give the trigger's conversations", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const phone = (i: number) => `+1415555${String(2000 + i).padStart(4, "0")}`;
    // Concurrent submissions: several per contact land in one applier batch.
    const answers = await Promise.all(
      Array.from({ length: 48 }, (_, i) =>
        fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: phone(i % 16), firstName: `P${i % 16}` }) }),
      ),
    );
    for (const r of answers) expect(r.status).toBe(200);
    const contacts = (await expectStatus(await s.api("/contacts?limit=100"), 200)).data.contacts as Array<{ id: string; phoneNumber: string }>;
    expect(contacts.length).toBe(16);
    await expectStatus(await s.api("/messages", { method: "POST", json: { contactId: contacts[3].id, content: "Your quote is ready" } }), 201);
    await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "4155559999", content: "A number with no contact yet" } }), 201);
    await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "All", content: "Shop closed Monday" } }), 202);
    await expectStatus(await s.api("/messages/inbound", { method: "POST", json: { from: contacts[5].phoneNumber, body: "STOP" } }), 201);
    await new Promise((r) => setTimeout(r, 300)); // the broadcast's slices
    expect((s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages WHERE broadcast_id IS NOT NULL").get() as { n: number }).n).toBeGreaterThan(0);
    expect((s.running.deps.sqlite.query("SELECT count(*) AS n FROM messages WHERE metadata LIKE '%keyword-reply%'").get() as { n: number }).n).toBe(1);

    const want = expected();
    expect(want.length).toBeGreaterThanOrEqual(16);
    expect(found()).toEqual(want);
    // The API's list: newest activity first, every contact once.
    const listed = (await expectStatus(await s.api("/conversations?limit=100"), 200)).data.conversations as Array<{ contactId: string; lastMessage: { at: string } | null }>;
    expect(listed.map((c) => c.contactId).sort()).toEqual(want.map((w) => w.contact_id).sort());
    const ats = listed.map((c) => want.find((w) => w.contact_id === c.contactId)!.last_message_at);
    expect(ats).toEqual([...ats].sort().reverse());
    expect(checkDerived(s.running.deps.sqlite).counts.conversations).toBe(0);
  });
});
