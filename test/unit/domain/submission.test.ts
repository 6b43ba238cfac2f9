import { describe, expect, test } from "bun:test";
import {
  isValidEmail,
  validateSubmission,
  type FieldDef,
  type FieldError,
  type SubmissionValue,
} from "../../../src/domain/submission";

const PHONE = "(201) 555-0123";
const E164 = "+12015550123";

function accepted(body: Record<string, unknown>, fields: FieldDef[] = []): SubmissionValue {
  const r = validateSubmission(body, fields);
  if (!r.ok) throw new Error(`expected acceptance, got ${JSON.stringify(r.errors)}`);
  return r.value;
}

function refused(body: Record<string, unknown>, fields: FieldDef[] = []): FieldError[] {
  const r = validateSubmission(body, fields);
  if (r.ok) throw new Error(`expected refusal, got ${JSON.stringify(r.value)}`);
  return r.errors;
}

/** The single error of a refused submission. */
function only(body: Record<string, unknown>, fields: FieldDef[] = []): FieldError {
  const errors = refused(body, fields);
  expect(errors).toHaveLength(1);
  return errors[0];
}

const field = (name: string, type: FieldDef["type"], validation?: FieldDef["validation"], required?: boolean): FieldDef => ({
  name,
  type,
  ...(validation ? { validation } : {}),
  ...(required !== undefined ? { required } : {}),
});

describe("built-in names", () => {
  test("minimal submission", () => {
    expect(accepted({ phoneNumber: PHONE })).toEqual({ phoneNumber: E164, custom: {} });
  });

  test("all built-ins, trimmed", () => {
    expect(
      accepted({ phoneNumber: " +1 201 555 0123 ", firstName: " Ada ", lastName: "Lovelace", email: "ada@example.com", source: "ad" }),
    ).toEqual({ phoneNumber: E164, firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", source: "ad", custom: {} });
  });

  test("phoneNumber missing or empty is 'required'", () => {
    expect(only({})).toEqual({ field: "phoneNumber", message: "phoneNumber is required", requirement: "required", provided: null, visitor: "Please fill in 'Mobile phone number'." });
    expect(only({ phoneNumber: "" })).toMatchObject({ field: "phoneNumber", requirement: "required", provided: "" });
    expect(only({ phoneNumber: null })).toMatchObject({ field: "phoneNumber", requirement: "required" });
  });

  test("invalid phone", () => {
    expect(only({ phoneNumber: "12345" })).toMatchObject({
      field: "phoneNumber",
      requirement: "valid mobile phone number",
      provided: "12345",
    });
    expect(only({ phoneNumber: "+442071838750" }).message).toContain("landline");
    expect(only({ phoneNumber: "+18005550199" }).message).toContain("toll-free");
  });

  test("phoneNumber as a JSON number is read as digits", () => {
    expect(accepted({ phoneNumber: 2015550123 }).phoneNumber).toBe(E164);
  });

  test("phoneNumber as an object", () => {
    expect(only({ phoneNumber: { n: 1 } })).toMatchObject({ field: "phoneNumber", requirement: "string, number or boolean" });
  });

  test("firstName / lastName at most 50 characters, counted as code points", () => {
    expect(accepted({ phoneNumber: PHONE, firstName: "a".repeat(50) }).firstName).toHaveLength(50);
    expect(accepted({ phoneNumber: PHONE, firstName: "😀".repeat(50) }).firstName).toBe("😀".repeat(50));
    expect(only({ phoneNumber: PHONE, firstName: "a".repeat(51) })).toMatchObject({
      field: "firstName",
      requirement: "max 50 characters",
    });
    expect(only({ phoneNumber: PHONE, lastName: "é".repeat(51) })).toMatchObject({ field: "lastName" });
  });

  test("email format", () => {
    expect(accepted({ phoneNumber: PHONE, email: "a.b+tag@mail.example.co.uk" }).email).toBe("a.b+tag@mail.example.co.uk");
    expect(only({ phoneNumber: PHONE, email: "not-an-email" })).toEqual({
      field: "email",
      message: "email must be a valid e-mail address",
      requirement: "valid e-mail address",
      provided: "not-an-email",
      visitor: "Please enter an e-mail address like name@example.com in 'E-mail'.",
    });
  });

  test("source at most 100 characters", () => {
    expect(accepted({ phoneNumber: PHONE, source: "s".repeat(100) }).source).toHaveLength(100);
    expect(only({ phoneNumber: PHONE, source: "s".repeat(101) })).toMatchObject({
      field: "source",
      requirement: "max 100 characters",
      provided: "s".repeat(100),
    });
  });

  test("blank optional built-ins are left out", () => {
    expect(accepted({ phoneNumber: PHONE, firstName: "", lastName: "  ", email: null, source: "" })).toEqual({
      phoneNumber: E164,
      custom: {},
    });
  });
});

describe("isValidEmail", () => {
  test.each([["a@b.co"], ["first.last@example.com"], ["x+y@sub.example.org"], ["o'neil@example.ie"], ["user@xn--80ak6aa92e.com"], ["user@пример.рф"], ["user@example.xn--p1ai"]])(
    "valid %p",
    (e) => expect(isValidEmail(e)).toBe(true),
  );
  test.each([
    [""],
    ["plain"],
    ["@example.com"],
    ["a@"],
    ["a@b"],
    ["a@b.c"],
    ["a@@b.com"],
    ["a b@example.com"],
    [".a@example.com"],
    ["a.@example.com"],
    ["a..b@example.com"],
    ["a@-example.com"],
    ["a@example..com"],
    ["a@example.com."],
    ["a@example.123"],
    ["a".repeat(65) + "@example.com"],
    ["a@" + "b".repeat(250) + ".com"],
  ])("invalid %p", (e) => expect(isValidEmail(e)).toBe(false));
});

describe("custom fields", () => {
  test("undeclared keys are kept as strings", () => {
    expect(accepted({ phoneNumber: PHONE, company: " Acme ", seats: 12, vip: true, ratio: 0.5 }).custom).toEqual({
      company: "Acme",
      seats: "12",
      vip: "true",
      ratio: "0.5",
    });
  });

  test("null and blank values are left out", () => {
    expect(accepted({ phoneNumber: PHONE, a: null, b: "", c: "  " }).custom).toEqual({});
  });

  test("objects and arrays are refused", () => {
    const errors = refused({ phoneNumber: PHONE, a: { x: 1 }, b: [1, 2] });
    expect(errors).toEqual([
      { field: "a", message: "a must be a string", requirement: "string, number or boolean", provided: '{"x":1}', visitor: "Please enter 'A' as plain text." },
      { field: "b", message: "b must be a string", requirement: "string, number or boolean", provided: "[1,2]", visitor: "Please enter 'B' as plain text." },
    ]);
  });

  test("values at most 500 characters (configurable)", () => {
    expect(accepted({ phoneNumber: PHONE, note: "n".repeat(500) }).custom.note).toHaveLength(500);
    const e = only({ phoneNumber: PHONE, note: "n".repeat(501) });
    expect(e).toMatchObject({ field: "note", requirement: "max 500 characters" });
    expect(e.provided).toBe("n".repeat(100));
    const r = validateSubmission({ phoneNumber: PHONE, note: "n".repeat(21) }, [], { maxCustomLength: 20 });
    expect(r.ok).toBe(false);
  });

  test("key names at most 64 characters", () => {
    expect(accepted({ phoneNumber: PHONE, ["k".repeat(64)]: "v" }).custom).toEqual({ ["k".repeat(64)]: "v" });
    expect(only({ phoneNumber: PHONE, ["k".repeat(65)]: "v" })).toMatchObject({
      field: "k".repeat(65),
      requirement: "field name max 64 characters",
    });
  });

  test("an empty key is refused", () => {
    const body = JSON.parse('{"phoneNumber":"(201) 555-0123","":"y"}');
    expect(refused(body).map((e) => e.field)).toEqual([""]);
  });

  const PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "prototype", "valueOf", "__defineGetter__"];

  test.each(PROTOTYPE_NAMES)("an undeclared %s is a custom value, an own key of custom", (name) => {
    const v = accepted(JSON.parse(`{"phoneNumber":"${PHONE}","${name}":" x "}`));
    expect(Object.keys(v.custom)).toEqual([name]);
    expect(Object.hasOwn(v.custom, name) && v.custom[name]).toBe("x");
    expect(Object.getPrototypeOf(v.custom)).toBe(Object.prototype);
  });

  test.each(PROTOTYPE_NAMES)("a declared %s is validated like any field; absent, it is not read from the prototype", (name) => {
    const fields = [field(name, "text", { maxLength: 3 }, true)];
    expect(only({ phoneNumber: PHONE }, fields)).toMatchObject({ field: name, requirement: "required" });
    expect(only(JSON.parse(`{"phoneNumber":"${PHONE}","${name}":"long"}`), fields)).toMatchObject({ field: name, requirement: "maxLength 3" });
    const v = accepted(JSON.parse(`{"phoneNumber":"${PHONE}","${name}":"ok"}`), fields);
    expect(Object.hasOwn(v.custom, name) && v.custom[name]).toBe("ok");
    // Not required and not posted: simply absent.
    expect(Object.keys(accepted({ phoneNumber: PHONE }, [field(name, "number")]).custom)).toEqual([]);
  });

  test("object-prototype names are ordinary keys", () => {
    const v = accepted({ phoneNumber: PHONE, constructor: "c", toString: "t" });
    expect(Object.keys(v.custom)).toEqual(["constructor", "toString"]);
    expect(v.custom["constructor" as string]).toBe("c");
  });

  test("declared names are exact and case-sensitive: Email is a custom field", () => {
    const v = accepted({ phoneNumber: PHONE, Email: "not-checked" }, [field("email", "email")]);
    expect(v.custom).toEqual({ Email: "not-checked" });
    expect(v.email).toBeUndefined();
    const e = only({ phoneNumber: PHONE, Email: "a@example.com" }, [field("email", "email", undefined, true)]);
    expect(e).toMatchObject({ field: "email", requirement: "required" });
  });

  test("a long value's provided is cut to 100 characters", () => {
    const e = only({ phoneNumber: PHONE, c: "x".repeat(600) });
    expect(e.provided).toHaveLength(100);
  });
});

describe("declared fields: required", () => {
  const fields = [field("company", "text", undefined, true), field("note", "text")];

  test("present", () => {
    expect(accepted({ phoneNumber: PHONE, company: "Acme" }, fields).custom).toEqual({ company: "Acme" });
  });

  test.each([[undefined], [null], [""], ["   "]])("missing/empty %p", (company) => {
    expect(only({ phoneNumber: PHONE, company }, fields)).toMatchObject({
      field: "company",
      message: "company is required",
      requirement: "required",
    });
  });

  test("optional and absent is skipped even with rules", () => {
    const f = [field("age", "number", { min: 18 })];
    expect(accepted({ phoneNumber: PHONE }, f).custom).toEqual({});
    expect(accepted({ phoneNumber: PHONE, age: "" }, f).custom).toEqual({});
  });

  test("email validation.required works like required", () => {
    const f = [field("work", "email", { required: true })];
    expect(only({ phoneNumber: PHONE }, f)).toMatchObject({ field: "work", requirement: "required" });
  });

  test("declared fields are checked in the form's order", () => {
    const f = [field("b", "text", undefined, true), field("a", "text", undefined, true)];
    expect(refused({ phoneNumber: PHONE }, f).map((e) => e.field)).toEqual(["b", "a"]);
  });
});

describe("declared fields: text", () => {
  const f = [field("code", "text", { minLength: 3, maxLength: 6, pattern: "^[A-Z]+$" })];
  test("passes", () => {
    expect(accepted({ phoneNumber: PHONE, code: "ABC" }, f).custom).toEqual({ code: "ABC" });
    expect(accepted({ phoneNumber: PHONE, code: "ABCDEF" }, f).custom).toEqual({ code: "ABCDEF" });
  });
  test("minLength", () => {
    expect(only({ phoneNumber: PHONE, code: "AB" }, f)).toEqual({
      field: "code",
      message: "code must be at least 3 characters",
      requirement: "minLength 3",
      provided: "AB",
      visitor: "Please write at least 3 characters in 'Code'.",
    });
  });
  test("maxLength", () => {
    expect(only({ phoneNumber: PHONE, code: "ABCDEFG" }, f)).toMatchObject({ requirement: "maxLength 6" });
  });
  test("lengths count code points", () => {
    const g = [field("e", "text", { maxLength: 2 })];
    expect(accepted({ phoneNumber: PHONE, e: "😀😀" }, g).custom.e).toBe("😀😀");
  });
  test("pattern", () => {
    expect(only({ phoneNumber: PHONE, code: "abc" }, f)).toMatchObject({ requirement: "match pattern ^[A-Z]+$" });
  });
  test("unanchored patterns match anywhere", () => {
    const g = [field("t", "text", { pattern: "\\d" })];
    expect(accepted({ phoneNumber: PHONE, t: "abc1" }, g).custom.t).toBe("abc1");
    expect(refused({ phoneNumber: PHONE, t: "abc" }, g)).toHaveLength(1);
  });
  test("unicode property patterns", () => {
    const g = [field("t", "text", { pattern: "^\\p{L}+$" })];
    expect(accepted({ phoneNumber: PHONE, t: "Zoë" }, g).custom.t).toBe("Zoë");
  });
  test("an invalid stored pattern never matches and never throws", () => {
    const g = [field("t", "text", { pattern: "([" })];
    expect(only({ phoneNumber: PHONE, t: "x" }, g).field).toBe("t");
  });
  test("numbers are checked as their text", () => {
    const g = [field("zip", "text", { pattern: "^\\d{5}$" })];
    expect(accepted({ phoneNumber: PHONE, zip: 94107 }, g).custom.zip).toBe("94107");
  });
});

describe("declared fields: email", () => {
  const f = [field("work", "email", { domains: ["example.com", "Example.ORG"] })];
  test("format", () => {
    expect(only({ phoneNumber: PHONE, work: "nope" }, f)).toMatchObject({ requirement: "valid e-mail address" });
  });
  test("domains match exactly, case-insensitively", () => {
    expect(accepted({ phoneNumber: PHONE, work: "a@EXAMPLE.com" }, f).custom.work).toBe("a@EXAMPLE.com");
    expect(accepted({ phoneNumber: PHONE, work: "a@example.org" }, f).custom.work).toBe("a@example.org");
    expect(only({ phoneNumber: PHONE, work: "a@sub.example.com" }, f)).toMatchObject({
      requirement: "e-mail domain one of example.com, Example.ORG",
    });
    expect(only({ phoneNumber: PHONE, work: "a@gmail.com" }, f).field).toBe("work");
  });
  test("declaring the built-in email adds domains", () => {
    const g = [field("email", "email", { domains: ["example.com"] })];
    expect(accepted({ phoneNumber: PHONE, email: "a@example.com" }, g).email).toBe("a@example.com");
    expect(only({ phoneNumber: PHONE, email: "a@other.com" }, g)).toMatchObject({ field: "email" });
    expect(only({ phoneNumber: PHONE, email: "bad" }, g)).toMatchObject({ requirement: "valid e-mail address" });
  });
});

describe("declared fields: phone", () => {
  test("stored in E.164", () => {
    const f = [field("altPhone", "phone")];
    expect(accepted({ phoneNumber: PHONE, altPhone: "415.555.2671" }, f).custom).toEqual({ altPhone: "+14155552671" });
  });
  test("invalid", () => {
    const e = only({ phoneNumber: PHONE, altPhone: "+442071838750" }, [field("altPhone", "phone")]);
    expect(e).toMatchObject({ field: "altPhone", requirement: "valid mobile phone number", provided: "+442071838750" });
    expect(e.message.startsWith("altPhone ")).toBe(true);
  });
  test("regions", () => {
    const f = [field("altPhone", "phone", { regions: ["US"] })];
    expect(only({ phoneNumber: PHONE, altPhone: "+447400123456" }, f)).toMatchObject({ requirement: "phone number from US" });
  });
  test("format", () => {
    const f = [field("altPhone", "phone", { format: "international" })];
    expect(only({ phoneNumber: PHONE, altPhone: "4155552671" }, f).field).toBe("altPhone");
    expect(accepted({ phoneNumber: PHONE, altPhone: "+447400123456" }, f).custom.altPhone).toBe("+447400123456");
  });
  test("declaring phoneNumber brings its regions and format to the built-in", () => {
    const f = [field("phoneNumber", "phone", { regions: ["GB"], format: "international" })];
    expect(accepted({ phoneNumber: "+44 7400 123456" }, f)).toEqual({ phoneNumber: "+447400123456", custom: {} });
    expect(only({ phoneNumber: PHONE }, f)).toMatchObject({ field: "phoneNumber" });
    expect(only({ phoneNumber: "+14155552671" }, f)).toMatchObject({ requirement: "phone number from GB" });
  });
});

describe("declared fields: number", () => {
  const f = [field("age", "number", { min: 18, max: 120, integer: true })];
  test("JSON numbers and numeric strings", () => {
    expect(accepted({ phoneNumber: PHONE, age: 18 }, f).custom.age).toBe("18");
    expect(accepted({ phoneNumber: PHONE, age: " 120 " }, f).custom.age).toBe("120");
    expect(accepted({ phoneNumber: PHONE, age: "3e1" }, f).custom.age).toBe("3e1");
  });
  test.each([["abc"], ["12abc"], ["1,000"], ["0x10"], ["Infinity"], [true]])("not a number: %p", (age) => {
    expect(only({ phoneNumber: PHONE, age }, f)).toMatchObject({ field: "age", requirement: "number" });
  });
  test("integer", () => {
    expect(only({ phoneNumber: PHONE, age: 18.5 }, f)).toMatchObject({ requirement: "integer" });
    expect(only({ phoneNumber: PHONE, age: "30.5" }, f)).toMatchObject({ requirement: "integer" });
  });
  test("min / max inclusive", () => {
    expect(only({ phoneNumber: PHONE, age: 17 }, f)).toMatchObject({ requirement: "min 18", message: "age must be at least 18" });
    expect(only({ phoneNumber: PHONE, age: "121" }, f)).toMatchObject({ requirement: "max 120" });
  });
  test("decimals allowed without integer", () => {
    const g = [field("price", "number", { min: 0 })];
    expect(accepted({ phoneNumber: PHONE, price: "-0" }, g).custom.price).toBe("-0");
    expect(accepted({ phoneNumber: PHONE, price: ".5" }, g).custom.price).toBe(".5");
    expect(only({ phoneNumber: PHONE, price: -0.01 }, g)).toMatchObject({ requirement: "min 0" });
  });
});

describe("declared fields: url", () => {
  test("parseable absolute URL", () => {
    const f = [field("site", "url")];
    expect(accepted({ phoneNumber: PHONE, site: "https://example.com/a?b=c" }, f).custom.site).toBe("https://example.com/a?b=c");
    expect(only({ phoneNumber: PHONE, site: "example.com" }, f)).toMatchObject({ requirement: "absolute URL" });
    expect(only({ phoneNumber: PHONE, site: "/relative" }, f)).toMatchObject({ requirement: "absolute URL" });
  });
  test("without protocols only http and https", () => {
    const f = [field("site", "url")];
    expect(accepted({ phoneNumber: PHONE, site: "http://example.com" }, f).custom.site).toBe("http://example.com");
    expect(only({ phoneNumber: PHONE, site: "javascript:alert(1)" }, f)).toMatchObject({ requirement: "one of http, https" });
    expect(only({ phoneNumber: PHONE, site: "ftp://example.com" }, f)).toMatchObject({ requirement: "one of http, https" });
  });
  test("protocols", () => {
    const f = [field("site", "url", { protocols: ["https"] })];
    expect(only({ phoneNumber: PHONE, site: "http://example.com" }, f)).toMatchObject({ requirement: "one of https" });
    expect(accepted({ phoneNumber: PHONE, site: "HTTPS://example.com" }, f).custom.site).toBe("HTTPS://example.com");
  });
  test("domains: the host or a subdomain of it", () => {
    const f = [field("site", "url", { domains: ["example.com"] })];
    expect(accepted({ phoneNumber: PHONE, site: "https://example.com" }, f).custom.site).toBe("https://example.com");
    expect(accepted({ phoneNumber: PHONE, site: "https://www.Example.com/x" }, f).custom.site).toBe("https://www.Example.com/x");
    expect(only({ phoneNumber: PHONE, site: "https://notexample.com" }, f)).toMatchObject({
      requirement: "domain one of example.com",
    });
    expect(only({ phoneNumber: PHONE, site: "https://example.com.evil.io" }, f).field).toBe("site");
    expect(only({ phoneNumber: PHONE, site: "https://evil.io/?u=example.com" }, f).field).toBe("site");
  });
});

describe("declared fields: date", () => {
  test("default format YYYY-MM-DD", () => {
    const f = [field("when", "date")];
    expect(accepted({ phoneNumber: PHONE, when: "2024-02-29" }, f).custom.when).toBe("2024-02-29");
    expect(only({ phoneNumber: PHONE, when: "2023-02-29" }, f)).toMatchObject({ requirement: "date as YYYY-MM-DD" });
    expect(only({ phoneNumber: PHONE, when: "02/28/2023" }, f).field).toBe("when");
    expect(only({ phoneNumber: PHONE, when: "tomorrow" }, f).field).toBe("when");
  });
  test("declared format; value stored as posted", () => {
    const f = [field("when", "date", { format: "DD/MM/YYYY" })];
    expect(accepted({ phoneNumber: PHONE, when: "31/12/2024" }, f).custom.when).toBe("31/12/2024");
    expect(only({ phoneNumber: PHONE, when: "12/31/2024" }, f)).toMatchObject({ requirement: "date as DD/MM/YYYY" });
  });
  test("min / max inclusive", () => {
    const f = [field("when", "date", { format: "MM/DD/YYYY", min: "01/01/2024", max: "2024-12-31" })];
    expect(accepted({ phoneNumber: PHONE, when: "01/01/2024" }, f).custom.when).toBe("01/01/2024");
    expect(accepted({ phoneNumber: PHONE, when: "12/31/2024" }, f).custom.when).toBe("12/31/2024");
    expect(only({ phoneNumber: PHONE, when: "12/31/2023" }, f)).toMatchObject({ requirement: "min 01/01/2024" });
    expect(only({ phoneNumber: PHONE, when: "01/01/2025" }, f)).toMatchObject({ requirement: "max 2024-12-31" });
  });
});

describe("custom messages", () => {
  test("replace the message of every rule a value breaks, but not the 'required' error of a missing value", () => {
    const f = [
      field("code", "text", { minLength: 3, message: "Please enter your 3-letter code" }, true),
      field("age", "number", { min: 18, message: "Adults only" }),
    ];
    expect(refused({ phoneNumber: PHONE, age: 12 }, f)).toEqual([
      // The owner's own words are also what the visitor reads.
      { field: "code", message: "code is required", requirement: "required", provided: null, visitor: "Please fill in 'Code'." },
      { field: "age", message: "Adults only", requirement: "min 18", provided: 12, visitor: "Adults only" },
    ]);
    expect(only({ phoneNumber: PHONE, code: "ab" }, f)).toMatchObject({
      message: "Please enter your 3-letter code",
      requirement: "minLength 3",
    });
  });
  test("apply to declared built-ins too", () => {
    const f = [field("phoneNumber", "phone", { message: "We need a mobile number" })];
    expect(only({ phoneNumber: "+442071838750" }, f)).toMatchObject({ message: "We need a mobile number" });
  });
});

describe("all errors at once", () => {
  test("built-ins, declared and undeclared fields together", () => {
    const f = [field("company", "text", undefined, true), field("age", "number", { integer: true })];
    const errors = refused(
      { phoneNumber: "nope", firstName: "x".repeat(51), email: "bad", age: "1.5", extra: [1] },
      f,
    );
    expect(errors.map((e) => [e.field, e.requirement])).toEqual([
      ["phoneNumber", "valid mobile phone number"],
      ["firstName", "max 50 characters"],
      ["email", "valid e-mail address"],
      ["company", "required"],
      ["age", "integer"],
      ["extra", "string, number or boolean"],
    ]);
  });

  test("a valid phone does not hide other errors, nor the reverse", () => {
    expect(refused({ firstName: "x".repeat(51) }).map((e) => e.field)).toEqual(["phoneNumber", "firstName"]);
  });
});

describe("declared built-ins of type text", () => {
  test("firstName with minLength / pattern", () => {
    const f = [field("firstName", "text", { minLength: 2, pattern: "^[A-Za-z]+$" }, true)];
    expect(accepted({ phoneNumber: PHONE, firstName: "Ada" }, f).firstName).toBe("Ada");
    expect(only({ phoneNumber: PHONE }, f)).toMatchObject({ field: "firstName", requirement: "required" });
    expect(only({ phoneNumber: PHONE, firstName: "A" }, f)).toMatchObject({ requirement: "minLength 2" });
    expect(only({ phoneNumber: PHONE, firstName: "Ada1" }, f)).toMatchObject({ requirement: "match pattern ^[A-Za-z]+$" });
    // the built-in 50-character limit still applies
    expect(only({ phoneNumber: PHONE, firstName: "a".repeat(51) }, f)).toMatchObject({ requirement: "max 50 characters" });
  });
  test("built-ins never appear in custom", () => {
    const f = [field("source", "text", { maxLength: 10 })];
    expect(accepted({ phoneNumber: PHONE, source: "ad" }, f)).toEqual({ phoneNumber: E164, source: "ad", custom: {} });
  });
});
