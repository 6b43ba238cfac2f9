/**
 * SSRF guard for outbound event URLs (issue 13 §6). Pure: the caller resolves the host and passes
 * the addresses. Rules:
 *   - cloud metadata addresses (169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254):
 *     never;
 *   - unspecified, multicast and broadcast addresses: never;
 *   - loopback (127/8, ::1) and link-local (169.254/16, fe80::/10): only with
 *     --allow-private-webhook-urls;
 *   - private LAN ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): allowed (LAN
 *     receivers are common for this product);
 *   - https always; http only with `allowInsecure` and only when every address is loopback or LAN.
 */
export type AddressKind = "metadata" | "unspecified" | "multicast" | "loopback" | "link-local" | "private" | "public" | "invalid";

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

function classifyV4(o: number[]): AddressKind {
  const ip = o.join(".");
  if (METADATA.has(ip)) return "metadata";
  if (o[0] === 0) return "unspecified";
  if (o[0] >= 224) return "multicast"; // multicast, reserved and broadcast
  if (o[0] === 127) return "loopback";
  if (o[0] === 169 && o[1] === 254) return "link-local";
  if (o[0] === 10 || (o[0] === 172 && o[1] >= 16 && o[1] <= 31) || (o[0] === 192 && o[1] === 168) || (o[0] === 100 && o[1] >= 64 && o[1] <= 127)) return "private";
  return "public";
}

export function classifyAddress(ip: string): AddressKind {
  const o = v4Octets(ip);
  if (o) return classifyV4(o);
  const g = v6Groups(ip);
  if (!g) return "invalid";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms are judged as the IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7] > 1)))) {
    return classifyV4([g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255]);
  }
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) return "metadata";
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xfe00) === 0xfc00) return "private";
  return "public";
}

export interface UrlPolicy {
  allowInsecure: boolean;
  allowPrivate: boolean;
}

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

/** Checks the parsed URL's scheme and every address its host resolves to. */
export function judgeWebhookTarget(url: URL, addresses: readonly string[], policy: UrlPolicy): UrlVerdict {
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "the URL must start with https://" };
  if (url.username || url.password) return { ok: false, reason: "the URL must not carry a user name or password" };
  if (addresses.length === 0) return { ok: false, reason: `the host ${url.hostname} does not resolve to any address` };
  const kinds = addresses.map(classifyAddress);
  for (let i = 0; i < kinds.length; i++) {
    const k = kinds[i];
    if (k === "metadata") return { ok: false, reason: `the host resolves to ${addresses[i]}, a cloud metadata address, which is never allowed` };
    if (k === "unspecified" || k === "multicast" || k === "invalid") return { ok: false, reason: `the host resolves to ${addresses[i]}, which cannot receive events` };
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
