import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ExcelJS from "exceljs";
import { startTestServer, expectStatus, type TestServer } from "../helpers/server";
import { insertContact } from "../helpers/contact-fixtures";

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const postCsv = (t: TestServer, csv: string) => t.api("/contacts/import", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } });
const upload = (t: TestServer, file: Blob, name: string, field = "file") => {
  const form = new FormData();
  form.append(field, file, name);
  return t.api("/contacts/import", { method: "POST", body: form });
};
const contacts = async (t: TestServer) => JSON.parse(await (await t.api("/contacts/export?format=json")).text()) as any[];

async function workbook(rows: unknown[][]): Promise<Uint8Array> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet("Contacts");
  for (const r of rows) ws.addRow(r);
  wb.addWorksheet("Notes").addRow(["ignored", "sheet"]);
  return new Uint8Array(await wb.xlsx.writeBuffer());
}

describe("header aliases", () => {
  test("a spreadsheet's own column names: Phone Number, First Name, Last Name, E-mail, Tags, in any case and spacing", async () => {
    const t = await startTestServer();
    try {
      const csv = "PHONE NUMBER,first_name,Last-Name,E-mail,Tags,customFields.plan\n(201) 555-0701,Ann,Lee,ann@example.com,vip;new,gold\n";
      const body = await expectStatus(await postCsv(t, csv), 200);
      expect(body.data).toEqual({ created: 1, updated: 0, errors: [] });
      expect((await contacts(t))[0]).toMatchObject({ phoneNumber: "+12015550701", firstName: "Ann", lastName: "Lee", email: "ann@example.com", tags: ["vip", "new"], customFields: { plan: "gold" } });
    } finally {
      await t.stop();
    }
  });

  test("Name is split into first and last name; Mobile and Email Address; a semicolon-separated file", async () => {
    const t = await startTestServer();
    try {
      const body = await expectStatus(await postCsv(t, "Name;Mobile;Email Address\nMary Ann Smith;+12015550702;m@example.com\nCher;+12015550703;\n"), 200);
      expect(body.data.created).toBe(2);
      const list = await contacts(t);
      expect(list.map((c) => [c.firstName, c.lastName, c.phoneNumber])).toEqual([
        ["Mary", "Ann Smith", "+12015550702"],
        ["Cher", null, "+12015550703"],
      ]);
    } finally {
      await t.stop();
    }
  });

  test("no phone column: 400 naming the columns found and the accepted names; nothing imported", async () => {
    const body = await expectStatus(await postCsv(s, "First Name,Email\nAnn,a@example.com\n"), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.errors[0].field).toBe("phoneNumber");
    expect(body.errors[0].message).toContain("First Name, Email");
    expect(body.errors[0].message).toContain("Phone Number");
    const both = await expectStatus(await postCsv(s, "Phone,Name,First Name\n+12015550704,A B,C\n"), 400);
    expect(both.errors.map((e: any) => e.field)).toEqual(["First Name"]);
    expect((await expectStatus(await s.api("/contacts?search=2015550704"), 200)).data.contacts).toEqual([]);
    // (The connection's synchronous setting after an import: test/db/import-synchronous.test.ts.)
  });
});

describe("limits", () => {
  test("a cell over 10 KB refuses its row (never kept); the rows after it import", async () => {
    const t = await startTestServer();
    try {
      const csv = `phoneNumber,notes\n+12015550710,"${"n".repeat(20_000)}"\n+12015550711,fine\n`;
      const body = await expectStatus(await postCsv(t, csv), 200);
      expect(body.data.created).toBe(1);
      expect(body.data.errors).toEqual([{ row: 2, field: "row", message: expect.stringContaining("longer than 10240 characters") }]);
      expect(body.message).toContain("1 rows refused");
    } finally {
      await t.stop();
    }
  });

  test("the error list keeps the first 1,000 problems and counts the rest; good rows still land", async () => {
    const t = await startTestServer();
    try {
      const lines = ["phoneNumber,firstName"];
      for (let i = 0; i < 1500; i++) lines.push(`not a phone ${i},X`);
      lines.push("+12015550720,Good");
      const body = await expectStatus(await postCsv(t, lines.join("\n")), 200);
      expect(body.data.created).toBe(1);
      expect(body.data.errors.length).toBe(1000);
      expect(body.data.errors[0]).toMatchObject({ row: 2, field: "phoneNumber" });
      expect(body.data.errors[999].row).toBe(1001);
      expect(body.data.errorCount).toBe(1500);
      expect(body.data.errorsTruncated).toBe(true);
      expect(body.message).toContain("1500 rows refused");
    } finally {
      await t.stop();
    }
  });

  test("a form upload over the import limit gets 413 and imports nothing", async () => {
    const res = await upload(s, new Blob([new Uint8Array(51 * 1024 * 1024)]), "big.csv");
    expect((await expectStatus(res, 413)).code).toBe("PAYLOAD_TOO_LARGE");
  });
});

describe("XLSX", () => {
  test("an XLSX export imports into an empty account as the same contacts (sent as is and as a form upload)", async () => {
    const src = await startTestServer();
    try {
      // arrange: contacts created on set days with a status (the API stamps the clock)
      const d = src.running.deps.sqlite;
      insertContact(d, src.accountId, { firstName: "Ann", lastName: "=SUM(A1)", phoneNumber: "+12015550730", email: "ann@example.com", status: "converted", tags: ["vip", "lead"], customFields: { company: 'Acme "Rockets"', note: "line1\nline2" }, notes: "-starts with a dash", createdAt: "2026-01-01T00:00:00.000Z" });
      insertContact(d, src.accountId, { firstName: "Bo", phoneNumber: "+12015550731", customFields: { company: "B&B" }, createdAt: "2026-01-02T00:00:00.000Z" });
      const xlsx = new Uint8Array(await (await src.api("/contacts/export?format=xlsx")).arrayBuffer());
      const strip = ({ id: _i, updatedAt: _u, ...rest }: any) => rest;
      const before = (await contacts(src)).map(strip);
      for (const send of ["raw", "form"] as const) {
        const dst = await startTestServer();
        try {
          const res = send === "raw" ? await dst.api("/contacts/import", { method: "POST", body: xlsx, headers: { "Content-Type": XLSX } }) : await upload(dst, new Blob([xlsx], { type: XLSX }), "contacts.xlsx");
          expect((await expectStatus(res, 200)).data).toEqual({ created: 2, updated: 0, errors: [] });
          const after = (await contacts(dst)).map(strip);
          expect(after).toEqual(before.map((c: any) => ({ ...c, formId: null, formName: null })));
        } finally {
          await dst.stop();
        }
      }
    } finally {
      await src.stop();
    }
  });

  test("a hand-made workbook: aliases, a phone typed as a number, empty trailing cells, row numbers as the sheet shows them", async () => {
    const t = await startTestServer();
    try {
      const file = await workbook([["Phone", "First Name", "Last Name", "Tags"], [12015550740, "Ann", "Lee", "a;b"], ["+12015550741", "Bo"], [], ["nope", "C"]]);
      const body = await expectStatus(await t.api("/contacts/import", { method: "POST", body: file, headers: { "Content-Type": XLSX } }), 200);
      expect(body.data.created).toBe(2);
      expect(body.data.errors).toEqual([{ row: 5, field: "phoneNumber", message: expect.any(String) }]);
      const list = await contacts(t);
      expect(list.map((c) => [c.phoneNumber, c.firstName, c.lastName, c.tags])).toEqual([
        ["+12015550740", "Ann", "Lee", ["a", "b"]],
        ["+12015550741", "Bo", null, []],
      ]);
    } finally {
      await t.stop();
    }
  });

  test("a body that is not a workbook: 400, nothing imported", async () => {
    const body = await expectStatus(await s.api("/contacts/import", { method: "POST", body: "phoneNumber\n+12015550750\n", headers: { "Content-Type": XLSX } }), 400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.errors[0].field).toBe("file");
    expect((await expectStatus(await s.api("/contacts?search=2015550750"), 200)).data.contacts).toEqual([]);
  });
});

describe("form uploads (multipart/form-data)", () => {
  test("a CSV file in the file field imports; the format comes from the name even when the type says Excel, else from the type", async () => {
    const t = await startTestServer();
    try {
      const res = await upload(t, new Blob(["Phone,Name\n+12015550760,Ann Lee\n"], { type: "application/vnd.ms-excel" }), "contacts.csv");
      expect((await expectStatus(res, 200)).data).toEqual({ created: 1, updated: 0, errors: [] });
      // No extension: the part's type decides.
      const noExt = await upload(t, new Blob(["Phone\n+12015550761\n"], { type: "text/csv" }), "contacts");
      expect((await expectStatus(noExt, 200)).data.created).toBe(1);
    } finally {
      await t.stop();
    }
  });

  test("unknown format, an old .xls, no file field, an empty file: clear 400s", async () => {
    const pdf = await expectStatus(await upload(s, new Blob(["%PDF-1.4"], { type: "application/pdf" }), "list.pdf"), 400);
    expect(pdf.errors[0]).toMatchObject({ field: "file", message: expect.stringContaining(".csv or .xlsx") });
    const xls = await expectStatus(await upload(s, new Blob(["x"]), "old.xls"), 400);
    expect(xls.errors[0].message).toContain("save the spreadsheet as .xlsx or .csv");
    const wrongField = await expectStatus(await upload(s, new Blob(["Phone\n+12015550762\n"]), "c.csv", "upload"), 400);
    expect(wrongField.errors[0]).toMatchObject({ field: "file", message: expect.stringContaining("upload") });
    const empty = await expectStatus(await upload(s, new Blob([]), "empty.csv"), 400);
    expect(empty.code).toBe("VALIDATION_ERROR");
    expect(empty.errors[0].message).toContain("empty");
    const none = await expectStatus(await upload(s, new Blob([]), ""), 400);
    expect(none.errors[0].message).toContain("no file was chosen");
    const garbage = await expectStatus(await s.api("/contacts/import", { method: "POST", body: "--x\r\nnot a form", headers: { "Content-Type": "multipart/form-data; boundary=zzz" } }), 400);
    expect(garbage.code).toBe("VALIDATION_ERROR");
    expect((await expectStatus(await s.api("/contacts?search=2015550762"), 200)).data.contacts).toEqual([]);
  });

  test("any other Content-Type is still 415, naming what is accepted", async () => {
    const body = await expectStatus(await s.api("/contacts/import", { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } }), 415);
    expect(body.details.expected).toContain("multipart/form-data");
  });
});

describe("new contacts are written many per statement (import speed)", () => {
  test("250 new rows (over one statement's 100): every contact, its tags and its search text land", async () => {
    const t = await startTestServer();
    try {
      const rows = Array.from({ length: 250 }, (_, i) => `+1201555${String(2000 + i)},Name${i},Batch,vip;row${i % 3}`);
      const body = await expectStatus(await postCsv(t, `phoneNumber,firstName,lastName,tags\n${rows.join("\n")}\n`), 200);
      expect(body.data).toEqual({ created: 250, updated: 0, errors: [] });
      const all = await contacts(t);
      expect(all.length).toBe(250);
      const byPhone = new Map(all.map((c) => [c.phoneNumber, c]));
      for (const i of [0, 99, 100, 199, 249]) expect(byPhone.get(`+1201555${2000 + i}`)).toMatchObject({ firstName: `Name${i}`, tags: ["vip", `row${i % 3}`] });
      const tagged = await expectStatus(await t.api("/contacts?tags=vip,row1&limit=100"), 200);
      expect(tagged.data.pagination.total).toBe(Array.from({ length: 250 }, (_, i) => i).filter((i) => i % 3 === 1).length);
      const found = await expectStatus(await t.api("/contacts?search=name249"), 200);
      expect(found.data.contacts.map((c: any) => c.phoneNumber)).toEqual(["+12015552249"]);
    } finally {
      await t.stop();
    }
  });

  test("a number repeated in the file updates the contact created rows above; an opted-out row and an update keep file order", async () => {
    const t = await startTestServer();
    try {
      await expectStatus(await t.api("/contacts", { method: "POST", json: { phoneNumber: "+12015553000", firstName: "Before" } }), 201);
      const csv = [
        "phoneNumber,firstName,tags,optedOut",
        "+12015553001,First,a,",
        "+12015553002,Second,b,",
        "(201) 555-3001,FirstAgain,c,", // same number as two rows up, written differently
        "+12015553000,Existing,,",
        "+12015553003,Stops,,true",
        "+12015553002,SecondAgain,,",
      ].join("\n");
      const body = await expectStatus(await postCsv(t, csv + "\n"), 200);
      expect(body.data).toEqual({ created: 3, updated: 3, errors: [] });
      const byPhone = new Map((await contacts(t)).map((c) => [c.phoneNumber, c]));
      expect(byPhone.size).toBe(4);
      expect(byPhone.get("+12015553001")).toMatchObject({ firstName: "FirstAgain", tags: ["c"] });
      expect(byPhone.get("+12015553002")).toMatchObject({ firstName: "SecondAgain", tags: [] }); // an empty tags cell clears them
      expect(byPhone.get("+12015553000")).toMatchObject({ firstName: "Existing" });
      expect(byPhone.get("+12015553003")).toMatchObject({ firstName: "Stops", optedOut: true });
    } finally {
      await t.stop();
    }
  });

  test("a row for a contact that exists leaves it exactly as the API's PUT with the same fields would (only changed columns are written)", async () => {
    const t = await startTestServer();
    try {
      // arrange: contacts last changed long ago (the API stamps the clock)
      const db = t.running.deps.sqlite;
      const start = { firstName: "Ann", lastName: "Lee", email: "ann@example.com", status: "contacted" as const, tags: ["vip", "lead"], customFields: { plan: "gold", city: "Oslo" }, notes: "n", updatedAt: "2024-01-01T00:00:00.000Z", createdAt: "2024-01-01T00:00:00.000Z" };
      // [firstName, lastName, email, status, tags, notes, plan, city]: one change per case.
      const cases: string[][] = [
        ["Ann", "Lee", "ann@example.com", "contacted", "vip;lead", "n", "gold", "Oslo"], // nothing changes
        ["Zoe", "Lee", "ann@example.com", "contacted", "vip;lead", "n", "gold", "Oslo"], // name: the search text changes
        ["Ann", "Lee", "ann@example.com", "contacted", "lead;vip", "n", "gold", "Oslo"], // the same tags in another order
        ["Ann", "Lee", "ann@example.com", "contacted", "trial", "n", "gold", "Oslo"], // other tags
        ["Ann", "Lee", "ann@example.com", "converted", "vip;lead", "n", "", "Rome"], // status; one custom field gone, one changed
        ["", "", "", "", "", "", "gold", "Oslo"], // every clearable field cleared; an empty status keeps it
      ];
      const imported = cases.map((_, i) => insertContact(db, t.accountId, { ...start, phoneNumber: `+1201555${4000 + i}` }));
      const viaApi = cases.map((_, i) => insertContact(db, t.accountId, { ...start, phoneNumber: `+1201555${4100 + i}` }));
      const csv = ["phoneNumber,firstName,lastName,email,status,tags,notes,customFields.plan,customFields.city", ...cases.map((c, i) => [`+1201555${4000 + i}`, ...c].join(","))];
      const body = await expectStatus(await postCsv(t, csv.join("\n") + "\n"), 200);
      expect(body.data).toEqual({ created: 0, updated: cases.length, errors: [] });
      for (const [i, c] of cases.entries()) {
        const [firstName, lastName, email, status, tags, notes, plan, city] = c;
        const put = { firstName, lastName, email, ...(status ? { status } : {}), tags: tags.split(";").filter(Boolean), notes, customFields: { plan: plan || null, city: city || null } };
        await expectStatus(await t.api(`/contacts/${viaApi[i]}`, { method: "PUT", json: put }), 200);
      }
      const all = new Map((await contacts(t)).map((c) => [c.id, c]));
      const comparable = (id: string) => {
        const { id: _id, phoneNumber: _p, updatedAt, createdAt: _c, ...rest } = all.get(id)!;
        expect(updatedAt > start.updatedAt).toBe(true); // every imported row counts as an update, changed or not
        return rest;
      };
      for (const i of cases.keys()) expect(comparable(imported[i])).toEqual(comparable(viaApi[i]));
      // The tag table and the search index follow the columns: filtering by a tag (GET /contacts?tags=,
      // answered from contact_tags) finds exactly the contacts whose tags hold it.
      for (const tag of ["vip", "lead", "trial"]) {
        const having = new Set((await expectStatus(await t.api(`/contacts?tags=${tag}&limit=100`), 200)).data.contacts.map((c: any) => c.id));
        for (const i of cases.keys()) expect([i, tag, having.has(imported[i])]).toEqual([i, tag, all.get(imported[i])!.tags.includes(tag)]);
      }
      const found = await expectStatus(await t.api("/contacts?search=zoe"), 200);
      expect(found.data.contacts.map((c: any) => c.id).sort()).toEqual([imported[1], viaApi[1]].sort());
      const rome = await expectStatus(await t.api("/contacts/search", { method: "POST", json: { customFields: { city: "Rome" } } }), 200);
      expect(rome.data.contacts.map((c: any) => c.id).sort()).toEqual([imported[4], viaApi[4]].sort());
    } finally {
      await t.stop();
    }
  });

  test("an update that would take a contact past 100 custom fields is that row's error; the rows around it land", async () => {
    const t = await startTestServer();
    try {
      const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, "x"]));
      await expectStatus(await t.api("/contacts", { method: "POST", json: { phoneNumber: "+12015554200", customFields: many } }), 201);
      const csv = "phoneNumber,firstName,customFields.extra\n+12015554201,Before,\n+12015554200,Full,one too many\n+12015554202,After,\n";
      const body = await expectStatus(await postCsv(t, csv), 200);
      expect(body.data.created).toBe(2);
      expect(body.data.updated).toBe(0);
      expect(body.data.errors).toEqual([{ row: 3, field: "customFields", message: expect.stringContaining("at most 100 custom fields") }]);
      const full = (await contacts(t)).find((c) => c.phoneNumber === "+12015554200");
      expect(full.firstName).toBeNull();
    } finally {
      await t.stop();
    }
  });
});

describe("the import's dry run tells the truth", () => {
  test("?dryRun=true lists every row the import would refuse, with its row number and reason, and saves nothing; the import then does exactly that", async () => {
    const t = await startTestServer();
    try {
      const csv = [
        "phone,firstName,email,tags",
        "+12015550801,Ann,ann@example.com,\"vip, spring\"",
        "12345,Bob,,",
        "+12015550802,Cy,not-an-email,",
        "+12015550803,Di,,a;b",
        "+12015550801,Ann,,returning",
        "+12015550804,Ed",
      ].join("\n");
      const dry = await expectStatus(await t.api("/contacts/import?dryRun=true", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 200);
      expect(dry.data.dryRun).toBe(true);
      expect(dry.message).toContain("nothing saved");
      expect(dry.data).toMatchObject({ created: 2, updated: 1 });
      expect(dry.data.errors.map((e: any) => [e.row, e.field])).toEqual([
        [3, "phoneNumber"],
        [4, "email"],
        [7, "row"],
      ]);
      expect((await contacts(t)).length).toBe(0);
      const real = await expectStatus(await postCsv(t, csv), 200);
      expect(real.data.dryRun).toBeUndefined();
      expect({ created: real.data.created, updated: real.data.updated, errors: real.data.errors }).toEqual({ created: dry.data.created, updated: dry.data.updated, errors: dry.data.errors });
      // Tags written "vip, spring" or "a;b" are split the same way (one rule).
      const byPhone = new Map((await contacts(t)).map((c: any) => [c.phoneNumber, c]));
      expect(byPhone.get("+12015550801").tags).toEqual(["returning"]);
      expect(byPhone.get("+12015550803").tags).toEqual(["a", "b"]);
      expect((await expectStatus(await t.api("/contacts/import?dryRun=maybe", { method: "POST", body: csv, headers: { "Content-Type": "text/csv" } }), 400)).errors[0].field).toBe("dryRun");
    } finally {
      await t.stop();
    }
  });
});
