import { describe, expect, test } from "bun:test";
import { IpRangeList, inRange, parseCidr, parseIp } from "../../../src/lib/ip-ranges";

const bytes = (ip: string) => [...(parseIp(ip) ?? [])];

describe("IP addresses", () => {
  test("IPv4 dotted quads; nothing else is an IPv4 address", () => {
    expect(bytes("10.0.0.1")).toEqual([10, 0, 0, 1]);
    expect(bytes(" 255.255.255.255 ")).toEqual([255, 255, 255, 255]);
    for (const bad of ["256.0.0.1", "10.0.0", "10.0.0.1.2", "010.0.0.1", "1e1.0.0.1", "10.0.0.-1", "", "localhost", "10.0.0.1/8", "0x7f.0.0.1"]) {
      expect(parseIp(bad)).toBeNull();
    }
  });

  test("IPv6 in every written form; IPv4-mapped addresses read as IPv4; zones dropped", () => {
    expect(bytes("::1")).toEqual([...Array(15).fill(0), 1]);
    expect(bytes("::")).toEqual(Array(16).fill(0));
    expect(bytes("2001:db8::8:800:200c:417a")).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 8, 8, 0, 0x20, 0x0c, 0x41, 0x7a]);
    expect(bytes("2001:DB8:0:0:0:0:0:1")).toEqual(bytes("2001:db8::1"));
    expect(bytes("::ffff:127.0.0.1")).toEqual([127, 0, 0, 1]);
    expect(bytes("::ffff:7f00:1")).toEqual([127, 0, 0, 1]);
    expect(bytes("fe80::1%eth0")).toEqual(bytes("fe80::1"));
    expect(bytes("64:ff9b::10.0.0.1")).toHaveLength(16);
    for (const bad of ["1::2::3", "12345::1", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":::", "g::1", "::1.2.3", "1.2.3.4::", "::ffff:256.0.0.1", "1:2:3:4:5:6:7::8"]) {
      expect(parseIp(bad)).toBeNull();
    }
  });
});

describe("CIDR ranges", () => {
  test("a range matches inside its prefix only", () => {
    const r = parseCidr("10.0.0.0/8")!;
    expect(inRange(parseIp("10.255.1.2")!, r)).toBe(true);
    expect(inRange(parseIp("11.0.0.1")!, r)).toBe(false);
    const odd = parseCidr("192.168.1.128/25")!;
    expect(inRange(parseIp("192.168.1.200")!, odd)).toBe(true);
    expect(inRange(parseIp("192.168.1.127")!, odd)).toBe(false);
    expect(inRange(parseIp("1.2.3.4")!, parseCidr("0.0.0.0/0")!)).toBe(true);
    const v6 = parseCidr("fd00::/8")!;
    expect(inRange(parseIp("fd12:3456::1")!, v6)).toBe(true);
    expect(inRange(parseIp("fe80::1")!, v6)).toBe(false);
    expect(inRange(parseIp("2001:db8::ff")!, parseCidr("2001:db8::/120")!)).toBe(true);
    expect(inRange(parseIp("2001:db8::1:0")!, parseCidr("2001:db8::/120")!)).toBe(false);
  });

  test("one address is a /32 or /128; families never cross", () => {
    const one = parseCidr("10.0.0.1")!;
    expect(one.prefix).toBe(32);
    expect(inRange(parseIp("10.0.0.1")!, one)).toBe(true);
    expect(inRange(parseIp("10.0.0.2")!, one)).toBe(false);
    expect(parseCidr("::1")!.prefix).toBe(128);
    expect(inRange(parseIp("::1")!, parseCidr("0.0.0.0/0")!)).toBe(false);
    expect(inRange(parseIp("127.0.0.1")!, parseCidr("::/0")!)).toBe(false);
    // A mapped range is its IPv4 range: ::ffff:10.0.0.0/104 = 10.0.0.0/8.
    expect(inRange(parseIp("10.9.9.9")!, parseCidr("::ffff:10.0.0.0/104")!)).toBe(true);
  });

  test("bad ranges are refused", () => {
    for (const bad of ["10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8/8", "::/129", "10.0.0.0/8x", "example.com", "*", "10.0.0.0/ 8", "::ffff:10.0.0.0/95"]) {
      expect(parseCidr(bad)).toBeNull();
    }
  });

  test("a list names the first bad entry; contains() takes text and refuses non-addresses", () => {
    expect(() => IpRangeList.parse(["10.0.0.1", "proxy.local"])).toThrow('"proxy.local" is not an IP address or a CIDR range');
    const list = IpRangeList.parse(["127.0.0.0/8", "::1", "10.1.0.0/16"]);
    expect(list.contains("127.4.5.6")).toBe(true);
    expect(list.contains("::1")).toBe(true);
    expect(list.contains("::ffff:127.0.0.1")).toBe(true);
    expect(list.contains("10.1.200.3")).toBe(true);
    expect(list.contains("10.2.0.1")).toBe(false);
    expect(list.contains("unknown")).toBe(false);
    expect(list.contains("")).toBe(false);
  });
});
