import { describe, expect, test } from "bun:test";
import { ConfigError, defaultServeConfig, withHttpsPorts, type ServeConfig } from "../../../src/config";
import { choosePublicAddress, parsePublicAddress } from "../../../src/domain/public-address";
import { parseBusinessProfile, replyName } from "../../../src/domain/business-profile";

describe("ports when HTTPS is turned on: the plain-HTTP port keeps answering, whatever --port was", () => {
  const cfg = (o: Partial<ServeConfig>) => defaultServeConfig(o);
  const given = (...flags: string[]) => (f: string) => flags.includes(f);
  test("tls init / --tls-cert and no --port: HTTPS on 8443, the old port 8080 forwards", () => {
    expect(withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k" }), given())).toMatchObject({ port: 8443, redirectPort: 8080 });
  });
  test("a chosen --port stays the plain port and forwards; HTTPS on --https-port (8443 when not given)", () => {
    expect(withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k", port: 9000 }), given("port"))).toMatchObject({ port: 8443, redirectPort: 9000 });
    expect(withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k", port: 9000, httpsPort: 9443 }), given("port", "https-port"))).toMatchObject({ port: 9443, redirectPort: 9000 });
  });
  test("--domain: plain HTTP on 80 and HTTPS on 443 unless told otherwise", () => {
    expect(withHttpsPorts(cfg({ domains: ["sms.example.com"] }), given())).toMatchObject({ port: 443, redirectPort: 80 });
    expect(withHttpsPorts(cfg({ domains: ["sms.example.com"], port: 8080, httpsPort: 8443 }), given("port", "https-port"))).toMatchObject({ port: 8443, redirectPort: 8080 });
  });
  test("the older --redirect-port form keeps its meaning: HTTPS on --port", () => {
    expect(withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k", redirectPort: 8080 }), given("redirect-port"))).toMatchObject({ port: 8443, redirectPort: 8080 });
    expect(withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k", port: 443, redirectPort: 80 }), given("port", "redirect-port"))).toMatchObject({ port: 443, redirectPort: 80 });
  });
  test("the same port for both is refused; plain HTTP changes nothing", () => {
    expect(() => withHttpsPorts(cfg({ tlsCert: "c", tlsKey: "k", port: 8443 }), given("port"))).toThrow(ConfigError);
    expect(withHttpsPorts(cfg({ port: 9000 }), given("port"))).toMatchObject({ port: 9000, redirectPort: undefined });
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
