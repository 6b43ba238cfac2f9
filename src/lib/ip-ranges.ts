/**
 * IP addresses and CIDR ranges, IPv4 and IPv6, as bytes: the trusted reverse proxies of
 * `--trust-proxy` are matched against the TCP peer with these (docs/api-decisions.md, "Hostile
 * input, round two: bodies, paging and proxies"). Pure; no DNS, no host names.
 */

/** 4 bytes (IPv4) or 16 bytes (IPv6). An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is read as IPv4. */
export type IpBytes = Uint8Array;

function parseIpv4(text: string): IpBytes | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    // Decimal only, no leading zeros: "010" means 8 to some parsers and 10 to others.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIpv6(text: string): IpBytes | null {
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const words = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    const parts = s.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseIpv4(p);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return null;
    }
    return out;
  };
  const head = words(halves[0]);
  const tail = halves.length === 2 ? words(halves[1]) : [];
  if (!head || !tail) return null;
  // A dotted tail is allowed only at the very end.
  if (halves.length === 2 && halves[0].includes(".")) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** "10.0.0.1", "::1", "fe80::1%eth0" (zone dropped), "::ffff:10.0.0.1" (→ IPv4); null if not an address. */
export function parseIp(text: string): IpBytes | null {
  const t = text.trim();
  if (t.includes(":")) {
    const v6 = parseIpv6(t.replace(/%[\w.-]+$/, ""));
    if (!v6) return null;
    const mapped = v6.subarray(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
    return mapped ? v6.slice(12) : v6;
  }
  return parseIpv4(t);
}

export interface IpRange {
  bytes: IpBytes;
  prefix: number;
  /** The range as given, made canonical enough to print back ("10.0.0.0/8", "::1/128"). */
  text: string;
}

/** "10.0.0.0/8", "fd00::/8", or one address (a /32 or /128); null if not a range. */
export function parseCidr(text: string): IpRange | null {
  const t = text.trim();
  const slash = t.indexOf("/");
  const addr = slash === -1 ? t : t.slice(0, slash);
  const bytes = parseIp(addr);
  if (!bytes) return null;
  const bits = bytes.length * 8;
  let prefix = bits;
  if (slash !== -1) {
    const p = t.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) return null;
    prefix = Number(p);
    // ::ffff:10.0.0.0/104 is read as 10.0.0.0/8: the prefix counts the 96 mapped bits too.
    if (bytes.length === 4 && addr.includes(":")) prefix -= 96;
    if (prefix < 0 || prefix > bits) return null;
  }
  return { bytes, prefix, text: `${addr}/${prefix}` };
}

/** True when `ip` lies inside `range` (an IPv4 address never matches an IPv6 range, and back). */
export function inRange(ip: IpBytes, range: IpRange): boolean {
  if (ip.length !== range.bytes.length) return false;
  let left = range.prefix;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((ip[i] & mask) !== (range.bytes[i] & mask)) return false;
  }
  return true;
}

/** A set of ranges to test addresses against. */
export class IpRangeList {
  constructor(readonly ranges: readonly IpRange[]) {}

  /** Parses every entry; throws naming the first one that is not an address or a CIDR range. */
  static parse(entries: readonly string[]): IpRangeList {
    return new IpRangeList(
      entries.map((e) => {
        const r = parseCidr(e);
        if (!r) throw new Error(`"${e.trim().slice(0, 60)}" is not an IP address or a CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, fd00::/8)`);
        return r;
      }),
    );
  }

  /** `ip` as text (a peer address, a forwarded entry); false for anything that is not an address. */
  contains(ip: string | IpBytes): boolean {
    const bytes = typeof ip === "string" ? parseIp(ip) : ip;
    return bytes !== null && this.ranges.some((r) => inRange(bytes, r));
  }
}
