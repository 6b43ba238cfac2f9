import { describe, expect, test } from "bun:test";
import {
  checkCountry,
  checkInsertedValues,
  containsLink,
  expandProtection,
  honeypotFilled,
  maskSecrets,
  normalizeOrigin,
  resolveProtection,
  validateProtectionSettings,
} from "../../../src/domain/protection";
import { prefersHtml } from "../../../src/http/pages";
import { embedSnippet } from "../../../src/domain/embed";

describe("containsLink", () => {
  test("URLs, www. and bare domains are links", () => {
    for (const s of ["http://evil.example/login", "Verify now at HTTPS://x.y", "evil.example/login", "www.bank.com", "go to bank.com now", "paypa1.co", "xn--80ak6aa92e.com", "site.io:8080"]) {
      expect(containsLink(s)).toBe(true);
    }
  });
  test("names, sentences, e-mail addresses and numbers are not", () => {
    for (const s of ["Ann", "Acme Inc.", "J.R.R. Tolkien", "Hi.Thanks a lot", "ann@example.com", "3.14", "Dr. Who", "e.g. tomorrow", "Your bank"]) {
      expect(containsLink(s)).toBe(false);
    }
  });
});

/** What the links rule must catch: the bypasses and their relatives. */
const BYPASSES: readonly string[] = [
  "1.2.3.4/login",
  "ｅｖｉｌ.com",
  "evil。example/login",
  "mailto:x@evil.example",
  '<a href="…">',
  '<a href="https://evil.example">click</a>',
  "<A HREF=evil>",
  "evil .example/x",
  "evil . com/login",
  "evil. com/login",
  "see evil .co/x today",
  "http://evil.example",
  "HTTPS://EVIL.EXAMPLE",
  "ｈｔｔｐｓ：／／evil.example",
  "hxxps://evil.example",
  "https:\\\\evil.example",
  "https:/evil.example",
  "://evil.example",
  "www.evil.example",
  "www。evil。com",
  "evil．com",
  "evil｡com/login",
  "evil﹒com",
  "evil\u2024com",
  "evil\u06D4com/x",
  "ev\u200Bil.com/x",
  "evil.c\u00ADom",
  "evil[.]com",
  "evil(.)com/x",
  "evil[dot]com",
  "𝐞𝐯𝐢𝐥.com",
  "ⓔⓥⓘⓛ.com",
  "javascript:alert(1)",
  "JAVASCRIPT:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data:,hello",
  "192.168.0.1",
  "10.0.0.1:8080",
  "call 8.8.8.8 now",
  "bank.co",
  "bank.COM",
  "раураl.com",
  "пример.рф",
  "xn--80ak6aa92e.com",
  "user@evil.example/login",
  "Visit evil.example:8443",
  "intent://scan/#Intent;scheme=zxing;end",
  "dr.com",
  "Mr.Smith.example/x",
];

/** What must pass: names, abbreviations, numbers, prices, times, versions, prose in several scripts. */
const ORDINARY: readonly string[] = [
  "Dr. Smith",
  "3.5 kg",
  "e.g.",
  "e.g. tomorrow",
  "i.e.",
  "St. John's",
  "No. 5",
  "10.30am",
  "v1.2",
  "v1.2.3",
  "v1.2.3.4",
  "version 2.0.1",
  "$3.50",
  "€3,50",
  "9.30",
  "3.14159",
  "1.5L",
  "Room 2.14",
  "Score 4.5/5",
  "Call 555.123.4567",
  "Price 1.234.567",
  "Mr.Smith",
  "Mr.Jo",
  "Dr.No",
  "St.Kitts",
  "Acme Inc.",
  "Smith & Sons Ltd.",
  "J.R.R. Tolkien",
  "Hi.Thanks a lot",
  "U.S.A.",
  "Ph.D.",
  "A.B.C. Plumbing",
  "See you at 5 p.m.",
  "Apt. 4B",
  "I finished. Com...",
  "Done. And/or later",
  "Yes. No/maybe",
  "yes. no/maybe",
  "I code in .NET/C#",
  "node.js",
  "C++/C#",
  "TCP/IP",
  "AC/DC",
  "10/12/2026",
  "50/50",
  "1/2 price",
  "Ratio 3:1",
  "10:30",
  "Tel: 555-1234",
  "tel:+14155550100",
  "Plan data: 5GB",
  "JavaScript: it's fun",
  "javascript developer",
  "File: report.pdf",
  "Note: call me after 6",
  "ann@example.com",
  "O'Brien-Smith",
  "www",
  "ありがとうございました。はい",
  "谢谢。好的",
  "Спасибо.Да",
  "Ελλάδα. Ναι",
];

describe("containsLink: the table", () => {
  test("has at least 25 entries on each side", () => {
    expect(BYPASSES.length).toBeGreaterThanOrEqual(25);
    expect(ORDINARY.length).toBeGreaterThanOrEqual(25);
  });
  test.each(BYPASSES.map((s) => [s]))("%p is a link", (s) => {
    expect(containsLink(s)).toBe(true);
  });
  test.each(ORDINARY.map((s) => [s]))("%p is not a link", (s) => {
    expect(containsLink(s)).toBe(false);
  });
  test("linear on long hostile input", () => {
    const inputs = ["a.".repeat(20_000), "a .".repeat(20_000), "1.".repeat(20_000), "ａ".repeat(40_000) + "。", "[.]".repeat(10_000), "a-".repeat(20_000) + ".x"];
    const start = performance.now();
    for (const t of inputs) containsLink(t);
    // Catches a quadratic blow-up, not a speed (a loaded machine passes): scripts/bench/hostile-input.ts measures it.
    expect(performance.now() - start).toBeLessThan(10_000);
  });
});

describe("checkInsertedValues: the links rule and e-mail fields", () => {
  test("an e-mail field's address is never a link; the same text in a text field is not one either", () => {
    const v = { phoneNumber: "+14155550100", email: "ann@evil.example", custom: { contact: "ann@evil.example", note: "mailto:ann@evil.example" } };
    expect(checkInsertedValues(v, ["email", "contact"], [{ name: "contact", type: "email" }], false)).toEqual([]);
    expect(checkInsertedValues(v, ["contact"], [], false)).toEqual([]);
    expect(checkInsertedValues(v, ["note"], [], false).map((e) => e.requirement)).toEqual(["no links"]);
  });
});

describe("checkInsertedValues", () => {
  const v = { phoneNumber: "+14155550100", firstName: "Ann", custom: { note: "see evil.example/x", other: "bank.com", long: "x".repeat(150) } };
  test("only values the template inserts are checked; fullName checks both names", () => {
    expect(checkInsertedValues(v, ["firstName"], [], false)).toEqual([]);
    expect(checkInsertedValues(v, ["note"], [], false).map((e) => [e.field, e.requirement])).toEqual([["note", "no links"]]);
    expect(checkInsertedValues(v, ["note"], [], true)).toEqual([]);
    expect(checkInsertedValues(v, ["note"], [{ name: "note", type: "url" }], false)).toEqual([]);
    expect(checkInsertedValues({ ...v, lastName: "www.x.com" }, ["fullName"], [], false).map((e) => e.field)).toEqual(["lastName"]);
  });
  test("template names that are Object.prototype members are field names", () => {
    const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "prototype", "valueOf", "__defineGetter__"];
    const custom = Object.fromEntries(names.map((n) => [n, "evil.example/x"]));
    expect(checkInsertedValues({ phoneNumber: "+14155550100", custom: {} }, names, [], false)).toEqual([]);
    expect(checkInsertedValues({ phoneNumber: "+14155550100", custom }, names, [], false).map((e) => e.field)).toEqual(names);
  });
  test("the cap: 100, or the field's larger maxLength", () => {
    expect(checkInsertedValues(v, ["long"], [], false)[0].requirement).toBe("max 100 characters");
    expect(checkInsertedValues(v, ["long"], [{ name: "long", type: "text", validation: { maxLength: 200 } }], false)).toEqual([]);
    expect(checkInsertedValues(v, ["long"], [{ name: "long", type: "text", validation: { maxLength: 50 } }], false)[0].requirement).toBe("max 100 characters");
  });
});

describe("checkCountry", () => {
  test("the list; VoIP, toll-free and premium numbers refused on a restricted form", () => {
    expect(checkCountry("+14155550100", ["US"])).toBeNull();
    expect(checkCountry("+447400123456", ["US", "CA"])).toMatchObject({ field: "phoneNumber", requirement: "a number in US, CA" });
    expect(checkCountry("+445612345678", ["GB"])?.requirement).toBe("a mobile number"); // UK VoIP range
  });
});

describe("settings", () => {
  test("recommended fills in; explicit wins; protection itself is not stored", () => {
    const out = expandProtection({ protection: "recommended", recipientLimitPerDay: 2 }, "CA");
    expect(out).toEqual({
      duplicateWindowMinutes: 10,
      ipLimitPerMinute: 10,
      recipientLimitPerDay: 2,
      honeypotField: "_gotcha",
      allowLinksInValues: false,
      allowedCountries: ["CA"],
    });
  });
  test("defaults: only honeypot and the links rule are on", () => {
    expect(resolveProtection({})).toEqual({
      successUrl: null,
      errorUrl: null,
      duplicateWindowMinutes: 0,
      ipLimitPerMinute: null,
      recipientLimitPerDay: null,
      allowedCountries: null,
      allowedOrigins: null,
      honeypotField: "_gotcha",
      captcha: null,
      allowLinksInValues: false,
      quietHours: null,
    });
    expect(resolveProtection({ honeypotField: null }).honeypotField).toBeNull();
  });
  test("secrets masked; stored secret kept when the mask is posted back", () => {
    expect(maskSecrets({ captcha: { provider: "turnstile", secret: "s" } })).toEqual({ captcha: { provider: "turnstile", secret: "••••" } });
    const stored = { provider: "turnstile", secret: "s" };
    expect(validateProtectionSettings({ captcha: { provider: "turnstile", secret: "••••" } }, [], stored)).toEqual([]);
    expect(expandProtection({ captcha: { provider: "turnstile", secret: "••••" } }, "US", stored)).toEqual({ captcha: stored });
    expect(validateProtectionSettings({ captcha: { provider: "turnstile", secret: "••••" } }, [])).toHaveLength(1);
  });
  test("a honeypot cannot be a declared field", () => {
    expect(validateProtectionSettings({ honeypotField: "company" }, [{ name: "company", type: "text" }]).map((e) => e.field)).toEqual(["settings.honeypotField"]);
  });
  test("origins", () => {
    expect(normalizeOrigin("https://Shop.Example:443/")).toBe("https://shop.example");
    expect(normalizeOrigin("http://localhost:3000")).toBe("http://localhost:3000");
    expect(normalizeOrigin("https://shop.example/contact")).toBeNull();
    expect(normalizeOrigin("ftp://shop.example")).toBeNull();
  });
  test("honeypotFilled", () => {
    expect(honeypotFilled({ _gotcha: "" }, "_gotcha")).toBe(false);
    expect(honeypotFilled({ _gotcha: "  " }, "_gotcha")).toBe(false);
    expect(honeypotFilled({ _gotcha: "x" }, "_gotcha")).toBe(true);
    expect(honeypotFilled({ _gotcha: 0 }, "_gotcha")).toBe(true);
    expect(honeypotFilled({ _gotcha: "x" }, null)).toBe(false);
  });
});

describe("prefersHtml", () => {
  test("browsers' form posts prefer HTML; API clients do not", () => {
    expect(prefersHtml("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toBe(true);
    expect(prefersHtml("text/html")).toBe(true);
    expect(prefersHtml(null)).toBe(false);
    expect(prefersHtml("*/*")).toBe(false);
    expect(prefersHtml("application/json")).toBe(false);
    expect(prefersHtml("application/json, text/html")).toBe(false);
    expect(prefersHtml("application/json;q=0.5, text/html")).toBe(true);
    expect(prefersHtml("text/html;q=0")).toBe(false);
  });
});

describe("embedSnippet", () => {
  test("escapes what the owner typed", () => {
    const html = embedSnippet({
      formName: "x",
      webhookUrl: "https://sms.example/v1/forms/abc/webhook",
      fields: [{ name: "note", type: "text", label: '<b>"Note"</b>' }],
      honeypotField: null,
      captcha: null,
    });
    expect(html).toContain("&lt;b&gt;&quot;Note&quot;&lt;/b&gt;");
    expect(html).not.toContain("_gotcha");
  });
  test("fields named like Object.prototype members get labels from their names", () => {
    const html = embedSnippet({
      formName: "x",
      webhookUrl: "https://sms.example/v1/forms/abc/webhook",
      fields: [{ name: "constructor", type: "text" }, { name: "toString", type: "text" }, { name: "__proto__", type: "text" }],
      honeypotField: null,
      captcha: null,
    });
    expect(html).toContain(">Constructor</label>");
    expect(html).toContain(">To string</label>");
    expect(html).not.toContain("function");
    expect(html).not.toContain("autocomplete=\"f");
  });
});
