import { describe, expect, test } from "bun:test";
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE, parseIntParam, parsePaging } from "../../../src/domain/query-params";
import type { FieldError } from "../../../src/domain/submission";

describe("the one reading of page and limit", () => {
  test("absent or empty: the defaults; digits in range: the number", () => {
    const errors: FieldError[] = [];
    expect(parsePaging({}, errors)).toEqual({ page: 1, limit: DEFAULT_PAGE_SIZE });
    expect(parsePaging({ page: "", limit: "" }, errors)).toEqual({ page: 1, limit: DEFAULT_PAGE_SIZE });
    expect(parsePaging({ page: String(MAX_PAGE), limit: String(MAX_PAGE_SIZE) }, errors)).toEqual({ page: MAX_PAGE, limit: MAX_PAGE_SIZE });
    expect(parsePaging({ page: "007", limit: 3 }, errors)).toEqual({ page: 7, limit: 3 });
    expect(errors).toEqual([]);
  });

  test("anything else is one error per parameter, naming it and its range", () => {
    for (const bad of ["0", "-1", "1.5", "1e3", "0x10", " 1", "1 ", "+1", "Infinity", "NaN", "abc", "99999999999999999999", String(MAX_PAGE + 1), "1,2", 1.5, -3, 1e21, true]) {
      const errors: FieldError[] = [];
      expect(parsePaging({ page: bad, limit: bad }, errors)).toEqual({ page: 1, limit: DEFAULT_PAGE_SIZE });
      expect(errors.map((e) => e.message)).toEqual([`page must be an integer from 1 to ${MAX_PAGE}`, `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`]);
      expect(errors[0]).toMatchObject({ field: "page", requirement: `integer 1-${MAX_PAGE}`, provided: String(bad).slice(0, 100) });
    }
  });

  test("a very long value is quoted back cut to 100 characters", () => {
    const errors: FieldError[] = [];
    parseIntParam("9".repeat(5000), "offset", 0, 0, 10, errors);
    expect(errors[0].field).toBe("offset");
    expect(String(errors[0].provided)).toHaveLength(100);
  });
});
