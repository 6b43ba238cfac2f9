/**
 * SSRF guard for outbound event URLs. Pure: the caller resolves the host and passes
 * the addresses. Rules:
 *   - cloud metadata addresses (169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254):
 *     never;
 *   - unspecified, multicast, broadcast, documentation, benchmarking and other reserved addresses:
 *     never (nothing can receive events there);
 *   - loopback (127/8, ::1) and link-local (169.254/16, fe80::/10): only with
 *     --allow-private-webhook-urls;
 *   - private LAN ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): allowed (LAN
 *     receivers are common for this product);
 *   - https always; http only with `allowInsecure` and only when every address is loopback or LAN.
 *
 * An IPv6 address that carries an IPv4 address (IPv4-mapped, -translated and -compatible, NAT64,
 * 6to4, Teredo) is judged as that IPv4 address: `[64:ff9b::a9fe:a9fe]` reaches 169.254.169.254
 * through a NAT64 gateway, so it is metadata, not "public" (docs/api-decisions.md, "Hostile
 * input, round two: template names, the links rule, outbound addresses").
 */
export type AddressKind = "metadata" | "unspecified" | "multicast" | "reserved" | "loopback" | "link-local" | "private" | "public" | "invalid";

const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);

function v4Octets(ip: string): number[] | null {
  const parts = ip.split(".");
  if (parts.length !== 4) return null;
  const o = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return o.every((n) => n >= 0 && n <= 255) ? o : null;
}

/** Expands an IPv6 text to 8 groups (null when it is not one). */
function v6Groups(ip: string): number[] | null {
  let text = ip.toLowerCase().replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (text.includes(".")) {
    // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two hex groups.
    const cut = text.lastIndexOf(":");
    const v4 = v4Octets(text.slice(cut + 1));
    if (!v4) return null;
    text = `${text.slice(0, cut + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if (fill < 0 || (halves.length === 2 && fill < 1 && head.length + rest.length > 7)) return null;
  const groups = [...head, ...Array(fill).fill(0), ...rest];
  if (groups.length !== 8 || groups.some((g) => Number.isNaN(g))) return null;
  return groups;
}

/** `[a, b, c, d]` of the IPv4 address whose upper 16 bits are `hi` and lower 16 bits `lo`. */
const v4Of = (hi: number, lo: number): number[] => [hi >> 8, hi & 255, lo >> 8, lo & 255];

function classifyV4(o: number[]): AddressKind {
  const ip = o.join(".");
  if (METADATA.has(ip)) return "metadata";
  if (o[0] === 0) return "unspecified"; // 0.0.0.0/8, "this network"
  if (o[0] >= 224) return "multicast"; // 224/4 multicast, 240/4 reserved, 255.255.255.255 broadcast
  if (o[0] === 127) return "loopback";
  if (o[0] === 169 && o[1] === 254) return "link-local";
  if (o[0] === 10 || (o[0] === 172 && o[1] >= 16 && o[1] <= 31) || (o[0] === 192 && o[1] === 168)) return "private";
  // 100.64/10 (carrier-grade NAT) is not the Internet; Tailscale and similar overlays use it for
  // peers on the owner's own network, so it counts as LAN.
  if (o[0] === 100 && o[1] >= 64 && o[1] <= 127) return "private";
  if (o[0] === 192 && o[1] === 0 && o[2] === 0) return "reserved"; // 192.0.0.0/24, IETF protocol assignments
  if (o[0] === 192 && o[1] === 0 && o[2] === 2) return "reserved"; // TEST-NET-1 (documentation)
  if (o[0] === 198 && o[1] === 51 && o[2] === 100) return "reserved"; // TEST-NET-2
  if (o[0] === 203 && o[1] === 0 && o[2] === 113) return "reserved"; // TEST-NET-3
  if (o[0] === 192 && o[1] === 88 && o[2] === 99) return "reserved"; // the retired 6to4 relay anycast
  if (o[0] === 198 && (o[1] === 18 || o[1] === 19)) return "reserved"; // 198.18/15, benchmarking
  return "public";
}

/** The most dangerous of several kinds (for an address that could mean more than one IPv4 host). */
const SEVERITY: readonly AddressKind[] = ["metadata", "invalid", "unspecified", "multicast", "reserved", "loopback", "link-local", "private", "public"];
const worst = (kinds: AddressKind[]): AddressKind => kinds.reduce((a, b) => (SEVERITY.indexOf(b) < SEVERITY.indexOf(a) ? b : a));

function classifyV6(g: number[]): AddressKind {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible form.
  if (zero(0, 6)) {
    if (g[6] === 0 && g[7] === 0) return "unspecified";
    if (g[6] === 0 && g[7] === 1) return "loopback";
    return classifyV4(v4Of(g[6], g[7])); // IPv4-compatible ::a.b.c.d
  }
  // ::ffff:0:0/96 IPv4-mapped; ::ffff:0:0:0/96 IPv4-translated (SIIT).
  if (zero(0, 5) && g[5] === 0xffff) return classifyV4(v4Of(g[6], g[7]));
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return classifyV4(v4Of(g[6], g[7]));
  // 64:ff9b::/96, the well-known NAT64 prefix: the IPv4 host is the last 32 bits.
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return classifyV4(v4Of(g[6], g[7]));
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): never public; the IPv4 host sits where the
  // operator's prefix length puts it (RFC 6052: /48, /56, /64 or /96), so every place is judged
  // and the worst counts.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
    const at48 = v4Of(g[3], ((g[4] & 0xff) << 8) | (g[5] >> 8));
    const at56 = v4Of(((g[3] & 0xff) << 8) | (g[4] & 0xff), g[5]);
    const at64 = v4Of(((g[4] & 0xff) << 8) | (g[5] >> 8), ((g[5] & 0xff) << 8) | (g[6] >> 8));
    const at96 = v4Of(g[6], g[7]);
    // In the layouts that do not apply, the host's bits read as zeros (0.0.0.0/8): not a host.
    const kinds = [at48, at56, at64, at96].map(classifyV4).filter((k) => k !== "unspecified");
    return kinds.length === 0 ? "unspecified" : worst(["private", ...kinds]);
  }
  // 2002::/16, 6to4: the IPv4 host is bits 16–47.
  if (g[0] === 0x2002) return classifyV4(v4Of(g[1], g[2]));
  // 2001::/32, Teredo: the client's IPv4 address is the last 32 bits inverted; the server's is
  // bits 32–63. Both are judged.
  if (g[0] === 0x2001 && g[1] === 0) return worst([classifyV4(v4Of(g[6] ^ 0xffff, g[7] ^ 0xffff)), classifyV4(v4Of(g[2], g[3]))]);
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && zero(2, 7) && g[7] === 0x254) return "metadata";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "private"; // the retired site-local fec0::/10
  if ((g[0] & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "reserved"; // documentation
  if (g[0] === 0x3fff && g[1] < 0x1000) return "reserved"; // 3fff::/20, documentation
  if (g[0] === 0x2001 && g[1] === 0x0002 && g[2] === 0) return "reserved"; // 2001:2::/48, benchmarking
  if (g[0] === 0x2001 && (g[1] & 0xffe0) === 0x0020) return "reserved"; // ORCHIDv2 2001:20::/28
  if (g[0] === 0x2001 && (g[1] & 0xfff0) === 0x0010) return "reserved"; // ORCHID 2001:10::/28
  if (g[0] === 0x0100 && zero(1, 4)) return "reserved"; // 100::/64, discard-only
  // Everything else outside 2000::/3 is not global unicast: nothing there can answer.
  if ((g[0] & 0xe000) !== 0x2000) return "reserved";
  return "public";
}

export function classifyAddress(ip: string): AddressKind {
  const o = v4Octets(ip);
  if (o) return classifyV4(o);
  const g = v6Groups(ip);
  if (!g) return "invalid";
  return classifyV6(g);
}

export interface UrlPolicy {
  allowInsecure: boolean;
  allowPrivate: boolean;
}

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

/** Checks the parsed URL's scheme and every address its host resolves to. */
export function judgeEventTarget(url: URL, addresses: readonly string[], policy: UrlPolicy): UrlVerdict {
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "the URL must start with https://" };
  if (url.username || url.password) return { ok: false, reason: "the URL must not carry a user name or password" };
  if (addresses.length === 0) return { ok: false, reason: `the host ${url.hostname} does not resolve to any address` };
  const kinds = addresses.map(classifyAddress);
  for (let i = 0; i < kinds.length; i++) {
    const k = kinds[i];
    if (k === "metadata") return { ok: false, reason: `the host resolves to ${addresses[i]}, a cloud metadata address, which is never allowed` };
    if (k === "unspecified" || k === "multicast" || k === "invalid") return { ok: false, reason: `the host resolves to ${addresses[i]}, which cannot receive events` };
    if (k === "reserved") return { ok: false, reason: `the host resolves to ${addresses[i]}, a reserved or documentation address, which cannot receive events` };
    if ((k === "loopback" || k === "link-local") && !policy.allowPrivate) {
      return {
        ok: false,
        reason: `the host resolves to ${addresses[i]}, a ${k === "loopback" ? "loopback (this machine)" : "link-local"} address; start the server with --allow-private-webhook-urls to allow it`,
      };
    }
  }
  if (url.protocol === "http:") {
    if (!policy.allowInsecure) return { ok: false, reason: "the URL must use https://; plain http:// is only allowed to a receiver on this machine or the LAN, with allowInsecure: true" };
    if (!kinds.every((k) => k === "loopback" || k === "private" || k === "link-local")) {
      return { ok: false, reason: "plain http:// is only allowed to a receiver on this machine or the LAN; use https:// for a public host" };
    }
  }
  return { ok: true };
}
