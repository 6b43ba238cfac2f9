import { describe, expect, test } from "bun:test";
import {
  DEFAULT_FORM_SETTINGS,
  MAX_TEMPLATE_LENGTH,
  compilePattern,
  hasNestedUnboundedQuantifier,
  parseDateBound,
  parseDateInFormat,
  resolveFormSettings,
  validateFormFields,
  validateFormSettings,
  validateTemplate,
} from "../../../src/domain/form-definition";

/** Field paths of the errors, for compact assertions. */
const paths = (errors: { field: string }[]) => errors.map((e) => e.field);

const one = (f: Record<string, unknown>) => validateFormFields([f]);

describe("validateFormFields: the list", () => {
  test("a valid definition has no errors", () => {
    expect(
      validateFormFields([
        { name: "phoneNumber", type: "phone", required: true, label: "Mobile", placeholder: "(415) 555-2671" },
        { name: "firstName", type: "text", validation: { maxLength: 50 } },
        { name: "company_size", type: "number", validation: { min: 1, max: 10000, integer: true } },
      ]),
    ).toEqual([]);
  });

  test.each([[undefined], [null], [[]]])("missing or empty (%p): needs at least one field", (fields) => {
    expect(validateFormFields(fields)).toEqual([{ field: "fields", message: "fields needs at least one field" }]);
  });

  test("not an array", () => {
    expect(paths(validateFormFields({ name: "x", type: "text" }))).toEqual(["fields"]);
    expect(paths(validateFormFields("text"))).toEqual(["fields"]);
  });

  test("too many fields", () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `f${i}`, type: "text" }));
    expect(paths(validateFormFields(many))).toEqual(["fields"]);
    expect(validateFormFields(many.slice(0, 100))).toEqual([]);
  });

  test("an entry that is not an object", () => {
    expect(paths(validateFormFields([{ name: "a", type: "text" }, "b", null]))).toEqual(["fields[1]", "fields[2]"]);
  });

  test("unknown properties of a field", () => {
    expect(paths(one({ name: "a", type: "text", requried: true }))).toEqual(["fields[0].requried"]);
  });

  test("all problems are reported at once", () => {
    const errors = validateFormFields([
      { name: "1bad", type: "text" },
      { name: "ok", type: "colour" },
      { name: "ok2", type: "text", validation: { minLength: -1, pattern: "(" } },
    ]);
    expect(paths(errors)).toEqual([
      "fields[0].name",
      "fields[1].type",
      "fields[2].validation.minLength",
      "fields[2].validation.pattern",
    ]);
  });
});

describe("validateFormFields: name", () => {
  test.each([["a"], ["_x"], ["Field_1"], ["A".repeat(64)], ["email2"]])("accepts %p", (name) => {
    expect(one({ name, type: "text" })).toEqual([]);
  });
  test.each([[""], ["1abc"], ["first name"], ["first-name"], ["prénom"], ["a.b"], [42], [undefined]])(
    "refuses %p",
    (name) => {
      expect(paths(one({ name, type: "text" }))).toEqual(["fields[0].name"]);
    },
  );
  test("at most 64 characters", () => {
    const e = one({ name: "A".repeat(65), type: "text" });
    expect(paths(e)).toEqual(["fields[0].name"]);
    expect(e[0].message).toContain("64");
  });
  test("unique within the form (case-sensitive)", () => {
    const e = validateFormFields([
      { name: "email", type: "email" },
      { name: "Email", type: "text" },
      { name: "email", type: "text" },
    ]);
    expect(paths(e)).toEqual(["fields[2].name"]);
    expect(e[0].message).toContain("duplicate");
  });
  test.each([["constructor"], ["__proto__"], ["toString"], ["hasOwnProperty"], ["valueOf"], ["__defineGetter__"]])(
    "%p is a name like any other, of any type",
    (name) => {
      for (const type of ["text", "email", "phone", "number", "url", "date", "timezone"]) expect(one({ name, type })).toEqual([]);
      expect(paths(validateFormFields([{ name, type: "text" }, { name, type: "text" }]))).toEqual(["fields[1].name"]);
    },
  );
});

describe("validateFormFields: type, required, label, placeholder", () => {
  test.each([["text"], ["email"], ["phone"], ["number"], ["url"], ["date"]])("type %p", (type) => {
    expect(one({ name: "f", type })).toEqual([]);
  });
  test.each([[undefined], ["Text"], ["select"], [1]])("refuses type %p", (type) => {
    expect(paths(one({ name: "f", type }))).toEqual(["fields[0].type"]);
  });
  test("built-in names may only be declared with a compatible type", () => {
    expect(validateFormFields([{ name: "phoneNumber", type: "text" }, { name: "email", type: "text" }])).toEqual([]);
    expect(paths(one({ name: "phoneNumber", type: "email" }))).toEqual(["fields[0].type"]);
    expect(paths(one({ name: "email", type: "phone" }))).toEqual(["fields[0].type"]);
    expect(paths(one({ name: "firstName", type: "number" }))).toEqual(["fields[0].type"]);
  });
  test("required must be boolean", () => {
    expect(one({ name: "f", type: "text", required: false })).toEqual([]);
    expect(paths(one({ name: "f", type: "text", required: "yes" }))).toEqual(["fields[0].required"]);
  });
  test("label and placeholder: strings of at most 200 characters", () => {
    expect(one({ name: "f", type: "text", label: "L".repeat(200), placeholder: "😀".repeat(200) })).toEqual([]);
    expect(paths(one({ name: "f", type: "text", label: "L".repeat(201), placeholder: 5 }))).toEqual([
      "fields[0].label",
      "fields[0].placeholder",
    ]);
  });
});

describe("validateFormFields: validation object", () => {
  test("must be an object when present; null is the same as absent", () => {
    expect(one({ name: "f", type: "text", validation: null })).toEqual([]);
    expect(paths(one({ name: "f", type: "text", validation: [] }))).toEqual(["fields[0].validation"]);
    expect(paths(one({ name: "f", type: "text", validation: "x" }))).toEqual(["fields[0].validation"]);
  });

  test("keys of another type are refused", () => {
    const e = one({ name: "f", type: "text", validation: { min: 1, regions: ["US"] } });
    expect(paths(e)).toEqual(["fields[0].validation.min", "fields[0].validation.regions"]);
    expect(e[0].message).toContain("minLength, maxLength, pattern, message");
  });

  test.each([["text"], ["email"], ["phone"], ["number"], ["url"], ["date"]])("message allowed for %p", (type) => {
    expect(one({ name: "f", type, validation: { message: "Please check this" } })).toEqual([]);
  });

  test("message must be a non-empty string", () => {
    expect(paths(one({ name: "f", type: "text", validation: { message: "" } }))).toEqual(["fields[0].validation.message"]);
    expect(paths(one({ name: "f", type: "text", validation: { message: 3 } }))).toEqual(["fields[0].validation.message"]);
    expect(paths(one({ name: "f", type: "text", validation: { message: "x".repeat(501) } }))).toEqual([
      "fields[0].validation.message",
    ]);
  });
});

describe("validateFormFields: text keys", () => {
  const text = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "text", validation }));
  test("valid", () => {
    expect(text({ minLength: 0, maxLength: 10, pattern: "^[A-Z]{2}\\d{4}$" })).toEqual([]);
    expect(text({ minLength: 3, maxLength: 3 })).toEqual([]);
    expect(text({ pattern: "^\\p{Lu}" })).toEqual([]);
    expect(text({ pattern: "[\\w-.]+" })).toEqual([]); // legacy-only syntax still compiles
  });
  test("minLength / maxLength must be non-negative integers", () => {
    expect(text({ minLength: -1 })).toEqual(["fields[0].validation.minLength"]);
    expect(text({ minLength: 1.5 })).toEqual(["fields[0].validation.minLength"]);
    expect(text({ maxLength: "10" })).toEqual(["fields[0].validation.maxLength"]);
  });
  test("minLength ≤ maxLength", () => {
    expect(text({ minLength: 5, maxLength: 4 })).toEqual(["fields[0].validation.minLength"]);
  });
  test("pattern must compile", () => {
    expect(text({ pattern: "([a-z" })).toEqual(["fields[0].validation.pattern"]);
    expect(text({ pattern: "" })).toEqual(["fields[0].validation.pattern"]);
    expect(text({ pattern: 5 })).toEqual(["fields[0].validation.pattern"]);
  });
  test("pattern at most 500 characters", () => {
    expect(text({ pattern: "a".repeat(500) })).toEqual([]);
    expect(text({ pattern: "a".repeat(501) })).toEqual(["fields[0].validation.pattern"]);
  });
  test("patterns with nested unbounded repetition are refused", () => {
    expect(text({ pattern: "^(a+)+$" })).toEqual(["fields[0].validation.pattern"]);
    expect(text({ pattern: "^(\\w+\\s?)*$" })).toEqual(["fields[0].validation.pattern"]);
  });
});

describe("validateFormFields: email keys", () => {
  const email = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "email", validation }));
  test("valid", () => {
    expect(email({ domains: ["example.com", "example.org"], required: true })).toEqual([]);
  });
  test("domains must be a non-empty array of names", () => {
    expect(email({ domains: [] })).toEqual(["fields[0].validation.domains"]);
    expect(email({ domains: "example.com" })).toEqual(["fields[0].validation.domains"]);
    expect(email({ domains: ["example.com", 1] })).toEqual(["fields[0].validation.domains"]);
    expect(email({ domains: ["exa mple.com"] })).toEqual(["fields[0].validation.domains"]);
  });
  test("required must be boolean", () => {
    expect(email({ required: "true" })).toEqual(["fields[0].validation.required"]);
  });
});

describe("validateFormFields: phone keys", () => {
  const phone = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "phone", validation }));
  test("valid", () => {
    expect(phone({ format: "national", regions: ["US", "CA"] })).toEqual([]);
    expect(phone({ format: "international", regions: ["gb"] })).toEqual([]);
  });
  test("format is national or international", () => {
    expect(phone({ format: "E164" })).toEqual(["fields[0].validation.format"]);
  });
  test("regions: non-empty array of known two-letter codes", () => {
    expect(phone({ regions: [] })).toEqual(["fields[0].validation.regions"]);
    expect(phone({ regions: "US" })).toEqual(["fields[0].validation.regions"]);
    expect(phone({ regions: ["US", "USA", "ZZ", 1] })).toEqual([
      "fields[0].validation.regions[1]",
      "fields[0].validation.regions[2]",
      "fields[0].validation.regions[3]",
    ]);
  });
});

describe("validateFormFields: number keys", () => {
  const num = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "number", validation }));
  test("valid", () => {
    expect(num({ min: -5.5, max: 10, integer: false })).toEqual([]);
    expect(num({ min: 3, max: 3 })).toEqual([]);
  });
  test("min / max are numbers, min ≤ max", () => {
    expect(num({ min: "1" })).toEqual(["fields[0].validation.min"]);
    expect(num({ max: null })).toEqual(["fields[0].validation.max"]);
    expect(num({ min: 10, max: 1 })).toEqual(["fields[0].validation.min"]);
  });
  test("integer is boolean", () => {
    expect(num({ integer: 1 })).toEqual(["fields[0].validation.integer"]);
  });
});

describe("validateFormFields: url keys", () => {
  const url = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "url", validation }));
  test("valid", () => {
    expect(url({ protocols: ["https"], domains: ["example.com"] })).toEqual([]);
    expect(url({ protocols: ["http", "https"] })).toEqual([]);
  });
  test("protocols: non-empty subset of http, https", () => {
    expect(url({ protocols: [] })).toEqual(["fields[0].validation.protocols"]);
    expect(url({ protocols: ["ftp"] })).toEqual(["fields[0].validation.protocols"]);
    expect(url({ protocols: ["https:"] })).toEqual(["fields[0].validation.protocols"]);
    expect(url({ protocols: "https" })).toEqual(["fields[0].validation.protocols"]);
  });
  test("domains", () => {
    expect(url({ domains: [""] })).toEqual(["fields[0].validation.domains"]);
  });
});

describe("validateFormFields: date keys", () => {
  const date = (validation: Record<string, unknown>) => paths(one({ name: "f", type: "date", validation }));
  test("valid", () => {
    expect(date({ format: "MM/DD/YYYY", min: "01/01/2024", max: "12/31/2024" })).toEqual([]);
    expect(date({ min: "2024-01-01", max: "2024-12-31" })).toEqual([]);
    expect(date({ format: "DD.MM.YYYY", min: "2024-01-01" })).toEqual([]); // ISO bounds always accepted
  });
  test.each([["YYYY-MM-DD"], ["MM/DD/YYYY"], ["DD/MM/YYYY"], ["DD.MM.YYYY"], ["YYYY/MM/DD"]])("format %p", (format) => {
    expect(date({ format })).toEqual([]);
  });
  test("unsupported format", () => {
    expect(date({ format: "D MMM YYYY" })).toEqual(["fields[0].validation.format"]);
  });
  test("min / max must be real dates in the format", () => {
    expect(date({ min: "2024-02-30" })).toEqual(["fields[0].validation.min"]);
    expect(date({ format: "DD/MM/YYYY", max: "31/31/2024" })).toEqual(["fields[0].validation.max"]);
    expect(date({ min: 20240101 })).toEqual(["fields[0].validation.min"]);
  });
  test("min not after max", () => {
    expect(date({ min: "2024-12-31", max: "2024-01-01" })).toEqual(["fields[0].validation.min"]);
  });
});

describe("date helpers", () => {
  test("parseDateInFormat normalises to ISO and checks the calendar", () => {
    expect(parseDateInFormat("2024-02-29")).toBe("2024-02-29");
    expect(parseDateInFormat("2023-02-29")).toBeNull();
    expect(parseDateInFormat("1900-02-29")).toBeNull();
    expect(parseDateInFormat("2000-02-29")).toBe("2000-02-29");
    expect(parseDateInFormat("2024-04-31")).toBeNull();
    expect(parseDateInFormat("2024-13-01")).toBeNull();
    expect(parseDateInFormat("2024-00-10")).toBeNull();
    expect(parseDateInFormat("3/5/2024", "MM/DD/YYYY")).toBe("2024-03-05");
    expect(parseDateInFormat("3/5/2024", "DD/MM/YYYY")).toBe("2024-05-03");
    expect(parseDateInFormat("31.12.2024", "DD.MM.YYYY")).toBe("2024-12-31");
    expect(parseDateInFormat("2024/12/31", "YYYY/MM/DD")).toBe("2024-12-31");
    expect(parseDateInFormat("2024-12-31", "MM/DD/YYYY")).toBeNull();
    expect(parseDateInFormat("2024-12-31T10:00:00Z")).toBeNull();
  });
  test("parseDateBound takes the field's format or ISO", () => {
    expect(parseDateBound("12/31/2024", "MM/DD/YYYY")).toBe("2024-12-31");
    expect(parseDateBound("2024-12-31", "MM/DD/YYYY")).toBe("2024-12-31");
    expect(parseDateBound(5)).toBeNull();
  });
});

describe("pattern helpers", () => {
  test("compilePattern prefers unicode mode and falls back", () => {
    expect(compilePattern("^\\p{L}+$")!.test("Zoë")).toBe(true);
    expect(compilePattern("[\\w-.]")).not.toBeNull();
    expect(compilePattern("(")).toBeNull();
  });
  test.each([
    ["(a+)+", true],
    ["(a*)*", true],
    ["(\\w+\\s?)*", true],
    ["([a-z]+){2,}", true],
    ["(?:x+y)+", true],
    ["((ab)+c)+", true],
    ["^\\d{3}-\\d{4}$", false],
    ["(\\d{3}-)+", false],
    ["(a|b)+", false],
    ["[(a+)]+", false],
    ["\\(a+\\)+", false],
    ["(a+)?", false],
    ["(a+){3}", false],
  ])("hasNestedUnboundedQuantifier(%p) = %p", (pattern, expected) => {
    expect(hasNestedUnboundedQuantifier(pattern)).toBe(expected);
  });
});

describe("validateFormSettings", () => {
  test("absent settings are valid", () => {
    expect(validateFormSettings(undefined)).toEqual([]);
    expect(validateFormSettings(null)).toEqual([]);
    expect(validateFormSettings({})).toEqual([]);
  });
  test("a full valid object", () => {
    expect(
      validateFormSettings({
        autoSend: false,
        delayMinutes: 525600,
        timezone: "America/New_York",
        rateLimitPerDay: 1,
        defaultPriority: "urgent",
      }),
    ).toEqual([]);
    expect(validateFormSettings({ rateLimitPerDay: null, timezone: "UTC", delayMinutes: 0 })).toEqual([]);
  });
  test("not an object", () => {
    expect(paths(validateFormSettings("x"))).toEqual(["settings"]);
    expect(paths(validateFormSettings([]))).toEqual(["settings"]);
  });
  test("unknown keys", () => {
    expect(paths(validateFormSettings({ autosend: true }))).toEqual(["settings.autosend"]);
  });
  test("every bad value is reported", () => {
    expect(
      paths(
        validateFormSettings({
          autoSend: "yes",
          delayMinutes: 525601,
          timezone: "Mars/Olympus",
          rateLimitPerDay: 0,
          defaultPriority: "asap",
        }),
      ),
    ).toEqual([
      "settings.autoSend",
      "settings.delayMinutes",
      "settings.timezone",
      "settings.rateLimitPerDay",
      "settings.defaultPriority",
    ]);
  });
  test.each([[-1], [1.5], ["5"], [null]])("delayMinutes %p refused", (delayMinutes) => {
    expect(paths(validateFormSettings({ delayMinutes }))).toEqual(["settings.delayMinutes"]);
  });
  test.each([[2.5], ["10"], [-3]])("rateLimitPerDay %p refused", (rateLimitPerDay) => {
    expect(paths(validateFormSettings({ rateLimitPerDay }))).toEqual(["settings.rateLimitPerDay"]);
  });
  test.each([[""], [5], ["EST5EDT_nope"]])("timezone %p refused", (timezone) => {
    expect(paths(validateFormSettings({ timezone }))).toEqual(["settings.timezone"]);
  });
  test("resolveFormSettings fills defaults", () => {
    expect(resolveFormSettings(undefined)).toEqual({ ...DEFAULT_FORM_SETTINGS });
    expect(resolveFormSettings({ timezone: "Europe/Paris", rateLimitPerDay: 20, defaultPriority: "high" })).toEqual({
      autoSend: true,
      delayMinutes: 0,
      timezone: "Europe/Paris",
      rateLimitPerDay: 20,
      maxAttempts: 2,
      language: "en-US",
      defaultPriority: "high",
      consentField: null,
    });
    expect(resolveFormSettings({ consentField: "smsConsent" }).consentField).toBe("smsConsent");
  });
  test.each([[""], [5], ["has space"], ["x".repeat(101)]])("consentField %p refused", (consentField) => {
    expect(paths(validateFormSettings({ consentField }))).toEqual(["settings.consentField"]);
  });
  test("consentField may be null or a field name", () => {
    expect(validateFormSettings({ consentField: null })).toEqual([]);
    expect(validateFormSettings({ consentField: "smsConsent" })).toEqual([]);
  });
});

describe("validateTemplate", () => {
  test("valid", () => {
    expect(validateTemplate("Hi {{firstName}}")).toEqual([]);
    expect(validateTemplate("x".repeat(MAX_TEMPLATE_LENGTH))).toEqual([]);
    expect(validateTemplate("😀".repeat(MAX_TEMPLATE_LENGTH))).toEqual([]); // characters, not UTF-16 units
  });
  test.each([[undefined], [null], [""], ["   "]])("%p is required", (t) => {
    expect(validateTemplate(t)).toEqual([{ field: "messageTemplate", message: "messageTemplate is required" }]);
  });
  test("must be a string", () => {
    expect(paths(validateTemplate(42))).toEqual(["messageTemplate"]);
  });
  test("at most 1600 characters", () => {
    const e = validateTemplate("x".repeat(MAX_TEMPLATE_LENGTH + 1));
    expect(paths(e)).toEqual(["messageTemplate"]);
    expect(e[0].message).toContain("1600");
  });
});

describe("settings.timezone follows the analytics rule", () => {
  test("IANA names pass; raw offsets, which stats would refuse as a default zone, do not", () => {
    expect(validateFormSettings({ timezone: "America/New_York" })).toEqual([]);
    expect(validateFormSettings({ timezone: "UTC" })).toEqual([]);
    for (const tz of ["+05:00", "-0300", "Mars/Olympus", ""]) {
      expect(validateFormSettings({ timezone: tz }).map((e) => e.field)).toEqual(["settings.timezone"]);
    }
  });
});
