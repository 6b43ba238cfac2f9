/**
 * The addresses a phone can type into the SMSGate app ("server address"), best first. Pure: the
 * caller gives the server's configuration, the request's origin and the machine's addresses.
 */
export const MOBILE_API_PATH = "/api/mobile/v1";

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

export interface MobileApiUrlInput {
  /** --public-url: when set, the one address phones use. */
  publicUrl?: string;
  /** The origin the request came in on (scheme://host[:port]) as the browser sees the server. */
  origin: string;
  /** Behind a trusted proxy the machine's own addresses and port are not what phones reach. */
  behindProxy: boolean;
  /** The machine's own non-loopback addresses (IPv4 and IPv6). */
  addresses: string[];
}

export function mobileApiUrls(input: MobileApiUrlInput): string[] {
  if (input.publicUrl) return [input.publicUrl.replace(/\/+$/, "") + MOBILE_API_PATH];
  let origin: URL;
  try {
    origin = new URL(input.origin);
  } catch {
    return [];
  }
  const out: string[] = [];
  // "localhost" works only on the server itself: a phone needs a name or address of the network.
  if (!LOOPBACK.test(origin.hostname)) out.push(origin.origin + MOBILE_API_PATH);
  if (!input.behindProxy) {
    const port = origin.port ? `:${origin.port}` : "";
    // IPv4 first: the address owners read off their router and type most easily.
    const ordered = [...input.addresses.filter((a) => !a.includes(":")), ...input.addresses.filter((a) => a.includes(":"))];
    for (const a of ordered) out.push(`${origin.protocol}//${a.includes(":") ? `[${a}]` : a}${port}${MOBILE_API_PATH}`);
  }
  return [...new Set(out)];
}
