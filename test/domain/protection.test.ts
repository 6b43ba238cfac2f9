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
} from "../../src/domain/protection";
import { prefersHtml } from "../../src/http/pages";
import { embedSnippet } from "../../src/domain/embed";

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
