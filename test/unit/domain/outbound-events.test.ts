import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { eventBody, formatSecret, RETRY_SCHEDULE_MS, retryDelay, signature, subscribes, webhookHeaders, DISABLE_AFTER_MS, SECRET_OVERLAP_MS, DELIVERY_TIMEOUT_MS } from "../../../src/domain/outbound-events";
import { classifyAddress, judgeEventTarget } from "../../../src/domain/event-url";

describe("retry schedule", () => {
  test("5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed (eight attempts, about 27 h)", () => {
    const s = 1_000, m = 60_000, h = 3_600_000;
    expect([...RETRY_SCHEDULE_MS]).toEqual([5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h]);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(n))).toEqual([...RETRY_SCHEDULE_MS]);
    expect(retryDelay(8)).toBeNull();
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total / h).toBeCloseTo(27.6, 1);
    expect(retryDelay(2, [10, 20])).toBe(20);
    expect(retryDelay(3, [10, 20])).toBeNull();
    expect(DISABLE_AFTER_MS).toBe(3 * 24 * h);
    expect(SECRET_OVERLAP_MS).toBe(24 * h);
    expect(DELIVERY_TIMEOUT_MS).toBe(10 * s);
  });
});

describe("Standard Webhooks signature", () => {
  const secret = formatSecret(new Uint8Array(32).map((_, i) => i * 7));
  const body = eventBody("message.sent", "2026-11-23T09:00:00.000Z", { message: { id: "m1", content: "Hé ✓" } });
  const nowSec = Math.floor(Date.now() / 1000);

  test("secrets are whsec_ + base64 of at least 24 bytes", () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(() => formatSecret(new Uint8Array(23))).toThrow();
  });

  test("the standardwebhooks package verifies our headers, and refuses a changed body or another secret", () => {
    const headers = webhookHeaders([secret], "01a2-evt", nowSec, body);
    expect(Object.keys(headers).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
    expect(headers["webhook-signature"]).toBe(new Webhook(secret).sign("01a2-evt", new Date(nowSec * 1000), body));
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace("m1", "m2"), headers)).toThrow();
    const other = formatSecret(new Uint8Array(24).fill(9));
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
  });

  test("two secrets (rotation): two space-separated signatures, each valid for its secret", () => {
    const other = formatSecret(new Uint8Array(24).fill(9));
    const headers = webhookHeaders([other, secret], "id", nowSec, body);
    const parts = headers["webhook-signature"].split(" ");
    expect(parts).toEqual([signature(other, "id", nowSec, body), signature(secret, "id", nowSec, body)]);
    expect(new Webhook(secret).verify(body, headers)).toBeTruthy();
    expect(new Webhook(other).verify(body, headers)).toBeTruthy();
  });

  test("subscriptions: a listed type or *", () => {
    expect(subscribes(["*"], "message.sent")).toBe(true);
    expect(subscribes(["message.sent"], "message.sent")).toBe(true);
    expect(subscribes(["message.failed"], "message.sent")).toBe(false);
  });
});

describe("SSRF guard", () => {
  test("address kinds", () => {
    const cases: Record<string, string> = {
      "127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
      "169.254.169.254": "metadata", "::ffff:169.254.169.254": "metadata", "fd00:ec2::254": "metadata", "100.100.100.200": "metadata", "169.254.170.2": "metadata",
      "169.254.1.1": "link-local", "fe80::1": "link-local",
      "10.0.0.1": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private", "100.64.0.1": "private", "fd12:3456::1": "private",
      "172.32.0.1": "public", "8.8.8.8": "public", "2001:db8::1": "reserved",
      "0.0.0.0": "unspecified", "::": "unspecified", "224.0.0.1": "multicast", "255.255.255.255": "multicast", "ff02::1": "multicast",
      "1.2.3": "invalid", "not-an-ip": "invalid", "1::2::3": "invalid",
    };
    for (const [ip, kind] of Object.entries(cases)) expect([ip, classifyAddress(ip)]).toEqual([ip, kind]);
  });

  // IPv6 forms that carry an IPv4 address, for the metadata address and for loopback.
  const carrying = (v4: string) => {
    const [a, b, c, d] = v4.split(".").map(Number);
    const hi = ((a << 8) | b).toString(16);
    const lo = ((c << 8) | d).toString(16);
    const tHi = (((a << 8) | b) ^ 0xffff).toString(16);
    const tLo = (((c << 8) | d) ^ 0xffff).toString(16);
    return {
      "6to4 2002::/16": `2002:${hi}:${lo}::1`,
      "NAT64 64:ff9b::/96": `64:ff9b::${hi}:${lo}`,
      "NAT64 dotted": `64:ff9b::${v4}`,
      "local NAT64 64:ff9b:1::/48 (/96 layout)": `64:ff9b:1::${hi}:${lo}`,
      "IPv4-mapped ::ffff:0:0/96": `::ffff:${hi}:${lo}`,
      "IPv4-mapped dotted": `::ffff:${v4}`,
      "IPv4-translated ::ffff:0:0:0/96": `::ffff:0:${hi}:${lo}`,
      "IPv4-translated dotted": `::ffff:0:${v4}`,
      "IPv4-compatible ::/96": `::${hi}:${lo}`,
      "IPv4-compatible dotted": `::${v4}`,
      "Teredo 2001::/32 (client obfuscated)": `2001:0:4136:e378:8000:63bf:${tHi}:${tLo}`,
      "Teredo server": `2001:0:${hi}:${lo}:8000:63bf:f7f7:f7f7`,
    };
  };

  test.each([
    ["169.254.169.254", "metadata"],
    ["127.0.0.1", "loopback"],
    ["169.254.1.1", "link-local"],
    ["10.1.2.3", "private"],
    ["0.0.0.0", "unspecified"],
    ["192.0.2.1", "reserved"],
  ])("IPv6 transition forms of %s are judged as %s", (v4, kind) => {
    for (const [form, ip] of Object.entries(carrying(v4))) {
      // The Teredo server form carries our address as the server's: judged the same.
      expect([form, ip, classifyAddress(ip)]).toEqual([form, ip, kind]);
    }
  });

  test("the issue's forms: metadata and loopback in disguise", () => {
    for (const ip of ["2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe", "::ffff:0:a9fe:a9fe"]) expect([ip, classifyAddress(ip)]).toEqual([ip, "metadata"]);
    for (const ip of ["2002:7f00:1::1", "64:ff9b::7f00:1", "::ffff:0:7f00:1"]) expect([ip, classifyAddress(ip)]).toEqual([ip, "loopback"]);
    // Bracketed, as in a URL's host.
    expect(classifyAddress("[2002:a9fe:a9fe::1]")).toBe("metadata");
  });

  test("public controls: the same forms around a public IPv4 address are public", () => {
    for (const [form, ip] of Object.entries(carrying("8.8.8.8"))) {
      if (form.startsWith("local NAT64")) continue; // local-use NAT64 is never public
      if (form === "Teredo server") continue; // its client part (f7f7:f7f7 → 8.8.8.8) is public too, checked below
      expect([form, ip, classifyAddress(ip)]).toEqual([form, ip, "public"]);
    }
    expect(classifyAddress("2002:0808:0808::1")).toBe("public");
    expect(classifyAddress("2001:0:808:808:8000:63bf:f7f7:f7f7")).toBe("public");
    expect(classifyAddress("64:ff9b:1::808:808")).toBe("private");
    for (const ip of ["2001:4860:4860::8888", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "198.20.0.1", "192.0.3.1"]) {
      expect([ip, classifyAddress(ip)]).toEqual([ip, "public"]);
    }
  });

  test("other non-public ranges", () => {
    const cases: Record<string, string> = {
      "0.1.2.3": "unspecified", "100.64.0.1": "private", "100.127.255.255": "private", "169.254.0.1": "link-local",
      "198.18.0.1": "reserved", "198.19.255.255": "reserved", "192.0.0.8": "reserved", "192.0.2.55": "reserved", "198.51.100.7": "reserved",
      "203.0.113.9": "reserved", "192.88.99.1": "reserved", "240.0.0.1": "multicast", "239.255.255.250": "multicast",
      "fc00::1": "private", "fdff:ffff::1": "private", "fe80::1%eth0": "link-local", "febf::1": "link-local", "fec0::1": "private",
      "ff05::2": "multicast", "2001:db8:1::1": "reserved", "3fff::1": "reserved", "100::1": "reserved", "2001:2::1": "reserved",
      "2001:20::1": "reserved", "2001:10::1": "reserved", "4000::1": "reserved", "::2": "unspecified",
    };
    // ::2 is the IPv4-compatible form of 0.0.0.2 ("this network"): unspecified.
    for (const [ip, kind] of Object.entries(cases)) expect([ip, classifyAddress(ip)]).toEqual([ip, kind]);
  });

  test("verdicts", () => {
    const strict = { allowInsecure: false, allowPrivate: false };
    const u = (s: string) => new URL(s);
    expect(judgeEventTarget(u("https://example.com/h"), ["93.184.216.34"], strict).ok).toBe(true);
    expect(judgeEventTarget(u("https://example.com/h"), ["93.184.216.34", "127.0.0.1"], strict).ok).toBe(false); // any bad address refuses
    expect(judgeEventTarget(u("https://example.com/h"), [], strict).ok).toBe(false);
    expect(judgeEventTarget(u("https://lan.local/h"), ["192.168.1.9"], strict).ok).toBe(true);
    expect(judgeEventTarget(u("https://x/h"), ["169.254.169.254"], { allowInsecure: true, allowPrivate: true }).ok).toBe(false);
    expect(judgeEventTarget(u("https://x/h"), ["127.0.0.1"], { allowInsecure: false, allowPrivate: true }).ok).toBe(true);
    expect(judgeEventTarget(u("http://x/h"), ["192.168.1.9"], strict).ok).toBe(false);
    expect(judgeEventTarget(u("http://x/h"), ["192.168.1.9"], { allowInsecure: true, allowPrivate: false }).ok).toBe(true);
    expect(judgeEventTarget(u("http://x/h"), ["93.184.216.34"], { allowInsecure: true, allowPrivate: true }).ok).toBe(false);
    expect(judgeEventTarget(u("ftp://x/h"), ["192.168.1.9"], strict).ok).toBe(false);
    const lax = { allowInsecure: true, allowPrivate: true };
    for (const ip of ["2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe", "::ffff:0:a9fe:a9fe", "192.0.2.1", "2001:db8::1", "198.18.0.1"]) {
      const v = judgeEventTarget(u("https://x/h"), [ip], lax);
      expect([ip, v.ok]).toEqual([ip, false]);
    }
    for (const ip of ["2002:7f00:1::1", "64:ff9b::7f00:1", "::ffff:0:7f00:1"]) {
      const v = judgeEventTarget(u("https://x/h"), [ip], strict);
      expect([ip, v.ok]).toEqual([ip, false]);
      expect(v.ok ? "" : v.reason).toContain("--allow-private-webhook-urls");
      expect(judgeEventTarget(u("https://x/h"), [ip], { allowInsecure: false, allowPrivate: true }).ok).toBe(true);
    }
    expect(judgeEventTarget(u("https://x/h"), ["2002:0808:0808::1"], strict).ok).toBe(true);
  });
});
