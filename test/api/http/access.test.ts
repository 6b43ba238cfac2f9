import { describe, expect, test } from "bun:test";
import { classify, describeProvided, findCredential, redactPath } from "../../../src/http/access";
import { createLogger, redactKeys } from "../../../src/lib/log";
import { buildServeConfig, parseArgs, ConfigError } from "../../../src/config";

const KEY = "txwire_sk_" + "aB3".repeat(12) + "Zq9x";

describe("key redaction", () => {
  test("paths keep the prefix and the last 4 characters only", () => {
    expect(redactPath(`/v1/messages/${KEY}/abc/status`)).toBe("/v1/messages/txwire_sk_…Zq9x/abc/status");
    expect(redactPath("/v1/messages/txwire_sk_short")).toBe("/v1/messages/txwire_sk_…");
  });

  test("form ids, the webhook's credential, keep only their first 8 characters", () => {
    const id = "3f2b8c1e-9d4a-4e6b-8f00-1234567890ab";
    expect(redactPath(`/v1/forms/${id}/webhook`)).toBe("/v1/forms/3f2b8c1e…/webhook");
    expect(redactPath(`/v1/forms/${id}`)).toBe("/v1/forms/3f2b8c1e…");
    expect(redactPath("/v1/forms")).toBe("/v1/forms");
  });

  test("every log line is scrubbed, whatever field carries the key", () => {
    const lines: string[] = [];
    const log = createLogger("json", (l) => lines.push(l));
    log.info("request", { path: `/v1/messages/${KEY}`, note: `Bearer ${KEY}` });
    const pretty = createLogger("pretty", (l) => lines.push(l));
    pretty.error(`failed for ${KEY}`);
    for (const l of lines) {
      expect(l).not.toContain(KEY);
      expect(l).toContain("txwire_sk_…Zq9x");
    }
    expect(redactKeys(`a ${KEY} b ${KEY}`)).toBe("a txwire_sk_…Zq9x b txwire_sk_…Zq9x");
  });

  test("keys in any case, percent-encoded (even twice, or next to bad escapes) are redacted, and a JSON line stays JSON", () => {
    const lower = KEY.toLowerCase();
    for (const text of [
      KEY.toUpperCase(),
      `/v1/messages/%74xwire_sk_${KEY.slice(10)}/next`,
      `/v1/messages/%2574xwire_sk_${KEY.slice(10)}`,
      `/v1/messages/%E0%74xwire_sk_${KEY.slice(10)}`,
      `/v1/messages/%22${[...KEY].map((c) => "%" + c.charCodeAt(0).toString(16)).join("")}%22`,
    ]) {
      const out = redactKeys(text);
      expect(out.toLowerCase()).not.toContain(lower.slice(10));
      expect(out).toContain("txwire_sk_…");
    }
    const lines: string[] = [];
    createLogger("json", (l) => lines.push(l)).info("request", { path: `/v1/messages/%22%74xwire_sk_${KEY.slice(10)}%22` });
    expect(JSON.parse(lines[0]).path).toBe("/v1/messages/txwire_sk_…Zq9x");
  });

  test("a 401 shows at most the first 10 characters", () => {
    expect(describeProvided(null)).toBe("none");
    expect(describeProvided("")).toBe("none");
    expect(describeProvided(KEY)).toBe("txwire_sk_…");
  });
});

describe("credentials on messages routes", () => {
  test("the key in the path is taken and removed from the routed path", () => {
    expect(findCredential("messages", `/v1/messages/${KEY}/m1/status`, null)).toEqual({ presented: KEY, rewrittenPath: "/v1/messages/m1/status" });
    expect(findCredential("messages", `/v1/messages/${KEY}`, null)).toEqual({ presented: KEY, rewrittenPath: "/v1/messages" });
  });
  test("with a Bearer header the first segment is a message id, unless it looks like a key", () => {
    expect(findCredential("messages", "/v1/messages/m1", `Bearer ${KEY}`)).toEqual({ presented: KEY });
    expect(findCredential("messages", `/v1/messages/${KEY}/m1`, "Bearer other")).toEqual({ presented: KEY, rewrittenPath: "/v1/messages/m1" });
  });
  test("without any header the first segment is read as the key", () => {
    expect(findCredential("messages", "/v1/messages/not-a-key", null).presented).toBe("not-a-key");
    expect(findCredential("messages", "/v1/messages", null).presented).toBeNull();
  });
});

describe("route classes and permissions", () => {
  test("the webhook needs no key; everything else under /v1 does", () => {
    expect(classify("/v1/forms/abc/webhook")).toBe("webhook");
    expect(classify("/v1/forms/abc")).toBe("api");
    expect(classify("/v1/messages/x")).toBe("messages");
    expect(classify("/health")).toBe("public");
  });
  // Which key each route needs is declared on the route (test/api/http/route-access.test.ts); who may call each one: test/api/http/permissions.test.ts.
});

describe("config", () => {
  test("flag beats env beats default", () => {
    const env = { TEXTWIRE_PORT: "9000", TEXTWIRE_SEND_RATE_PER_MINUTE: "20", TEXTWIRE_TRUST_PROXY: "true" };
    const c = buildServeConfig(parseArgs(["--port", "7000"]), env, false);
    expect(c.port).toBe(7000);
    expect(c.sendRatePerMinute).toBe(20);
    expect(c.trustProxy).toBe(true);
    expect(c.webhookLimitPerMinute).toBe(100);
    expect(c.db).toBe("./data/textwire.db");
    expect(c.logFormat).toBe("json");
    expect(buildServeConfig(parseArgs([]), {}, true).logFormat).toBe("pretty");
  });
  test("bad values are refused with the option's name", () => {
    expect(() => buildServeConfig(parseArgs(["--port", "99999"]), {}, false)).toThrow(ConfigError);
    expect(() => buildServeConfig(parseArgs([]), { TEXTWIRE_PORT: "abc" }, false)).toThrow(/TEXTWIRE_PORT/);
    expect(() => buildServeConfig(parseArgs(["--tls-cert", "a.pem"]), {}, false)).toThrow(/tls-key/);
    expect(() => buildServeConfig(parseArgs(["--public-url", "not a url"]), {}, false)).toThrow(/public-url/);
    expect(() => buildServeConfig(parseArgs(["--log-format", "xml"]), {}, false)).toThrow(/log-format/);
    expect(() => buildServeConfig(parseArgs(["--backup-every", "soon", "--backup-dir", "/tmp"]), {}, false)).toThrow(/duration/);
    expect(() => buildServeConfig(parseArgs(["--commit-sync", "never"]), {}, false)).toThrow(/--commit-sync: expected background or inline/);
  });
  test("a commit's fsync runs off the main thread unless --commit-sync inline", () => {
    expect(buildServeConfig(parseArgs([]), {}, false).commitSync).toBe("background");
    expect(buildServeConfig(parseArgs(["--commit-sync", "inline"]), {}, false).commitSync).toBe("inline");
    expect(buildServeConfig(parseArgs([]), { TEXTWIRE_COMMIT_SYNC: "inline" }, false).commitSync).toBe("inline");
  });
});

describe("access lines are written in batches", () => {
  test("one write per event-loop turn, in order, nothing lost", async () => {
    const { LineBatcher } = await import("../../../src/lib/log");
    const writes: string[] = [];
    const batch = new LineBatcher((t) => writes.push(t));
    for (let i = 0; i < 50; i++) batch.write(`line ${i}`);
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes.length).toBe(1);
    expect(writes[0]).toBe(Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n") + "\n");
    batch.write("late");
    batch.flush();
    expect(writes[1]).toBe("late\n");
  });
});
