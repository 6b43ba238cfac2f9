import { describe, expect, test } from "bun:test";
import { clientAddress } from "../../../src/http/forwarded";
import { IpRangeList } from "../../../src/lib/ip-ranges";
import { ConfigError, LOOPBACK_PROXIES, buildServeConfig, parseArgs, parseTrustProxy } from "../../../src/config";
import { runCli } from "../../../src/main";

const proxies = IpRangeList.parse(["10.0.0.1", "10.9.0.0/16", "fd00::/8"]);

describe("the client's address behind trusted proxies", () => {
  test("a peer that is not a trusted proxy is the client, whatever it forwards", () => {
    expect(clientAddress("127.0.0.1", "1.2.3.4", proxies)).toEqual({ clientIp: "127.0.0.1", viaProxy: false });
    expect(clientAddress("203.0.113.9", "10.0.0.1", proxies)).toEqual({ clientIp: "203.0.113.9", viaProxy: false });
    // Off: nothing forwarded counts.
    expect(clientAddress("10.0.0.1", "1.2.3.4", null)).toEqual({ clientIp: "10.0.0.1", viaProxy: false });
    expect(clientAddress(undefined, "1.2.3.4", proxies)).toEqual({ clientIp: "unknown", viaProxy: false });
  });

  test("from a trusted proxy: the right-most entry that is not itself a trusted proxy", () => {
    expect(clientAddress("10.0.0.1", "198.51.100.7", proxies)).toEqual({ clientIp: "198.51.100.7", viaProxy: true });
    // What the client wrote itself (left) is passed over.
    expect(clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7", proxies).clientIp).toBe("198.51.100.7");
    // A chain of trusted proxies is walked through.
    expect(clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.9.3.4", proxies).clientIp).toBe("198.51.100.7");
    expect(clientAddress("fd00::5", "2001:db8::7, fd00::6", proxies).clientIp).toBe("2001:db8::7");
    // Ports and brackets some proxies add.
    expect(clientAddress("10.0.0.1", "198.51.100.7:5555", proxies).clientIp).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.1", "[2001:db8::7]:443", proxies).clientIp).toBe("2001:db8::7");
  });

  test("no header, only proxies, or an entry that is not an address: the nearest hop", () => {
    expect(clientAddress("10.0.0.1", null, proxies)).toEqual({ clientIp: "10.0.0.1", viaProxy: true });
    expect(clientAddress("10.0.0.1", "  ", proxies).clientIp).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", "10.9.1.1, 10.9.1.2", proxies).clientIp).toBe("10.9.1.1");
    expect(clientAddress("10.0.0.1", "1.2.3.4, unknown", proxies).clientIp).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", "1.2.3.4, nonsense, 10.9.1.2", proxies).clientIp).toBe("10.9.1.2");
  });
});

describe("--trust-proxy and TEXTWIRE_TRUST_PROXY", () => {
  const cfg = (argv: string[], env: Record<string, string> = {}) => buildServeConfig(parseArgs(argv), env, false);

  test("absent or false: off; true or the bare flag: this machine only", () => {
    expect(cfg([]).trustProxy).toBe(false);
    for (const v of ["false", "0", "off", "no", ""]) expect(parseTrustProxy(v)).toEqual({ trustProxy: false });
    expect(cfg(["--trust-proxy"])).toMatchObject({ trustProxy: true, trustedProxies: LOOPBACK_PROXIES });
    expect(cfg(["--trust-proxy=true"])).toMatchObject({ trustProxy: true, trustedProxies: ["127.0.0.0/8", "::1"] });
    expect(cfg([], { TEXTWIRE_TRUST_PROXY: "true" })).toMatchObject({ trustProxy: true, trustedProxies: LOOPBACK_PROXIES });
    expect(cfg([], { TEXTWIRE_TRUST_PROXY: "false" }).trustProxy).toBe(false);
  });

  test("a list of addresses and ranges, from the flag (with = or a space) or the environment", () => {
    expect(cfg(["--trust-proxy=10.0.0.1,fd00::/8"])).toMatchObject({ trustProxy: true, trustedProxies: ["10.0.0.1", "fd00::/8"] });
    expect(cfg(["--trust-proxy", "10.0.0.0/8, 192.168.1.5"])).toMatchObject({ trustedProxies: ["10.0.0.0/8", "192.168.1.5"] });
    expect(cfg([], { TEXTWIRE_TRUST_PROXY: "172.16.0.0/12" })).toMatchObject({ trustProxy: true, trustedProxies: ["172.16.0.0/12"] });
    // The flag beats the variable.
    expect(cfg(["--trust-proxy=false"], { TEXTWIRE_TRUST_PROXY: "10.0.0.1" }).trustProxy).toBe(false);
  });

  test("a bad value stops the start with a message naming it", () => {
    for (const [v, part] of [
      ["proxy.example.com", '"proxy.example.com" is not an IP address or a CIDR range'],
      ["10.0.0.0/33", '"10.0.0.0/33"'],
      ["10.0.0.1,,10.0.0.2", "an empty entry"],
      ["10.0.0.1, yes", '"yes"'],
    ]) {
      expect(() => cfg([`--trust-proxy=${v}`])).toThrow(ConfigError);
      expect(() => cfg([`--trust-proxy=${v}`])).toThrow(part);
    }
  });

  test("the CLI refuses to start on a bad value: exit 2 and the reason", async () => {
    const err: string[] = [];
    const code = await runCli(["serve", "--trust-proxy", "my-proxy", "--db", "/nonexistent/never-created.db"], {
      out: () => {},
      err: (l: string) => err.push(l),
      env: {},
      isTTY: false,
    } as any);
    expect(code).toBe(2);
    expect(err.join("\n")).toContain('--trust-proxy: "my-proxy" is not an IP address or a CIDR range');
  });
});
