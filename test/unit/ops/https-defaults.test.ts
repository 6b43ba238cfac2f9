import { describe, expect, test } from "bun:test";
import { httpsPortDefaults } from "../../../src/config";
import { choosePublicAddress, parsePublicAddress } from "../../../src/domain/public-address";
import { parseBusinessProfile, replyName } from "../../../src/domain/business-profile";

describe("ports when HTTPS is turned on", () => {
  const none = () => false;
  test("with a certificate and no --port: HTTPS on 8443, the old port 8080 redirects", () => {
    expect(httpsPortDefaults(true, none)).toEqual({ TEXTWIRE_PORT: "8443", TEXTWIRE_REDIRECT_PORT: "8080" });
  });
  test("a chosen --port is kept (no redirect listener unless asked); a chosen --redirect-port is kept", () => {
    expect(httpsPortDefaults(true, (f) => f === "port")).toEqual({});
    expect(httpsPortDefaults(true, (f) => f === "redirect-port")).toEqual({ TEXTWIRE_PORT: "8443" });
  });
  test("plain HTTP: nothing changes", () => {
    expect(httpsPortDefaults(false, none)).toEqual({});
  });
});

describe("the public address", () => {
  test("flag > setting > request", () => {
    expect(choosePublicAddress("https://flag.example/", "https://saved.example", "http://localhost:8080")).toEqual({ url: "https://flag.example", source: "flag" });
    expect(choosePublicAddress(undefined, "https://saved.example", "http://localhost:8080")).toEqual({ url: "https://saved.example", source: "setting" });
    expect(choosePublicAddress(undefined, null, "http://localhost:8080")).toEqual({ url: "http://localhost:8080", source: "request" });
  });
  test("typed addresses: a bare name is https, the origin is kept, a path is refused", () => {
    expect(parsePublicAddress("sms.example.com")).toEqual({ ok: true, url: "https://sms.example.com" });
    expect(parsePublicAddress(" HTTPS://SMS.example.com:8443/ ")).toEqual({ ok: true, url: "https://sms.example.com:8443" });
    expect(parsePublicAddress("http://192.168.1.5:8080")).toEqual({ ok: true, url: "http://192.168.1.5:8080" });
    expect(parsePublicAddress("https://x.example/v1").ok).toBe(false);
    expect(parsePublicAddress("ftp://x.example").ok).toBe(false);
  });
});

describe("the business's name in replies", () => {
  test("the name once a person set it, else \"this number\"", () => {
    expect(replyName("Rosa's Bakery", true)).toBe("Rosa's Bakery");
    expect(replyName("Default account", false)).toBe("this number");
  });
  test("a profile is checked as a whole", () => {
    expect(parseBusinessProfile({ name: " A  B ", country: "fr", timeZone: "europe/paris" })).toEqual({ ok: true, profile: { name: "A B", country: "FR", timeZone: "Europe/Paris" } });
    const r = parseBusinessProfile({ name: "", country: "ZZ", timeZone: "Nowhere" });
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(["name", "country", "timeZone"]);
  });
});
