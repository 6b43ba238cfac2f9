/**
 * Contact search through the FTS5 trigram index (drizzle/0002_contact_search_index.sql): every
 * writer keeps the index in step, so a search made right after a write (including one repeated
 * from before the write, which the ContactService cache could otherwise answer) sees it; short
 * terms still match through the plain scan; the index only pre-filters (exact semantics kept).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, formBody, type TestServer, withServer } from "../helpers/server";
import { insertContact, nextPhone } from "../helpers/contact-fixtures";
import { INDEX_CHUNK_ROWS, PendingSearchIndex, searchIndexDifferences } from "../../src/db/stores/contacts/search-pending";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const db = () => s.running.deps.sqlite;

/**
 * New contacts wait in contacts_fts_pending until the applier Worker indexes them (migration
 * 0023): with `indexFirst` every search first indexes them all, so the same tests run once
 * against the index and once (mostly) against pending contacts.
 */
let indexFirst = false;
function beforeSearch(t: TestServer) {
  if (indexFirst) new PendingSearchIndex(t.running.deps.sqlite).indexChunk(Number.MAX_SAFE_INTEGER);
}

async function search(q: string, t: TestServer = s): Promise<string[]> {
  beforeSearch(t);
  const body = await expectStatus(await t.api(`/contacts?search=${encodeURIComponent(q)}&limit=100`), 200);
  expect(body.data.pagination.total).toBe(body.data.contacts.length);
  return body.data.contacts.map((c: any) => c.id);
}

async function byCustom(customFields: Record<string, string>, t: TestServer = s): Promise<string[]> {
  beforeSearch(t);
  const body = await expectStatus(await t.api("/contacts/search", { method: "POST", json: { customFields, limit: 100 } }), 200);
  expect(body.data.pagination.total).toBe(body.data.contacts.length);
  return body.data.contacts.map((c: any) => c.id);
}

/** The index and the pending contacts hold exactly what the contacts table says (doctor's check). */
function expectIndexInStep(t: TestServer = s) {
  expect(searchIndexDifferences(t.running.deps.sqlite)).toEqual([]);
}

for (const mode of ["searched while pending", "searched once indexed"]) describe(`every writer keeps the search index in step (${mode})`, () => {
  beforeAll(() => {
    indexFirst = mode === "searched once indexed";
    // The same names again: start from no contacts (the delete triggers keep index and pending in step).
    db().run("DELETE FROM contacts");
  });
  afterAll(() => {
    indexFirst = false;
  });

  test("POST, PUT and DELETE /contacts: found, renamed, gone — at once, even for a search repeated from before", async () => {
    expect(await search("quillondra")).toEqual([]);
    expect(await byCustom({ guild: "Weavers of Ath" })).toEqual([]);
    const created = await expectStatus(
      await s.api("/contacts", { method: "POST", json: { phoneNumber: nextPhone(), firstName: "Quillondra", lastName: "Vance", email: "q.vance@fts.example", customFields: { guild: "Weavers of Ath" } } }),
      201,
    );
    const id = created.data.contact.id;
    expect(await search("quillondra")).toEqual([id]);
    expect(await search("QUILLONDRA vance")).toEqual([id]);
    expect(await search("vance@fts")).toEqual([id]);
    expect(await byCustom({ guild: "Weavers of Ath" })).toEqual([id]);

    await expectStatus(await s.api(`/contacts/${id}`, { method: "PUT", json: { firstName: "Morwenna", email: "m.vance@fts.example", customFields: { guild: "Smiths of Ath" } } }), 200);
    expect(await search("quillondra")).toEqual([]);
    expect(await search("q.vance@fts")).toEqual([]);
    expect(await search("morwenna vance")).toEqual([id]);
    expect(await search("m.vance@fts")).toEqual([id]);
    expect(await byCustom({ guild: "Weavers of Ath" })).toEqual([]);
    expect(await byCustom({ guild: "Smiths of Ath" })).toEqual([id]);
    expectIndexInStep();

    await expectStatus(await s.api(`/contacts/${id}`, { method: "DELETE" }), 200);
    expect(await search("morwenna")).toEqual([]);
    expect(await byCustom({ guild: "Smiths of Ath" })).toEqual([]);
    expectIndexInStep();
  });

  test("PUT /contacts/bulk: merged custom fields are searchable at once, replaced values no longer match", async () => {
    const a = insertContact(db(), s.accountId, { firstName: "Bulkara", customFields: { wave: "first wave" } });
    const b = insertContact(db(), s.accountId, { firstName: "Bulkaro", customFields: { wave: "first wave" } });
    expect(await byCustom({ wave: "first wave" })).toEqual([b, a]);
    expect(await byCustom({ wave: "second wave" })).toEqual([]);
    await expectStatus(await s.api("/contacts/bulk", { method: "PUT", json: { contactIds: [a, b], updates: { customFields: { wave: "second wave", extra: "yes" } } } }), 200);
    expect(await byCustom({ wave: "first wave" })).toEqual([]);
    expect(await byCustom({ wave: "second wave" })).toEqual([b, a]);
    expect(await byCustom({ wave: "second wave", extra: "yes" })).toEqual([b, a]);
    expect(await search("bulkar")).toEqual([b, a]);
    expectIndexInStep();
  });

  test("POST /contacts/import: created and updated rows are found by their new text, not their old", async () => {
    const phone = nextPhone();
    const existing = (await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: phone, firstName: "Oldimporta", customFields: { region: "north sea" } } }), 201)).data
      .contact.id;
    expect(await search("oldimporta")).toEqual([existing]);
    expect(await search("newimporta")).toEqual([]);
    const csv = ["phoneNumber,firstName,lastName,customFields.region", `${phone},Newimporta,Updated,south sea`, `${nextPhone()},Freshimporta,Created,south sea`].join("\n");
    const body = await expectStatus(await s.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
    expect(body.data).toMatchObject({ created: 1, updated: 1 });
    expect(await search("oldimporta")).toEqual([]);
    expect(await search("newimporta updated")).toEqual([existing]);
    const fresh = await search("freshimporta");
    expect(fresh.length).toBe(1);
    expect(await search("importa")).toEqual(expect.arrayContaining([existing, fresh[0]]));
    expect(await byCustom({ region: "north sea" })).toEqual([]);
    expect((await byCustom({ region: "south sea" })).sort()).toEqual([existing, fresh[0]].sort());
    expectIndexInStep();
  });

  test("the webhook: a new contact is found at once; a later submission's new name and custom field replace the old", async () => {
    const form = (await expectStatus(await s.api("/forms", { method: "POST", json: formBody() }), 201)).data.form;
    const phone = nextPhone();
    const post = (json: unknown) => fetch(`${s.base}/forms/${form.id}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
    expect(await search("hookella")).toEqual([]);
    expect(await byCustom({ company: "Hooks & Co" })).toEqual([]);
    await expectStatus(await post({ phoneNumber: phone, firstName: "Hookella", company: "Hooks & Co" }), 200);
    const found = await search("hookella");
    expect(found.length).toBe(1);
    expect(await search(phone.slice(-7))).toEqual(found);
    expect(await byCustom({ company: "Hooks & Co" })).toEqual(found);

    await expectStatus(await post({ phoneNumber: phone, firstName: "Webhookina", company: "Lines Ltd" }), 200);
    expect(await search("hookella")).toEqual([]);
    expect(await search("webhookina")).toEqual(found);
    expect(await byCustom({ company: "Hooks & Co" })).toEqual([]);
    expect(await byCustom({ company: "Lines Ltd" })).toEqual(found);
    expectIndexInStep();
  });
});

describe("matching stays exactly what the plain substring test gives", () => {
  test("1- and 2-character terms (text and digits) still match, through the scan", async () => {
    await withServer(async (t) => {
      const d = t.running.deps.sqlite;
      const a = insertContact(d, t.accountId, { firstName: "Xu", lastName: "Qi", phoneNumber: "+12015550170" });
      const b = insertContact(d, t.accountId, { firstName: "Ana", lastName: "Xo", phoneNumber: "+12015550181" });
      expect(await search("xu", t)).toEqual([a]);
      expect(await search("X", t)).toEqual([b, a]);
      expect(await search("q", t)).toEqual([a]);
      expect(await search("xo", t)).toEqual([b]);
      expect(await search("zz", t)).toEqual([]);
      expect(await search("81", t)).toEqual([b]);
      expect(await search("7", t)).toEqual([a]);
      // Three characters and more go through the index: same answers.
      expect(await search("xu qi", t)).toEqual([a]);
      expect(await search("ana", t)).toEqual([b]);
      expect(await search("0181", t)).toEqual([b]);
    });
  });

  test("the index folds case and letters like ſ → s, the exact test does not: no extra matches", async () => {
    await withServer(async (t) => {
      const d = t.running.deps.sqlite;
      const sam = insertContact(d, t.accountId, { firstName: "Samuel", lastName: "ſtorm" });
      const gold = insertContact(d, t.accountId, { customFields: { plan: "gold" } });
      insertContact(d, t.accountId, { customFields: { plan: "GOLD" } });
      insertContact(d, t.accountId, { customFields: { plan: "gold plus" } });
      insertContact(d, t.accountId, { customFields: { other: "gold" } });
      // The index folds "ſ" (already lower case, so kept in search_text) to "s"; the exact test does not.
      expect(await search("ſamuel", t)).toEqual([]);
      expect(await search("samuel", t)).toEqual([sam]);
      expect(await search("storm", t)).toEqual([]);
      expect(await search("ſtorm", t)).toEqual([sam]);
      expect(await byCustom({ plan: "gold" }, t)).toEqual([gold]);
      expect(await byCustom({ plan: "GOLD" }, t)).not.toContain(gold);
      expect((await byCustom({ plan: "GOLD" }, t)).length).toBe(1);
      expect(await byCustom({ plan: "gol" }, t)).toEqual([]);
    });
  });

  test("FTS5 query syntax in a term is plain text: quotes, operators, stars and brackets", async () => {
    await withServer(async (t) => {
      const d = t.running.deps.sqlite;
      const odd = insertContact(d, t.accountId, { firstName: 'Jo"hn*', lastName: "(NEAR) OR x", customFields: { note: 'say "hi" AND (bye)*' } });
      insertContact(d, t.accountId, { firstName: "John", lastName: "Near" });
      expect(await search('jo"hn*', t)).toEqual([odd]);
      expect(await search('"', t)).toEqual([odd]);
      expect(await search("(near) or", t)).toEqual([odd]);
      expect(await search("john OR near", t)).toEqual([]);
      expect(await search("near*", t)).toEqual([]);
      expect(await search("NEAR(a b)", t)).toEqual([]);
      expect(await search("a\u0001b", t)).toEqual([]);
      expect(await byCustom({ note: 'say "hi" AND (bye)*' }, t)).toEqual([odd]);
      expect(await byCustom({ note: 'say "hi"' }, t)).toEqual([]);
      expect(await byCustom({ note: "" }, t)).toEqual([]);
    });
  });

  test("a search across the name/e-mail boundary matches nothing, as before", async () => {
    await withServer(async (t) => {
      const d = t.running.deps.sqlite;
      insertContact(d, t.accountId, { firstName: "Bob", lastName: "Stone", email: "bob@stone.example" });
      expect(await search("stonebob", t)).toEqual([]);
      expect(await search("stone bob", t)).toEqual([]);
      expect((await search("bob stone", t)).length).toBe(1);
    });
  });
});

describe("a filter matching more rows than the page cache keeps", () => {
  test("pages read again after the first are the same rows, in the same order (exact tests off the sort index)", async () => {
    await withServer(async (t) => {
      const d = t.running.deps.sqlite;
      const n = 21_000; // over CACHE_MAX_IDS (20,000) for both filters below
      const ins = d.prepare(
        "INSERT INTO contacts (id, account_id, phone_number, first_name, custom_fields, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      );
      const ids: string[] = [];
      d.transaction(() => {
        for (let i = 0; i < n; i++) {
          const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
          const phone = `+1201${String(2_000_000 + i).padStart(7, "0")}`;
          const created = new Date(Date.parse("2026-01-01T00:00:00.000Z") + i * 1000).toISOString();
          const plan = i % 50 === 0 ? "silver" : "gold";
          ins.run(id, t.accountId, phone, "Common", JSON.stringify({ plan }), `common\u0001\u0001common\u0001\u0001${phone.slice(1)}`, created, created);
          if (plan === "gold") ids.push(id);
        }
      })();
      ids.reverse(); // newest first
      expect(ids.length).toBeGreaterThan(20_000);
      const page = async (p: number) => {
        const body = await expectStatus(await t.api("/contacts/search", { method: "POST", json: { customFields: { plan: "gold" }, limit: 100, page: p } }), 200);
        expect(body.data.pagination.total).toBe(ids.length);
        return body.data.contacts.map((c: any) => c.id);
      };
      for (let round = 0; round < 2; round++) {
        expect(await page(1)).toEqual(ids.slice(0, 100));
        expect(await page(50)).toEqual(ids.slice(4900, 5000));
        expect(await page(Math.ceil(ids.length / 100))).toEqual(ids.slice(Math.floor(ids.length / 100) * 100));
      }
      const text = async (p: number) => (await expectStatus(await t.api(`/contacts?search=common&limit=100&page=${p}`), 200)).data;
      for (let round = 0; round < 2; round++) {
        const first = await text(1);
        expect(first.pagination.total).toBe(n);
        expect(first.contacts[0].id).toBe(`00000000-0000-4000-8000-${String(n - 1).padStart(12, "0")}`);
        const idAt = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
        expect((await text(201)).contacts.map((c: any) => c.id)).toEqual(Array.from({ length: 100 }, (_, k) => idAt(n - 1 - 20_000 - k)));
        expect((await text(210)).contacts.map((c: any) => c.id)).toEqual(Array.from({ length: 100 }, (_, k) => idAt(n - 1 - 20_900 - k)));
      }
    });
  });
});

describe("the applier Worker indexes new contacts off the write path", () => {
  test("contacts created through the API leave the pending table by themselves in whole chunks; the rest waits, and searches answer the same throughout", async () => {
    const pending = () => new PendingSearchIndex(db()).pendingCount();
    const before = pending();
    const n = 2 * INDEX_CHUNK_ROWS + 76;
    const csv = ["phoneNumber,firstName", ...Array.from({ length: n }, (_, i) => `${nextPhone()},Backgroundia${i}`)].join("\n");
    const body = await expectStatus(await s.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
    expect(body.data).toMatchObject({ created: n });
    const whilePending = await search("backgroundia59");
    expect(whilePending.length).toBe(11); // 59, 590-599
    // Two whole chunks are indexed once the server is quiet; the last 76 (and any before) wait
    // for a chunk to fill or for minutes (docs/api-decisions.md, "Disk bytes, round four").
    const until = Date.now() + 10_000;
    while (pending() > before + 76 && Date.now() < until) await Bun.sleep(50);
    expect(pending()).toBe(before + 76);
    await Bun.sleep(600);
    expect(pending()).toBe(before + 76);
    expect(await search("backgroundia59")).toEqual(whilePending);
    expectIndexInStep();
  });
});
