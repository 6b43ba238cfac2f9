import { describe, expect, test } from "bun:test";
import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString } from "libphonenumber-js/max";
import examples from "libphonenumber-js/examples.mobile.json";
import { parseE164 } from "../../../src/domain/phone-e164";
import { normalizePhone } from "../../../src/domain/phone";

/** What libphonenumber-js itself says of `text` (as normalizePhone asked it before the fast path). */
function library(text: string) {
  const p = parsePhoneNumberFromString(text, "US");
  return p ? { number: p.number, country: p.country, countryCallingCode: p.countryCallingCode, valid: p.isValid(), type: p.getType() } : undefined;
}

/** A fixed pseudo-random sequence: the same numbers on every run. */
function random(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
}

/**
 * Numbers of every country the metadata knows: each country's example mobile number with its
 * tail redrawn (mostly valid numbers, some of every type), random national numbers behind each
 * calling code (mostly invalid ones, wrong lengths), and random `+digits`.
 */
function corpus(): string[] {
  const rnd = random(15);
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 10)).join("");
  const out: string[] = [];
  for (const country of getCountries()) {
    const cc = getCountryCallingCode(country);
    const ex = getExampleNumber(country, examples as any);
    if (ex) {
      const nn = ex.nationalNumber as string;
      for (let k = 0; k < 100; k++) {
        const keep = Math.floor(rnd() * nn.length);
        out.push(`+${cc}${nn.slice(0, keep)}${digits(nn.length - keep)}`);
      }
    }
    for (let k = 0; k < 30; k++) out.push(`+${cc}${digits(2 + Math.floor(rnd() * 14))}`);
  }
  for (let k = 0; k < 5000; k++) out.push(`+${1 + Math.floor(rnd() * 9)}${digits(2 + Math.floor(rnd() * 15))}`);
  return out;
}

describe("parseE164 answers exactly as libphonenumber-js", () => {
  test("on numbers of every country: same E.164, country, calling code, validity and type", () => {
    const numbers = corpus();
    let handled = 0;
    const validCountries = new Set<string>();
    const types = new Set<string>();
    const mismatches: string[] = [];
    for (const text of numbers) {
      const fast = parseE164(text);
      if (fast === undefined) continue; // left to the library: nothing to compare
      handled++;
      if (fast.valid && fast.country) validCountries.add(fast.country);
      types.add(String(fast.type));
      const lib = library(text);
      if (JSON.stringify(fast) !== JSON.stringify(lib) && mismatches.length < 10) mismatches.push(`${text}: fast ${JSON.stringify(fast)} library ${JSON.stringify(lib)}`);
    }
    expect(mismatches).toEqual([]);
    // The comparison covers the ground: nearly every input answered here, valid numbers from
    // (nearly) every country, and every answer type the webhook tells apart.
    expect(handled / numbers.length).toBeGreaterThan(0.85);
    expect(validCountries.size).toBeGreaterThan(200);
    for (const t of ["MOBILE", "FIXED_LINE", "FIXED_LINE_OR_MOBILE", "TOLL_FREE", "VOIP", "undefined"]) expect(types).toContain(t);
  });

  test("shared calling codes pick the library's country (NANP, +7, +44, +61, +590)", () => {
    for (const text of ["+14155552671", "+16135550123", "+18765550123", "+12425550123", "+79161234567", "+77012345678", "+447400123456", "+447624123456", "+61412345678", "+590690123456"]) {
      const fast = parseE164(text);
      expect(fast).toBeDefined();
      expect(fast).toEqual(library(text)!);
    }
  });

  test("what it does not reproduce step for step is left to the library", () => {
    // Not compact E.164, or a calling code starting with 0.
    for (const text of ["+1 415 555 2671", "4155552671", "+0123456789", "+12", "0044 7700 900123", "+1415555267a"]) expect(parseE164(text)).toBeUndefined();
    // Non-geographic calling codes (+800 freephone, +882 networks) and unknown ones.
    expect(parseE164("+80012345678")).toBeUndefined();
    expect(parseE164("+882123456789")).toBeUndefined();
    expect(parseE164("+2801234567")).toBeUndefined();
    // A national prefix the library may strip after the calling code (+1 1…, +44 0…).
    expect(parseE164("+114155552671")).toBeUndefined();
    expect(parseE164("+4407700900123")).toBeUndefined();
  });
});

describe("normalizePhone keeps its answers with the fast path", () => {
  test.each([
    ["+14155552671", { ok: true, e164: "+14155552671", country: "US" }],
    ["+447400123456", { ok: true, e164: "+447400123456", country: "GB" }],
    ["+4915112345678", { ok: true, e164: "+4915112345678", country: "DE" }],
    ["+5511912345678", { ok: true, e164: "+5511912345678", country: "BR" }],
  ])("%s", (input, expected) => {
    expect(normalizePhone(input)).toEqual(expected as any);
  });

  test("landlines, toll-free and invalid E.164 numbers are refused with the same words", () => {
    expect(normalizePhone("+442071838750", { label: "phoneNumber" })).toEqual({ ok: false, message: "phoneNumber is a landline and cannot receive text messages", requirement: "valid mobile phone number", visitor: "That number is a landline; please enter a mobile number." });
    expect(normalizePhone("+18005550199", { label: "phoneNumber" })).toEqual({ ok: false, message: "phoneNumber is a toll-free number and cannot receive text messages", requirement: "valid mobile phone number", visitor: "That number is a toll-free number; please enter a mobile number." });
    expect(normalizePhone("+1415555267", { label: "phoneNumber" })).toEqual({ ok: false, message: "phoneNumber is not a valid phone number", requirement: "valid mobile phone number", visitor: "Please enter a mobile phone number." });
  });

  test("regions and the international/national formats still apply to E.164 input", () => {
    expect(normalizePhone("+447400123456", { regions: ["us", "ca"] })).toMatchObject({ ok: false, requirement: "phone number from US, CA" });
    expect(normalizePhone("+14155552671", { format: "national" })).toMatchObject({ ok: false, requirement: "national format" });
    expect(normalizePhone("+14155552671", { format: "international" })).toEqual({ ok: true, e164: "+14155552671", country: "US" });
  });
});
