import { describe, expect, test } from "bun:test";
import { normalizePhone, phoneDigits, MAX_PHONE_INPUT_LENGTH } from "../../../src/domain/phone";

function e164(input: unknown, opts?: Parameters<typeof normalizePhone>[1]): string {
  const r = normalizePhone(input, opts);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(input)} to be accepted, got: ${r.message}`);
  return r.e164;
}

function refused(input: unknown, opts?: Parameters<typeof normalizePhone>[1]) {
  const r = normalizePhone(input, opts);
  if (r.ok) throw new Error(`expected ${JSON.stringify(input)} to be refused, got ${r.e164}`);
  return r;
}

describe("normalizePhone: accepted input forms (spec list) default to US +1", () => {
  test.each([
    ["+14155552671"],
    ["(415) 555-2671"],
    ["415-555-2671"],
    ["415.555.2671"],
    ["4155552671"],
    ["1 415 555 2671"],
    ["1-415-555-2671"],
    ["14155552671"],
    ["+1 (415) 555-2671"],
    ["+1 415 555 2671"],
    ["  (415) 555-2671  "],
    ["415 / 555 2671"],
    ["415\t555\t2671"],
  ])("%p → +14155552671", (input) => {
    expect(e164(input)).toBe("+14155552671");
  });

  test("reports the country", () => {
    expect(normalizePhone("(201) 555-0123")).toEqual({ ok: true, e164: "+12015550123", country: "US" });
    expect(normalizePhone("+16135550123")).toEqual({ ok: true, e164: "+16135550123", country: "CA" });
  });

  test("international numbers with their country code", () => {
    expect(e164("+44 7400 123456")).toBe("+447400123456");
    expect(e164("+447911123456")).toBe("+447911123456");
    expect(e164("+33 6 12 34 56 78")).toBe("+33612345678");
    expect(e164("+49 151 12345678")).toBe("+4915112345678");
    expect(e164("+61 412 345 678")).toBe("+61412345678");
    expect(e164("+86 138 1234 5678")).toBe("+8613812345678");
  });

  test("the 00 international prefix is read as +", () => {
    expect(e164("0044 7400 123456")).toBe("+447400123456");
    expect(e164("00 1 415 555 2671")).toBe("+14155552671");
  });

  test("the US international dialling prefix 011 works", () => {
    expect(e164("011 44 7400 123456")).toBe("+447400123456");
  });

  test("other NANP countries keep their own country", () => {
    const r = normalizePhone("+1 242 359 1234");
    expect(r).toEqual({ ok: true, e164: "+12423591234", country: "BS" });
  });
});

describe("normalizePhone: numbers that cannot receive texts are refused", () => {
  test("UK landline (FIXED_LINE)", () => {
    const r = refused("+442071838750");
    expect(r.message).toContain("landline");
    expect(r.requirement).toBe("valid mobile phone number");
  });
  test("German landline", () => {
    expect(refused("+49 30 123456").message).toContain("landline");
  });
  test("US toll free", () => {
    expect(refused("+18005550199").message).toContain("toll-free");
    expect(refused("(800) 555-0199").message).toContain("toll-free");
  });
  test("US premium rate", () => {
    expect(refused("+19005550199").message).toContain("premium-rate");
  });
  test("UK UAN (03xx / 055)", () => {
    expect(refused("+44 300 123 4567").message).toContain("UAN");
    expect(refused("+44 55 1234 5678").message).toContain("UAN");
  });
  test("VOIP and personal numbers can receive texts", () => {
    expect(e164("+44 56 1234 5678")).toBe("+445612345678");
    expect(e164("+44 70 1234 5678")).toBe("+447012345678");
  });
});

describe("normalizePhone: invalid input", () => {
  test.each([
    [undefined],
    [null],
    [4155552671],
    [{}],
    [["+14155552671"]],
  ])("non-string %p", (input) => {
    expect(refused(input).message).toContain("must be a string");
  });

  test("empty and blank are 'required'", () => {
    expect(refused("").requirement).toBe("required");
    expect(refused("   ").requirement).toBe("required");
  });

  test("letters, vanity numbers and extensions are refused", () => {
    expect(refused("abc").message).toContain("only digits");
    expect(refused("1-800-FLOWERS").message).toContain("only digits");
    expect(refused("415 555 2671 ext. 5").message).toContain("only digits");
    expect(refused("415 555 2671 x12").message).toContain("only digits");
  });

  test("punctuation only", () => {
    expect(refused("(--)").message).toContain("digits");
    expect(refused("+").message).toContain("digits");
  });

  test("misplaced or repeated +", () => {
    expect(refused("1+4155552671").message).toContain("'+'");
    expect(refused("++14155552671").message).toContain("'+'");
  });

  test("too long", () => {
    const long = "+1 415 555 2671".padEnd(MAX_PHONE_INPUT_LENGTH + 1, "-");
    expect(refused(long).message).toContain(`${MAX_PHONE_INPUT_LENGTH} characters`);
    expect(e164("+1 415 555 2671".padEnd(MAX_PHONE_INPUT_LENGTH, " ") + "")).toBe("+14155552671");
  });

  test.each([["555-0123"], ["123"], ["+15555550123"], ["(123) 456-7890"], ["+999 123456789"], ["0000000000"]])(
    "not a valid number: %p",
    (input) => {
      expect(refused(input).message).toContain("not a valid phone number");
    },
  );

  test("label names the field in messages", () => {
    expect(refused("abc", { label: "mobile" }).message.startsWith("mobile ")).toBe(true);
    expect(refused(7, { label: "mobile" }).message).toBe("mobile must be a string");
  });
});

describe("normalizePhone: regions", () => {
  test("number from an allowed region passes", () => {
    expect(e164("+14155552671", { regions: ["US", "CA"] })).toBe("+14155552671");
    expect(e164("+16135550123", { regions: ["US", "CA"] })).toBe("+16135550123");
  });
  test("region codes are case-insensitive", () => {
    expect(e164("+447400123456", { regions: ["gb"] })).toBe("+447400123456");
  });
  test("number from another region is refused", () => {
    const r = refused("+447400123456", { regions: ["US", "CA"] });
    expect(r.message).toContain("US, CA");
    expect(r.requirement).toBe("phone number from US, CA");
  });
  test("NANP numbers outside the listed countries are refused", () => {
    expect(refused("+16135550123", { regions: ["US"] }).message).toContain("US");
  });
  test("numbers without a country (global services) are refused when regions are set", () => {
    expect(e164("+870773111632")).toBe("+870773111632");
    refused("+870773111632", { regions: ["US"] });
  });
  test("empty regions list means any", () => {
    expect(e164("+447400123456", { regions: [] })).toBe("+447400123456");
  });
});

describe("normalizePhone: format", () => {
  test("international requires + (or 00)", () => {
    expect(e164("+14155552671", { format: "international" })).toBe("+14155552671");
    expect(e164("0044 7400 123456", { format: "international" })).toBe("+447400123456");
    const r = refused("(415) 555-2671", { format: "international" });
    expect(r.requirement).toContain("international");
    refused("14155552671", { format: "international" });
  });
  test("national refuses a leading + or international prefix", () => {
    expect(e164("(415) 555-2671", { format: "national" })).toBe("+14155552671");
    expect(e164("1 415 555 2671", { format: "national" })).toBe("+14155552671");
    expect(refused("+14155552671", { format: "national" }).requirement).toBe("national format");
    expect(refused("0044 7400 123456", { format: "national" }).requirement).toBe("national format");
    expect(refused("011 44 7400 123456", { format: "national" }).requirement).toBe("national format");
  });
  test("format and regions combine", () => {
    refused("+447400123456", { format: "international", regions: ["US"] });
    expect(e164("+447400123456", { format: "international", regions: ["GB"] })).toBe("+447400123456");
  });
});

describe("phoneDigits", () => {
  test("keeps only digits", () => {
    expect(phoneDigits("+1 (415) 555-2671")).toBe("14155552671");
    expect(phoneDigits("abc")).toBe("");
    expect(phoneDigits("")).toBe("");
  });
});
