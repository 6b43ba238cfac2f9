import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { eventBody, formatSecret, RETRY_SCHEDULE_MS, retryDelay, signature, subscribes, webhookHeaders, DISABLE_AFTER_MS, SECRET_OVERLAP_MS, DELIVERY_TIMEOUT_MS } from "../../src/domain/outbound-events";
import { classifyAddress, judgeWebhookTarget } from "../../src/domain/webhook-url";

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
      "172.32.0.1": "public", "8.8.8.8": "public", "2001:db8::1": "public",
      "0.0.0.0": "unspecified", "::": "unspecified", "224.0.0.1": "multicast", "255.255.255.255": "multicast", "ff02::1": "multicast",
      "1.2.3": "invalid", "not-an-ip": "invalid", "1::2::3": "invalid",
    };
    for (const [ip, kind] of Object.entries(cases)) expect([ip, classifyAddress(ip)]).toEqual([ip, kind]);
  });

  test("verdicts", () => {
    const strict = { allowInsecure: false, allowPrivate: false };
    const u = (s: string) => new URL(s);
    expect(judgeWebhookTarget(u("https://example.com/h"), ["93.184.216.34"], strict).ok).toBe(true);
    expect(judgeWebhookTarget(u("https://example.com/h"), ["93.184.216.34", "127.0.0.1"], strict).ok).toBe(false); // any bad address refuses
    expect(judgeWebhookTarget(u("https://example.com/h"), [], strict).ok).toBe(false);
    expect(judgeWebhookTarget(u("https://lan.local/h"), ["192.168.1.9"], strict).ok).toBe(true);
    expect(judgeWebhookTarget(u("https://x/h"), ["169.254.169.254"], { allowInsecure: true, allowPrivate: true }).ok).toBe(false);
    expect(judgeWebhookTarget(u("https://x/h"), ["127.0.0.1"], { allowInsecure: false, allowPrivate: true }).ok).toBe(true);
    expect(judgeWebhookTarget(u("http://x/h"), ["192.168.1.9"], strict).ok).toBe(false);
    expect(judgeWebhookTarget(u("http://x/h"), ["192.168.1.9"], { allowInsecure: true, allowPrivate: false }).ok).toBe(true);
    expect(judgeWebhookTarget(u("http://x/h"), ["93.184.216.34"], { allowInsecure: true, allowPrivate: true }).ok).toBe(false);
    expect(judgeWebhookTarget(u("ftp://x/h"), ["192.168.1.9"], strict).ok).toBe(false);
  });
});
