import { describe, expect, test } from "bun:test";
import { certificateCurrent, certificateUsable, challengeAnswer, explainAcmeFailure, type IssuedCertificate } from "../../../src/tls/acme";
import { parseDomains } from "../../../src/domain/public-names";

const DAY = 86_400_000;
const cert = (notAfter: number, domains = ["sms.example.com"]): IssuedCertificate => ({ domains, certPem: "", keyPem: "", notAfter: new Date(notAfter).toISOString(), issuedAt: "", directoryUrl: "" });

describe("the names a public certificate is for", () => {
  test("host names, comma-separated, lower-cased and without repeats", () => {
    expect(parseDomains(" SMS.example.com, www.example.com.,sms.example.com ")).toEqual({ ok: true, domains: ["sms.example.com", "www.example.com"] });
  });
  test("IP addresses, wildcards, single labels and nothing are refused in plain words", () => {
    for (const bad of ["192.168.1.20", "::1", "*.example.com", "intranet", "", " , ", "a b.example.com"]) expect(parseDomains(bad).ok).toBe(false);
    const r = parseDomains("192.168.1.20");
    expect(r.ok ? "" : r.message).toContain("IP address");
  });
});

describe("when a certificate is renewed", () => {
  const now = Date.parse("2027-01-01T00:00:00Z");
  test("current until 30 days before expiry, for the same names only", () => {
    expect(certificateCurrent(cert(now + 31 * DAY), ["sms.example.com"], now)).toBe(true);
    expect(certificateCurrent(cert(now + 29 * DAY), ["sms.example.com"], now)).toBe(false);
    expect(certificateCurrent(cert(now + 60 * DAY), ["other.example.com"], now)).toBe(false);
    expect(certificateCurrent(null, ["sms.example.com"], now)).toBe(false);
  });
  test("still served while due, until it expires", () => {
    expect(certificateUsable(cert(now + 1 * DAY), ["sms.example.com"], now)).toBe(true);
    expect(certificateUsable(cert(now - 1), ["sms.example.com"], now)).toBe(false);
  });
});

describe("failures in words an owner can act on", () => {
  const names = ["sms.example.com"];
  test("DNS, an unreachable port 80, a rate limit, an unreachable CA", () => {
    expect(explainAcmeFailure(new Error("DNS problem: NXDOMAIN looking up A for sms.example.com"), names, 80)).toContain("A (or AAAA) record pointing to this server");
    const port = explainAcmeFailure(new Error("Fetching http://sms.example.com/.well-known/acme-challenge/x: Connection refused"), names, 8080);
    expect(port).toContain("port 80 (forwarded to this server's port 8080)");
    expect(explainAcmeFailure(new Error("urn:ietf:params:acme:error:rateLimited: too many certificates already issued"), names, 80)).toContain("rate limit");
    expect(explainAcmeFailure(new Error("getaddrinfo ENOTFOUND acme-v02.api.letsencrypt.org"), names, 80)).toContain("could not be reached from this server");
  });
});

describe("the HTTP-01 answer", () => {
  const tokens = new Map([["tok", "tok.thumb"]]);
  test("a token on offer is answered; an unknown one is 404; other paths and methods are left alone", async () => {
    expect(await challengeAnswer(tokens, "GET", "/.well-known/acme-challenge/tok")!.text()).toBe("tok.thumb");
    expect(challengeAnswer(tokens, "GET", "/.well-known/acme-challenge/nope")!.status).toBe(404);
    expect(challengeAnswer(tokens, "POST", "/.well-known/acme-challenge/tok")).toBeNull();
    expect(challengeAnswer(tokens, "GET", "/v1/forms")).toBeNull();
  });
});
