import { describe, expect, test } from "bun:test";
import { neutraliseCell, restoreCell, parseFieldSelection, expandColumns, parseImportHeader, importRowBody, BASE_COLUMNS } from "../../../src/domain/contact-export";
import { parseListQuery, searchPattern } from "../../../src/domain/contact-query";

describe("formula-injection neutralisation", () => {
  test("cells starting with = + - @ tab CR get a quote; E.164 phones and plain text do not", () => {
    for (const v of ["=1+1", "+SUM(A1)", "-2", "@x", "\tx", "\rx", "+1 201 555", "+0123456789"]) expect(neutraliseCell(v)).toBe("'" + v);
    for (const v of ["+12015550123", "+447911123456", "plain", "", "a=b", "'quoted"]) expect(neutraliseCell(v)).toBe(v);
  });

  test("restoreCell inverts neutraliseCell exactly, including values that already start with quotes", () => {
    for (const v of ["=1", "'=1", "''=1", "'plain", "plain", "+12015550123", "-x", "'", ""]) expect(restoreCell(neutraliseCell(v))).toBe(v);
  });
});

describe("field selection", () => {
  test("default: every column then all custom fields", () => {
    const errs: any[] = [];
    const sel = parseFieldSelection(undefined, errs);
    expect(expandColumns(sel, ["b", "a"])).toEqual([...BASE_COLUMNS, "customFields.b", "customFields.a"]);
  });
  test("explicit order, duplicates dropped, unknown refused", () => {
    const errs: any[] = [];
    expect(expandColumns(parseFieldSelection("phoneNumber, firstName,phoneNumber,customFields.x", errs), ["y"])).toEqual(["phoneNumber", "firstName", "customFields.x"]);
    expect(errs).toEqual([]);
    parseFieldSelection("phone", errs);
    expect(errs[0].field).toBe("fields");
  });
});

describe("import rows", () => {
  test("header: phoneNumber required, unknown columns named, read-only columns ignored", () => {
    expect(parseImportHeader(["firstName"]).ok).toBe(false);
    const bad = parseImportHeader(["phoneNumber", "Phone"]);
    expect(bad.ok ? [] : bad.errors.map((e) => e.field)).toEqual(["Phone"]);
    const h = parseImportHeader(["id", "phoneNumber", "tags", "customFields.c", "status", "messageCount"]);
    expect(h.ok).toBe(true);
    if (!h.ok) return;
    expect(importRowBody(h.header, ["x", "+12015550100", "a; b;", "'=v", "", "7"])).toEqual({
      body: { phoneNumber: "+12015550100", tags: ["a", "b"], customFields: { c: "=v" } },
      createdAt: undefined,
      formId: undefined,
    });
    expect(importRowBody(h.header, ["x", "+12015550100", "", "", "new", "7"]).body).toEqual({ phoneNumber: "+12015550100", tags: [], customFields: { c: null }, status: "new" });
  });
});

describe("list query parsing", () => {
  test("absent parameters mean no filter and the defaults", () => {
    expect(parseListQuery({})).toEqual({ ok: true, value: { page: 1, limit: 50, sortBy: "createdAt", order: "desc" } });
  });
  test("search: phone-like text becomes digits, other text lower-cased", () => {
    expect(searchPattern("(415) 555-26")).toBe("41555526");
    expect(searchPattern("+1 415")).toBe("1415");
    expect(searchPattern("Ann 2")).toBe("ann 2");
  });
  test("dates: plain dates are UTC midnight; invalid ones refused", () => {
    const r = parseListQuery({ createdAfter: "2026-02-01", createdBefore: "2026-02-02T10:00:00+02:00" });
    expect(r).toMatchObject({ ok: true, value: { createdAfter: "2026-02-01T00:00:00.000Z", createdBefore: "2026-02-02T08:00:00.000Z" } });
    expect(parseListQuery({ createdAfter: "2026-02-30" }).ok).toBe(false);
  });
  test("tags: comma list, blanks dropped", () => {
    expect(parseListQuery({ tags: "a,, b ,a" })).toMatchObject({ ok: true, value: { tags: ["a", "b"] } });
  });
});

describe("import columns named like Object.prototype members", () => {
  test("customFields.__proto__ and customFields.constructor set fields", () => {
    const h = parseImportHeader(["phoneNumber", "customFields.__proto__", "customFields.constructor", "customFields.toString"]);
    if (!h.ok) throw new Error(JSON.stringify(h.errors));
    const { body } = importRowBody(h.header, ["+12015550100", "p", "c", ""]);
    const cf = body.customFields as Record<string, string | null>;
    expect(Object.keys(cf)).toEqual(["__proto__", "constructor", "toString"]);
    expect([cf["__proto__"], cf.constructor, cf.toString]).toEqual(["p", "c", null]);
  });
});
