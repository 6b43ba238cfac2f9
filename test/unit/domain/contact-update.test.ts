import { describe, expect, test } from "bun:test";
import { applyContactPatch, longerThan, validateContactInput, type ContactState } from "../../../src/domain/contact-update";

const base: ContactState = {
  firstName: "A", lastName: "B", email: "a@b.co", phoneNumber: "+12015550100", status: "new",
  tags: ["x"], customFields: { k: "1", j: "2" }, notes: null, source: null, lastResponseAt: null, timeZone: null,
};

describe("validateContactInput", () => {
  test("create needs a phone; it is normalised", () => {
    expect(validateContactInput({}, "create")).toMatchObject({ ok: false, errors: [{ field: "phoneNumber" }] });
    const r = validateContactInput({ phoneNumber: "201.555.0100" }, "create");
    expect(r).toEqual({ ok: true, patch: { phoneNumber: "+12015550100" } });
  });

  test("update: empty body refused; unknown and read-only keys named", () => {
    expect(validateContactInput({}, "update").ok).toBe(false);
    const r = validateContactInput({ id: "x", messageCount: 1 }, "update");
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["id", "messageCount"]);
  });

  test("bulk refuses phoneNumber", () => {
    const r = validateContactInput({ phoneNumber: "+12015550100" }, "bulk");
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["phoneNumber"]);
  });

  test("strings trimmed, empty clears, limits at the boundary", () => {
    const r = validateContactInput({ firstName: "  x ", lastName: "", email: null, notes: "n".repeat(5000) }, "update");
    expect(r).toEqual({ ok: true, patch: { firstName: "x", lastName: null, email: null, notes: "n".repeat(5000) } });
    expect(validateContactInput({ firstName: "é".repeat(50) }, "update").ok).toBe(true);
    expect(validateContactInput({ firstName: "é".repeat(51) }, "update").ok).toBe(false);
    expect(validateContactInput({ notes: "n".repeat(5001) }, "update").ok).toBe(false);
  });

  test("status lists the four values", () => {
    const r = validateContactInput({ status: "NEW" }, "update");
    expect(r.ok ? "" : r.errors[0].message).toBe("status must be one of new, contacted, responded, converted");
  });

  test("tags: trimmed, de-duplicated; empty, long, separator characters and non-strings refused", () => {
    expect(validateContactInput({ tags: [" a ", "a", "b"] }, "update")).toEqual({ ok: true, patch: { tags: ["a", "b"] } });
    for (const bad of [[""], ["x".repeat(51)], ["a,b"], ["a;b"], [1], "a", Array(51).fill("t")]) {
      expect(validateContactInput({ tags: bad }, "update").ok).toBe(false);
    }
  });

  test("customFields: strings ≤ 500 or null; bad names refused", () => {
    expect(validateContactInput({ customFields: { a: "v", b: null } }, "update")).toEqual({ ok: true, patch: { customFields: { a: "v", b: null } } });
    for (const bad of [{ a: 1 }, { a: "v".repeat(501) }, { "": "x" }, { 'q"': "x" }, [], "x"]) {
      expect(validateContactInput({ customFields: bad }, "update").ok).toBe(false);
    }
  });

  test("lastResponseAt: ISO with offset normalised to UTC; null clears; junk refused", () => {
    expect(validateContactInput({ lastResponseAt: "2026-01-01T01:00:00+01:00" }, "update")).toEqual({ ok: true, patch: { lastResponseAt: "2026-01-01T00:00:00.000Z" } });
    expect(validateContactInput({ lastResponseAt: null }, "update")).toEqual({ ok: true, patch: { lastResponseAt: null } });
    expect(validateContactInput({ lastResponseAt: "2026-02-30T00:00:00Z" }, "update").ok).toBe(false);
  });

  test("email validated", () => {
    expect(validateContactInput({ email: "x@" }, "update").ok).toBe(false);
    expect(validateContactInput({ email: " a@b.co " }, "update")).toEqual({ ok: true, patch: { email: "a@b.co" } });
  });
});

describe("applyContactPatch", () => {
  test("tags replace, custom fields merge, null deletes, absent keys untouched", () => {
    const next = applyContactPatch(base, { tags: ["y"], customFields: { j: null, n: "3" }, firstName: null });
    expect(next).toEqual({ ...base, firstName: null, tags: ["y"], customFields: { k: "1", n: "3" } });
    expect(base.customFields).toEqual({ k: "1", j: "2" });
  });
});

describe("longerThan (import speed)", () => {
  test("counts characters, not UTF-16 units, and agrees with spreading the string at every length", () => {
    expect(longerThan("a".repeat(50), 50)).toBe(false);
    expect(longerThan("a".repeat(51), 50)).toBe(true);
    expect(longerThan("😀".repeat(50), 50)).toBe(false); // 100 UTF-16 units, 50 characters
    expect(longerThan("😀".repeat(51), 50)).toBe(true);
    for (const unit of ["a", "é", "😀", "a😀"]) {
      for (let n = 0; n < 60; n++) {
        const s = unit.repeat(n);
        for (const max of [0, 1, 10, 49, 50, 51]) expect(longerThan(s, max)).toBe([...s].length > max);
      }
    }
  });
});

describe("custom fields named like Object.prototype members", () => {
  const NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "prototype", "valueOf", "__defineGetter__"];
  test("are validated, merged and deleted as fields", () => {
    const body = JSON.parse(`{"customFields":{${NAMES.map((n) => `"${n}":"v-${n}"`).join(",")}}}`);
    const r = validateContactInput(body, "update");
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(Object.keys(r.patch.customFields!)).toEqual(NAMES);
    const next = applyContactPatch(base, r.patch);
    expect(Object.keys(next.customFields)).toEqual(["k", "j", ...NAMES]);
    for (const n of NAMES) expect(Object.hasOwn(next.customFields, n) && next.customFields[n]).toBe(`v-${n}`);
    expect(Object.getPrototypeOf(next.customFields)).toBe(Object.prototype);
    const del = validateContactInput(JSON.parse('{"customFields":{"__proto__":null,"constructor":null}}'), "update");
    if (!del.ok) throw new Error(JSON.stringify(del.errors));
    expect(Object.keys(applyContactPatch(next, del.patch).customFields)).toEqual(["k", "j", ...NAMES.filter((n) => n !== "__proto__" && n !== "constructor")]);
  });
  test("a body without a field does not find it on the prototype", () => {
    // `"toString" in {}` is true; an own-key check says no field was given.
    expect(validateContactInput({}, "update")).toMatchObject({ ok: false, errors: [{ requirement: "at least one field" }] });
  });
});
