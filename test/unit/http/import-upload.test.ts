import { describe, expect, test } from "bun:test";
import { formatOfFile, parseMultipart } from "../../../src/http/import-upload";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("parseMultipart", () => {
  test("fields and files, each part's type kept, the file a view of the body", () => {
    const body = enc('preamble\r\n--b"1\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n--b"1\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\nphone\r\n+1\r\n\r\n--b"1--\r\n'.replace(/b"1/g, "b1"));
    const parts = parseMultipart(body, 'multipart/form-data; boundary="b1"');
    expect(parts.map((p) => [p.name, p.filename, p.type, dec(p.body)])).toEqual([
      ["note", undefined, "", "hi"],
      ["file", "c.csv", "text/csv", "phone\r\n+1\r\n"],
    ]);
    expect(parts[1].body.buffer).toBe(body.buffer);
  });

  test("malformed bodies throw", () => {
    expect(() => parseMultipart(enc("x"), "multipart/form-data")).toThrow(/boundary/);
    expect(() => parseMultipart(enc("--zz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nnever closed"), "multipart/form-data; boundary=zz")).toThrow(/closing boundary/);
    expect(() => parseMultipart(enc("nothing here"), "multipart/form-data; boundary=zz")).toThrow(/never appears/);
  });
});

test("formatOfFile: the extension decides, then the type", () => {
  expect(formatOfFile("a.CSV", "application/vnd.ms-excel")).toBe("csv");
  expect(formatOfFile("a.xlsx", "")).toBe("xlsx");
  expect(formatOfFile("a", "text/csv")).toBe("csv");
  expect(formatOfFile("a", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")).toBe("xlsx");
  expect(formatOfFile("a.xls", "application/vnd.ms-excel")).toBeNull();
  expect(formatOfFile("a", "application/pdf")).toBeNull();
});
