import { describe, expect, test } from "bun:test";
import { getCountries, getCountryCallingCode, getExampleNumber } from "libphonenumber-js/max";
import examples from "libphonenumber-js/mobile/examples";
import { normalizePhone } from "../../src/domain/phone";
import { normalizePhoneFast } from "../../src/domain/phone-fast";

// mulberry32: the same numbers on every run.
let seed = 7;
const rnd = (n: number) => {
  let t = (seed = (seed + 0x6d2b79f5) | 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
};
const digits = (n: number) => Array.from({ length: n }, () => rnd(10)).join("");

describe("normalizePhoneFast gives normalizePhone's answer (issue 15: import speed)", () => {
  test("every +1 area code, 24 numbers each (exchanges of every kind): the same result, error or not", () => {
    let fast = 0;
    for (let npa = 200; npa <= 999; npa++) {
      for (let k = 0; k < 24; k++) {
        const nxx = k < 4 ? ["555", "211", "100", "958"][k] : `${2 + rnd(8)}${digits(2)}`;
        const n = `+1${npa}${nxx}${digits(4)}`;
        const want = normalizePhone(n, { label: "phoneNumber" });
        expect(normalizePhoneFast(n, { label: "phoneNumber" })).toEqual(want);
        if (want.ok) fast++;
      }
    }
    expect(fast).toBeGreaterThan(5_000); // valid numbers of many countries went through the fast path
  });

  test("every country's example mobile number, variants of it and random numbers of its length", () => {
    let seen = 0;
    for (const country of getCountries()) {
      const ex = getExampleNumber(country, examples);
      if (!ex) continue;
      const cc = getCountryCallingCode(country);
      const random = Array.from({ length: 10 }, () => `+${cc}${digits(ex.nationalNumber.length)}`);
      for (const n of [ex.number, ex.number.slice(0, -1), ex.number + "0", `+${cc}1${ex.nationalNumber}`, ...random]) {
        expect(normalizePhoneFast(n)).toEqual(normalizePhone(n));
        seen++;
      }
      if (cc === "1") expect(normalizePhoneFast(ex.number)).toMatchObject({ ok: true, country });
    }
    expect(seen).toBeGreaterThan(3_000);
  });

  test("other shapes go to normalizePhone: spaces, punctuation, a national number, 00, options", () => {
    for (const n of ["+1 201 555 0123", " +12015550123", "(201) 555-0123", "2015550123", "0012015550123", "+12015550123 ", "+1201555012", "+112015550123", "", 12015550123, null]) {
      expect(normalizePhoneFast(n)).toEqual(normalizePhone(n));
    }
    for (const opts of [{ regions: ["CA"] }, { regions: ["us"] }, { format: "national" as const }, { format: "international" as const }]) {
      for (const n of ["+12015550123", "+14165550123", "+18765550123"]) expect(normalizePhoneFast(n, opts)).toEqual(normalizePhone(n, opts));
    }
  });
});
