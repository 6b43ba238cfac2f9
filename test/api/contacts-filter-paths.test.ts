/**
 * GET /contacts picks a query shape per filter (phone-digit search read once and paged
 * from the kept rowids; several common tags counted by merging their lists; a rare tag driving
 * probes). Whatever the shape, totals and pages must be exactly what a plain filter of every
 * contact gives: checked here against a reference computed in the test, on one data set with
 * common tags, a rare tag and phone numbers written in several formats.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact } from "../helpers/contact-fixtures";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
/** An account with limits high enough for the many page reads below. */
let key: string;
let accountId: string;
interface Ref {
  id: string;
  phone: string;
  status: string;
  tags: string[];
  createdAt: string;
}
const contacts: Ref[] = [];
const STATUSES = ["new", "contacted", "responded", "converted"] as const;

beforeAll(async () => {
  s = await startTestServer();
  const big = newAccount(s, { name: "Filters", plan: "enterprise", apiLimitPerHour: 1_000_000, apiBurstPerMinute: 1_000_000 });
  key = big.apiKey;
  accountId = big.account.id;
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n);
  };
  const base = Date.parse("2026-01-01T00:00:00Z");
  // 240 contacts: tags a/b/c are common (each on about half), "rare" is on one contact only
  // (under 1% of the account), so both tag strategies run.
  for (let i = 0; i < 240; i++) {
    const tags = ["a", "b", "c"].filter(() => rnd(2) === 0);
    if (i === 117) tags.push("rare");
    const status = STATUSES[rnd(4)];
    const phone = `+1${["201", "415", "646"][i % 3]}555${String(1000 + i * 37).slice(-4)}`;
    const createdAt = new Date(base + i * 3_600_000).toISOString();
    // Digits in an e-mail are in the searched text too, but a digit search is about the phone.
    const email = i % 10 === 0 ? `fan98765${i}@example.com` : null;
    const id = insertContact(s.running.deps.sqlite, accountId, { phoneNumber: phone, email, status, tags, createdAt }); // arrange: contacts created on set days (the API stamps the clock)
    contacts.push({ id, phone, status, tags, createdAt });
  }
});
afterAll(() => s.stop());

/** Every page of a query, limit 7: the ids in order, and the total every page reported. */
async function allPages(query: string): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  for (let page = 1; page < 100; page++) {
    const body = await expectStatus(await s.api(`/contacts?${query}&limit=7&page=${page}`, { key }), 200);
    totals.push(body.data.pagination.total);
    if (body.data.contacts.length === 0) break;
    ids.push(...body.data.contacts.map((c: { id: string }) => c.id));
  }
  return { ids, totals };
}

/** The reference: filter every contact, newest first (createdAt is distinct per contact). */
function expected(keep: (c: Ref) => boolean): string[] {
  return contacts
    .filter(keep)
    .sort((x, y) => (x.createdAt < y.createdAt ? 1 : -1))
    .map((c) => c.id);
}

async function expectSame(query: string, keep: (c: Ref) => boolean) {
  const want = expected(keep);
  const got = await allPages(query);
  expect({ query, ids: got.ids }).toEqual({ query, ids: want });
  expect(new Set(got.totals)).toEqual(new Set([want.length]));
}

describe("phone-digit search: same contacts whatever the format, every page", () => {
  for (const q of ["(201) 555", "201-555-1", "555 1", "+1 646 555", "646.555.2", "1415555", "55510", "2015551000", "9", "0000", "98765", "(987) 65"]) {
    test(`search=${q}`, async () => {
      const digits = q.replace(/\D/g, "");
      await expectSame(`search=${encodeURIComponent(q)}`, (c) => c.phone.includes(digits));
    });
  }
  test("with a status and tags", async () => {
    await expectSame(`search=${encodeURIComponent("(415) 555")}&status=new&tags=a`, (c) => c.phone.includes("415555") && c.status === "new" && c.tags.includes("a"));
  });
});

describe("tag filters: common tags merged, a rare one probed, with status and date", () => {
  const after = "2026-01-04T00:00:00.000Z";
  const cases: [string, (c: Ref) => boolean][] = [
    ["tags=a", (c) => c.tags.includes("a")],
    ["tags=a,b", (c) => c.tags.includes("a") && c.tags.includes("b")],
    ["tags=a,b,c", (c) => ["a", "b", "c"].every((t) => c.tags.includes(t))],
    ["tags=c,a&status=new", (c) => c.tags.includes("a") && c.tags.includes("c") && c.status === "new"],
    [`tags=b,c&status=converted&createdAfter=${after}`, (c) => c.tags.includes("b") && c.tags.includes("c") && c.status === "converted" && c.createdAt >= after],
    ["tags=rare,a", (c) => c.tags.includes("rare") && c.tags.includes("a")],
    ["tags=a,rare&status=" + "responded", (c) => c.tags.includes("rare") && c.tags.includes("a") && c.status === "responded"],
    ["tags=a,nobody", () => false],
    ["tags=nobody&status=new", () => false],
    // One common tag, or several, with a status: counted as a set of rowids over the status index.
    ["tags=a&status=new", (c) => c.tags.includes("a") && c.status === "new"],
    ["tags=b,a,c&status=responded", (c) => ["a", "b", "c"].every((t) => c.tags.includes(t)) && c.status === "responded"],
    ["tags=a,a&status=contacted", (c) => c.tags.includes("a") && c.status === "contacted"],
    [`tags=c&status=converted&createdBefore=${after}`, (c) => c.tags.includes("c") && c.status === "converted" && c.createdAt < after],
    ["tags=rare&status=" + "new", (c) => c.tags.includes("rare") && c.status === "new"],
    ["status=new", (c) => c.status === "new"],
    ["tags=a,b&sortBy=createdAt&order=desc", (c) => c.tags.includes("a") && c.tags.includes("b")],
  ];
  for (const [q, keep] of cases) test(q, async () => expectSame(q, keep));

  test("a tag added after a count is seen at once (the count cache follows writes)", async () => {
    const before = (await allPages("tags=a,b,c&status=contacted")).ids.length;
    const target = contacts.find((c) => c.status === "contacted" && !(["a", "b", "c"].every((t) => c.tags.includes(t))))!;
    await expectStatus(await s.api(`/contacts/${target.id}`, { method: "PUT", json: { tags: ["a", "b", "c"] }, key }), 200);
    target.tags = ["a", "b", "c"];
    await expectSame("tags=a,b,c&status=contacted", (c) => ["a", "b", "c"].every((t) => c.tags.includes(t)) && c.status === "contacted");
    expect((await allPages("tags=a,b,c&status=contacted")).ids.length).toBe(before + 1);
  });

  test("status changes (alone, with new tags, by a sent text) are seen at once by every tag + status plan", async () => {
    // Tags with a status are counted from contact_tags, which carries each contact's status
    // (migration 0025): warm the counts first, so a stale row would show.
    const queries: [string, (c: Ref) => boolean][] = [
      ["tags=a&status=converted", (c) => c.tags.includes("a") && c.status === "converted"],
      ["tags=a,b&status=converted", (c) => c.tags.includes("a") && c.tags.includes("b") && c.status === "converted"],
      ["tags=rare&status=converted", (c) => c.tags.includes("rare") && c.status === "converted"],
      ["tags=b,a&status=new", (c) => c.tags.includes("a") && c.tags.includes("b") && c.status === "new"],
      ["tags=c&status=contacted&createdAfter=2026-01-03T00:00:00.000Z", (c) => c.tags.includes("c") && c.status === "contacted" && c.createdAt >= "2026-01-03T00:00:00.000Z"],
    ];
    for (const [q, keep] of queries) await expectSame(q, keep);
    const movers = contacts.filter((c) => c.status === "new" && c.tags.includes("a")).slice(0, 3);
    expect(movers.length).toBe(3);
    await expectStatus(await s.api(`/contacts/${movers[0].id}`, { method: "PUT", json: { status: "converted" }, key }), 200);
    movers[0].status = "converted";
    await expectStatus(await s.api(`/contacts/${movers[1].id}`, { method: "PUT", json: { status: "converted", tags: ["a", "b", "rare"] }, key }), 200);
    Object.assign(movers[1], { status: "converted", tags: ["a", "b", "rare"] });
    // A sent text makes a new contact "contacted" (the send path's own UPDATE).
    // arrange: that UPDATE alone, without a phone to send the text
    s.running.deps.sqlite.run("UPDATE contacts SET status = CASE WHEN status = 'new' THEN 'contacted' ELSE status END WHERE id = ?", [movers[2].id]);
    movers[2].status = "contacted";
    for (const [q, keep] of queries) await expectSame(q, keep);
  });
});

describe("tags on 5,000+ contacts (common whatever the account's size): same totals and pages", () => {
  let bigKey: string;
  const refs: Ref[] = [];
  beforeAll(() => {
    const acct = newAccount(s, { name: "Big tags", plan: "enterprise", apiLimitPerHour: 1_000_000, apiBurstPerMinute: 1_000_000 });
    bigKey = acct.apiKey;
    const base = Date.parse("2025-01-01T00:00:00Z");
    // arrange: thousands of contacts created a minute apart, at once (the API stamps the clock, one request each)
    s.running.deps.sqlite.transaction(() => {
      for (let i = 0; i < 5_200; i++) {
        // "all" is on every contact, "half" on every other, "few" on 40: the first two pass the
        // 5,000 mark (counted no further), the last is under it.
        const tags = ["all", ...(i % 2 === 0 ? ["half"] : []), ...(i % 130 === 0 ? ["few"] : [])];
        const status = STATUSES[(i * 7) % 4];
        const createdAt = new Date(base + i * 60_000).toISOString();
        const phone = `+1201${String(2_000_000 + i).padStart(7, "0")}`;
        const id = insertContact(s.running.deps.sqlite, acct.account.id, { phoneNumber: phone, status, tags, createdAt }); // arrange: (one of them)
        refs.push({ id, phone, status, tags, createdAt });
      }
    })();
  });

  const cases: [string, (c: Ref) => boolean][] = [
    ["tags=all", () => true],
    ["tags=half,all", (c) => c.tags.includes("half")],
    ["tags=all&status=new", (c) => c.status === "new"],
    ["tags=all,half&status=converted", (c) => c.tags.includes("half") && c.status === "converted"],
    ["tags=few,all&status=new", (c) => c.tags.includes("few") && c.status === "new"],
    ["tags=half&status=contacted&createdAfter=2025-01-02T00:00:00.000Z", (c) => c.tags.includes("half") && c.status === "contacted" && c.createdAt >= "2025-01-02T00:00:00.000Z"],
  ];
  for (const [q, keep] of cases) {
    test(q, async () => {
      const want = refs
        .filter(keep)
        .sort((x, y) => (x.createdAt < y.createdAt ? 1 : -1))
        .map((c) => c.id);
      const pages = Math.ceil(want.length / 50);
      // The first pages, one in the middle and the last: each the reference's slice, each with its total.
      for (const page of [...new Set([1, 2, Math.max(1, Math.ceil(pages / 2)), Math.max(1, pages)])]) {
        const body = await expectStatus(await s.api(`/contacts?${q}&limit=50&page=${page}`, { key: bigKey }), 200);
        expect({ q, page, total: body.data.pagination.total }).toEqual({ q, page, total: want.length });
        expect({ q, page, ids: body.data.contacts.map((c: { id: string }) => c.id) }).toEqual({ q, page, ids: want.slice((page - 1) * 50, page * 50) });
      }
    });
  }
});
