import { describe, expect, test } from "bun:test";
import { contactZone, guessTimeZone, parseContactTimeZone, SINGLE_ZONE_COUNTRIES } from "../../../src/domain/contact-time-zone";
import { afterQuietHours } from "../../../src/domain/quiet-hours";
import { canonicalTimeZone } from "../../../src/domain/time-series";

describe("guessTimeZone", () => {
  test("a single-zone country's number gets its zone", () => {
    expect(guessTimeZone("+447400123456")).toBe("Europe/London");
    expect(guessTimeZone("+33612345678")).toBe("Europe/Paris");
    expect(guessTimeZone("+4915123456789")).toBe("Europe/Berlin");
    expect(guessTimeZone("+819012345678")).toBe("Asia/Tokyo");
    expect(guessTimeZone("+919812345678")).toBe("Asia/Kolkata");
    expect(guessTimeZone("+64211234567")).toBe("Pacific/Auckland");
  });
  test("countries with several zones get no guess", () => {
    expect(guessTimeZone("+14155552671")).toBeNull(); // US
    expect(guessTimeZone("+16135550123")).toBeNull(); // CA
    expect(guessTimeZone("+61412345678")).toBeNull(); // AU
    expect(guessTimeZone("+5511912345678")).toBeNull(); // BR
    expect(guessTimeZone("+79123456789")).toBeNull(); // RU
  });
  test("a number that does not parse gets no guess", () => {
    expect(guessTimeZone("")).toBeNull();
    expect(guessTimeZone("+999")).toBeNull();
  });
  test("every zone in the table is a canonical IANA name", () => {
    for (const [country, zone] of Object.entries(SINGLE_ZONE_COUNTRIES)) {
      expect(`${country} ${canonicalTimeZone(zone)}`).toBe(`${country} ${zone}`);
    }
    for (const c of ["US", "CA", "AU", "BR", "MX", "RU"]) expect(SINGLE_ZONE_COUNTRIES[c]).toBeUndefined();
  });
});

describe("contactZone", () => {
  test("the contact's own zone wins, then the number's guess, then the form's", () => {
    expect(contactZone("Europe/London", "+14155552671", "America/Chicago")).toBe("Europe/London");
    expect(contactZone("Asia/Tokyo", "+33612345678", "America/Chicago")).toBe("Asia/Tokyo");
    expect(contactZone(null, "+33612345678", "America/Chicago")).toBe("Europe/Paris");
    expect(contactZone(null, "+14155552671", "America/Chicago")).toBe("America/Chicago");
    expect(contactZone(undefined, null, "UTC")).toBe("UTC");
  });
  test("quiet hours read in the chosen zone", () => {
    // 03:00 UTC in January: 22:00 in Chicago (quiet), 03:00 in London (quiet until 08:00 London).
    const at = Date.parse("2026-01-15T03:00:00Z");
    const quiet = { start: "21:00", end: "08:00" };
    expect(new Date(afterQuietHours(at, contactZone("Europe/London", "+14155552671", "America/Chicago"), quiet)).toISOString()).toBe("2026-01-15T08:00:00.000Z");
    expect(new Date(afterQuietHours(at, contactZone(null, "+14155552671", "America/Chicago"), quiet)).toISOString()).toBe("2026-01-15T14:00:00.000Z");
  });
});

describe("parseContactTimeZone", () => {
  test("canonical spelling of a known zone; null otherwise", () => {
    expect(parseContactTimeZone("europe/london")).toBe("Europe/London");
    expect(parseContactTimeZone(" Asia/Tokyo ")).toBe("Asia/Tokyo");
    expect(parseContactTimeZone("Mars/Olympus")).toBeNull();
    expect(parseContactTimeZone("+02:00")).toBeNull();
    expect(parseContactTimeZone(42)).toBeNull();
    expect(parseContactTimeZone("")).toBeNull();
  });
});
