import { describe, expect, test } from "bun:test";
import { CsvRowReader, guessDelimiter } from "../../../src/domain/csv-rows";

/** Every row of `text`, fed in pieces of `size` characters. */
function read(text: string, size = text.length || 1, maxCell = 10_240) {
  const r = new CsvRowReader(maxCell);
  const rows = [];
  for (let i = 0; i < text.length; i += size) rows.push(...r.push(text.slice(i, i + size)));
  rows.push(...r.end());
  return rows;
}

const SAMPLE = '\uFEFFphoneNumber,firstName,notes\r\n+12015550100,"O\'Neil, Jr.","said ""hi""\r\nthen left"\n\n , ,\r+12015550101,Bo,\n+12015550102,"",x';

describe("CsvRowReader", () => {
  test("quotes, doubled quotes, line breaks inside quotes, CRLF/LF/CR, blank rows skipped, BOM dropped", () => {
    expect(read(SAMPLE)).toEqual([
      { cells: ["phoneNumber", "firstName", "notes"] },
      { cells: ["+12015550100", "O'Neil, Jr.", 'said "hi"\r\nthen left'] },
      { cells: ["+12015550101", "Bo", ""] },
      { cells: ["+12015550102", "", "x"] },
    ]);
  });

  test("any split of the text into pieces gives the same rows (pieces cut quotes, CRLF, cells)", () => {
    const whole = read(SAMPLE);
    for (let size = 1; size <= 12; size++) expect(read(SAMPLE, size)).toEqual(whole);
  });

  test("an unterminated quote makes the last row an error; text after a closing quote too", () => {
    expect(read('a,b\n1,"open\n2,3\n')).toEqual([{ cells: ["a", "b"] }, { cells: ["1", "open\n2,3\n"], error: expect.stringContaining("unterminated") }]);
    const rows = read('a,b\n"x"y,2\n3,4\n');
    expect(rows[1]).toEqual({ cells: ["xy", "2"], error: expect.stringContaining("after its closing quote") });
    expect(rows[2]).toEqual({ cells: ["3", "4"] });
  });

  test("a cell over the limit is not kept: its row is an error, the next row is read normally", () => {
    const big = "x".repeat(50_000);
    for (const text of [`a,b\n1,${big}\n2,ok\n`, `a,b\n1,"${big}"\n2,ok\n`]) {
      for (const size of [7, 4096, text.length]) {
        const rows = read(text, size, 1000);
        expect(rows.length).toBe(3);
        expect(rows[1].error).toContain("longer than 1000 characters");
        expect(rows[1].cells[1]).toBe("");
        expect(rows[2]).toEqual({ cells: ["2", "ok"] });
      }
    }
  });

  test("the delimiter is the one the header line uses most: comma, semicolon, tab or pipe", () => {
    expect(read("phone;name\n+12015550100;Ann, B\n")).toEqual([{ cells: ["phone", "name"] }, { cells: ["+12015550100", "Ann, B"] }]);
    expect(read("phone\tname\n1\t2")[1].cells).toEqual(["1", "2"]);
    expect(String.fromCharCode(guessDelimiter('"a;b",c'))).toBe(",");
    expect(String.fromCharCode(guessDelimiter("phoneNumber"))).toBe(",");
    // The header split across pieces still finds its delimiter.
    expect(read("phone;name\n1;2\n", 3)[1].cells).toEqual(["1", "2"]);
  });

  test("empty input gives no rows", () => {
    expect(read("")).toEqual([]);
    expect(read("\n\r\n  \n")).toEqual([]);
  });
});
