import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Papa from "papaparse";
import ExcelJS from "exceljs";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact, insertForm } from "../helpers/contact-fixtures";
import { BASE_COLUMNS } from "../../src/domain/contact-export";
import { newApiKey } from "../helpers/reads";
import { newAccount } from "../helpers/accounts";

let s: TestServer;
let standardKey: string;
let formId: string;
let ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer();
  standardKey = await newApiKey(s, "standard_access");
  // arrange: contacts with set creation times, statuses and texts counted (the API stamps the clock)
  const d = s.running.deps.sqlite;
  formId = insertForm(d, s.accountId, "Landing page");
  ids.ann = insertContact(d, s.accountId, {
    firstName: "Ann",
    lastName: "O'Neil, Jr.",
    email: "ann@example.com",
    phoneNumber: "+12015550111",
    status: "converted",
    tags: ["vip", "lead"],
    customFields: { company: "Acme \"Rockets\"", note: "line1\nline2" },
    formId,
    source: "fair",
    notes: "likes email",
    lastResponseAt: "2026-01-02T00:00:00.000Z",
    createdAt: "2026-01-01T00:00:00.000Z",
  });
  ids.evil = insertContact(d, s.accountId, {
    firstName: "=HYPERLINK(\"http://x\")",
    lastName: "+SUM(A1)",
    email: null,
    phoneNumber: "+12015550112",
    tags: ["@risk"],
    customFields: { a: "-1+2", b: "\tTAB", c: "\rCR", d: "'=already", e: "+12015550199", f: "plain" },
    notes: "@cmd",
    createdAt: "2026-01-02T00:00:00.000Z",
  });
  ids.bob = insertContact(d, s.accountId, { firstName: "Bob", phoneNumber: "+12015550113", status: "new", tags: ["lead"], customFields: { company: "Beta" }, createdAt: "2026-01-03T00:00:00.000Z" });
  // Another account's contacts never leak into an export.
  insertContact(d, newAccount(s, { name: "O" }).account.id, { firstName: "Other" });
});
afterAll(() => s.stop());

async function exportText(q: string, key?: string) {
  const res = await s.api(`/contacts/export${q}`, { key });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status}: ${text}`);
  return { res, text };
}

describe("GET /contacts/export", () => {
  test("json (default): an array of full contacts, oldest first, download headers", async () => {
    const { res, text } = await exportText("");
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=contacts-\d{4}-\d{2}-\d{2}\.json$/);
    const arr = JSON.parse(text);
    expect(arr.map((c: any) => c.id)).toEqual([ids.ann, ids.evil, ids.bob]);
    expect(arr[0]).toMatchObject({ firstName: "Ann", formName: "Landing page", tags: ["vip", "lead"], customFields: { company: 'Acme "Rockets"' } });
    // JSON is not a spreadsheet: values come out exactly as stored.
    expect(arr[1].firstName).toBe('=HYPERLINK("http://x")');
  });

  test("json with filters and a field selection", async () => {
    const { text } = await exportText("?format=json&status=new&tags=lead&fields=phoneNumber,firstName,customFields.company");
    expect(JSON.parse(text)).toEqual([{ phoneNumber: "+12015550113", firstName: "Bob", customFields: { company: "Beta" } }]);
    const empty = await exportText("?format=json&status=responded");
    expect(JSON.parse(empty.text)).toEqual([]);
  });

  test("csv: header row, tags joined with ;, one column per custom field, parsed back with papaparse", async () => {
    const { res, text } = await exportText("?format=csv");
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(res.headers.get("content-disposition")).toMatch(/filename=contacts-\d{4}-\d{2}-\d{2}\.csv$/);
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    expect(parsed.meta.fields).toEqual([...BASE_COLUMNS, "customFields.a", "customFields.b", "customFields.c", "customFields.company", "customFields.d", "customFields.e", "customFields.f", "customFields.note"]);
    const ann = parsed.data[0];
    expect(ann).toMatchObject({ id: ids.ann, firstName: "Ann", lastName: "O'Neil, Jr.", phoneNumber: "+12015550111", tags: "vip;lead", formName: "Landing page", "customFields.company": 'Acme "Rockets"', "customFields.note": "line1\nline2", messageCount: "0", "customFields.a": "" });
  });

  test("csv field selection picks and orders columns; filters apply", async () => {
    const { text } = await exportText("?format=csv&fields=phoneNumber,customFields.company,firstName&tags=lead");
    const rows = Papa.parse<string[]>(text, { skipEmptyLines: true }).data;
    expect(rows).toEqual([
      ["phoneNumber", "customFields.company", "firstName"],
      ["+12015550111", 'Acme "Rockets"', "Ann"],
      ["+12015550113", "Beta", "Bob"],
    ]);
    const some = Papa.parse<string[]>((await exportText("?format=csv&fields=firstName,customFields&status=new")).text, { skipEmptyLines: true }).data;
    expect(some[0]).toEqual(["firstName", "customFields.a", "customFields.b", "customFields.c", "customFields.company", "customFields.d", "customFields.e", "customFields.f"]);
    expect(some.length).toBe(3);
  });

  test("formula injection: = + - @ tab CR cells get a leading quote; E.164 phones and plain text do not", async () => {
    const { text } = await exportText("?format=csv&status=new&fields=phoneNumber,firstName,lastName,tags,notes,customFields");
    const row = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data.find((r) => r.phoneNumber === "+12015550112")!;
    expect(row.phoneNumber).toBe("+12015550112");
    expect(row.firstName).toBe("'=HYPERLINK(\"http://x\")");
    expect(row.lastName).toBe("'+SUM(A1)");
    expect(row.tags).toBe("'@risk");
    expect(row.notes).toBe("'@cmd");
    expect(row["customFields.a"]).toBe("'-1+2");
    expect(row["customFields.b"]).toBe("'\tTAB");
    expect(row["customFields.c"]).toBe("'\rCR");
    expect(row["customFields.d"]).toBe("''=already");
    expect(row["customFields.e"]).toBe("+12015550199");
    expect(row["customFields.f"]).toBe("plain");
  });

  test("xlsx: read back with exceljs; same columns, selection, filters and neutralisation", async () => {
    const res = await s.api("/contacts/export?format=xlsx&fields=firstName,phoneNumber,tags,messageCount,customFields.a,customFields.e&tags=vip");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    expect(res.headers.get("content-disposition")).toMatch(/filename=contacts-\d{4}-\d{2}-\d{2}\.xlsx$/);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(await res.arrayBuffer());
    const ws = wb.worksheets[0];
    const rows: unknown[][] = [];
    ws.eachRow((r) => rows.push((r.values as unknown[]).slice(1)));
    expect(rows).toEqual([
      ["firstName", "phoneNumber", "tags", "messageCount", "customFields.a", "customFields.e"],
      ["Ann", "+12015550111", "vip;lead", 0, undefined, undefined],
    ]);
    const all = await s.api("/contacts/export?format=xlsx&status=new&fields=phoneNumber,firstName,customFields.a,customFields.e");
    const wb2 = new ExcelJS.Workbook();
    await wb2.xlsx.load(await all.arrayBuffer());
    const evil = wb2.worksheets[0].getRow(2).values as unknown[];
    expect(evil.slice(1)).toEqual(["+12015550112", "'=HYPERLINK(\"http://x\")", "'-1+2", "+12015550199"]);
    expect(wb2.worksheets[0].rowCount).toBe(3);
  });

  test("bad parameters are 400 naming the parameter and the allowed values", async () => {
    const cases: Array<[string, string, string]> = [
      ["?format=pdf", "format", "json, csv, xlsx"],
      ["?status=won", "status", "new, contacted, responded, converted"],
      ["?fields=firstName,phone", "fields", "phoneNumber"],
      ["?fields=,", "fields", "at least one"],
      ["?bogus=1", "bogus", "format"],
    ];
    for (const [q, field, allowed] of cases) {
      const body = await expectStatus(await s.api(`/contacts/export${q}`), 400);
      expect(body.code).toBe("VALIDATION_ERROR");
      expect(body.details.field).toBe(field);
      expect(body.errors[0].message).toContain(allowed);
    }
  });

  test("a client that stops reading part-way leaves the server healthy", async () => {
    const t = await startTestServer();
    try {
      // arrange: 3,000 contacts at once (3,000 requests through the API)
      const db = t.running.deps.sqlite;
      db.transaction(() => {
        for (let i = 0; i < 3000; i++) insertContact(db, t.accountId, { firstName: `N${i}`, phoneNumber: `+1201556${String(i).padStart(4, "0")}` });
      })();
      for (const format of ["csv", "json", "xlsx"]) {
        const res = await t.api(`/contacts/export?format=${format}`);
        const reader = res.body!.getReader();
        await reader.read();
        await reader.cancel();
      }
      await expectStatus(await t.api("/contacts", { method: "POST", json: { phoneNumber: "+12015570001" } }), 201);
      const csv = await (await t.api("/contacts/export?format=csv&fields=phoneNumber")).text();
      expect(csv.trim().split("\r\n").length).toBe(3002);
    } finally {
      await t.stop();
    }
  });
});

describe("POST /contacts/import", () => {
  test("an export re-imported into an empty account reproduces the contacts", async () => {
    const { text } = await exportText("?format=csv");
    const t = await startTestServer();
    try {
      const body = await expectStatus(await t.api("/contacts/import", { method: "POST", body: text, headers: { "Content-Type": "text/csv" } }), 200);
      expect(body.data).toEqual({ created: 3, updated: 0, errors: [] });
      const before = JSON.parse((await exportText("?format=json")).text);
      const after = JSON.parse(await (await t.api("/contacts/export?format=json")).text());
      const strip = (c: any) => {
        const { id: _i, updatedAt: _u, formId: _f, formName: _n, ...rest } = c;
        return rest;
      };
      expect(after.map(strip)).toEqual(before.map(strip));
      // The form does not exist in the new account: the link is dropped, not invented.
      expect(after[0].formId).toBeNull();
      // Importing the same file again updates the same contacts.
      const again = await expectStatus(await t.api("/contacts/import", { method: "POST", body: text, headers: { "Content-Type": "text/csv" } }), 200);
      expect(again.data).toEqual({ created: 0, updated: 3, errors: [] });
      const third = JSON.parse(await (await t.api("/contacts/export?format=json")).text());
      expect(third.map(strip)).toEqual(before.map(strip));
    } finally {
      await t.stop();
    }
  });

  test("row errors name the row (header = row 1) and field; good rows still land; upsert by phone", async () => {
    const t = await startTestServer();
    try {
      await expectStatus(await t.api("/contacts", { method: "POST", json: { phoneNumber: "+12015550301", firstName: "Before", customFields: { keep: "k", gone: "g" }, tags: ["old"] } }), 201);
      const csv = [
        "phoneNumber,firstName,status,tags,email,customFields.gone,customFields.plan,createdAt",
        "(201) 555-0301,After,responded,a;b,,,gold,",
        "not a phone,X,,,,,,",
        "+12015550302,Y,lost,,,,,",
        "+12015550303,Z,,,bad-email,,,",
        "+12015550304,W,,,,,,yesterday",
        "+12015550305,Short",
        "+12015550306,New,,vip,new@example.com,,silver,2025-05-05T05:05:05.000Z",
      ].join("\n");
      const body = await expectStatus(await t.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv; charset=utf-8" } }), 200);
      expect(body.data.created).toBe(1);
      expect(body.data.updated).toBe(1);
      expect(body.data.errors.map((e: any) => [e.row, e.field])).toEqual([
        [3, "phoneNumber"],
        [4, "status"],
        [5, "email"],
        [6, "createdAt"],
        [7, "row"],
      ]);
      const list = (await expectStatus(await t.api("/contacts?sortBy=firstName&order=asc"), 200)).data.contacts;
      expect(list.map((c: any) => c.firstName)).toEqual(["After", "New"]);
      const after = (await expectStatus(await t.api(`/contacts/${list[0].id}`), 200)).data.contact;
      expect(after).toMatchObject({ status: "responded", tags: ["a", "b"], customFields: { keep: "k", plan: "gold" } });
      const created = (await expectStatus(await t.api(`/contacts/${list[1].id}`), 200)).data.contact;
      expect(created).toMatchObject({ createdAt: "2025-05-05T05:05:05.000Z", tags: ["vip"], email: "new@example.com", status: "new" });
      expect((await expectStatus(await t.api("/contacts?tags=vip"), 200)).data.contacts.length).toBe(1);
    } finally {
      await t.stop();
    }
  });

  test("a file larger than one parse slice (512 KiB) imports every row, including rows cut at a slice edge", async () => {
    const src = await startTestServer();
    const dst = await startTestServer();
    try {
      // arrange: 4,000 contacts at once (4,000 requests through the API)
      const db = src.running.deps.sqlite;
      db.transaction(() => {
        for (let i = 0; i < 4000; i++) {
          insertContact(db, src.accountId, {
            firstName: `Name${i}`,
            phoneNumber: `+1201557${String(i).padStart(4, "0")}`,
            tags: ["t1", "t2"],
            customFields: { bio: `line one, "quoted"\nline two ${i} `.repeat(2), n: String(i) },
          });
        }
      })();
      const csv = await (await src.api("/contacts/export?format=csv")).text();
      expect(csv.length).toBeGreaterThan(600_000);
      const body = await expectStatus(await dst.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
      expect(body.data).toEqual({ created: 4000, updated: 0, errors: [] });
      const a = JSON.parse(await (await src.api("/contacts/export?format=json&fields=phoneNumber,firstName,tags,customFields")).text());
      const b = JSON.parse(await (await dst.api("/contacts/export?format=json&fields=phoneNumber,firstName,tags,customFields")).text());
      expect(b).toEqual(a);
    } finally {
      await src.stop();
      await dst.stop();
    }
  }, 20_000); // the import yields every ~10 ms: on a busy shared machine 4,000 rows can pass 5 s

  test("a row with malformed CSV (an unterminated quote) is refused, not guessed at", async () => {
    const t = await startTestServer();
    try {
      const csv = 'phoneNumber,firstName\n+12015550601,Good\n+12015550602,"unterminated\n';
      const body = await expectStatus(await t.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
      expect(body.data.created).toBe(1);
      expect(body.data.errors).toEqual([{ row: 3, field: "row", message: expect.stringContaining("malformed CSV") }]);
    } finally {
      await t.stop();
    }
  });

  test("whole-file problems: empty body, no phoneNumber column, unknown columns, wrong content type", async () => {
    const post = (body: string, type = "text/csv") => s.api("/contacts/import", { method: "POST", body, headers: { "Content-Type": type } });
    expect((await expectStatus(await post(""), 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await post("firstName\nAnn\n"), 400)).errors.map((e: any) => e.field)).toContain("phoneNumber");
    expect((await expectStatus(await post("phoneNumber,Phone\n+12015550400,x\n"), 400)).errors.map((e: any) => e.field)).toContain("Phone");
    expect((await expectStatus(await post("phoneNumber,phoneNumber\n+12015550400,x\n"), 400)).code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await post('{"a":1}', "application/json"), 415)).code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("a standard key is refused with 403 and nothing is imported", async () => {
    const res = await s.api("/contacts/import", { method: "POST", key: standardKey, body: "phoneNumber\n+12015550500\n", headers: { "Content-Type": "text/csv" } });
    expect((await expectStatus(res, 403)).code).toBe("PERMISSION_ERROR");
    expect((await expectStatus(await s.api("/contacts?search=2015550500"), 200)).data.contacts).toEqual([]);
  });
});
