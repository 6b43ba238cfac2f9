/**
 * How an outbound event reaches its receiver: the host is resolved once, every address is judged
 * (src/domain/event-url.ts), and the request goes to a judged address itself — never to the
 * host name, which the HTTP client would look up a second time. Between a check and a second
 * lookup a hostile name server can change its answer (DNS rebinding) and point a "public" host at
 * 127.0.0.1 or the cloud metadata address.
 *
 * The request keeps the receiver's identity: the Host header is the URL's host, and for https the
 * TLS server name (SNI) and the name the certificate is checked against are the URL's host name
 * (Bun's fetch `tls.serverName`, measured against a local HTTPS server in
 * test/api/services/outbound-http.test.ts). See docs/api-decisions.md, "Hostile input, round two:
 * template names, the links rule, outbound addresses".
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Host → its addresses (empty when it does not resolve). Tests stub it. */
export type HostResolver = (host: string) => Promise<string[]>;

/** The system resolver: an IP literal is its own answer; a name, every address getaddrinfo gives. */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare)) return [bare];
  try {
    return (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return [];
  }
}

/** The URL with its host replaced by `address` (bracketed when IPv6); port, path and query kept. */
export function urlForAddress(url: URL, address: string): URL {
  const pinned = new URL(url.href);
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return pinned;
}

/** Whether the URL's host is an IP literal (then there is nothing to look up). */
export function hostIsAddress(url: URL): boolean {
  return isIP(url.hostname.replace(/^\[|\]$/g, "")) !== 0;
}

export interface PinnedRequest {
  method: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** Extra trusted CA certificates (PEM); tests only — production trusts the system store. */
  ca?: string;
}

/**
 * POSTs to `address` as if to `url`'s host: Host header = `url.host`; for https, SNI and
 * certificate name = `url.hostname` (without a trailing dot). No redirects are followed.
 */
export function fetchAt(url: URL, address: string, req: PinnedRequest): Promise<Response> {
  const literal = hostIsAddress(url);
  const target = literal ? url : urlForAddress(url, address);
  const headers = literal ? req.headers : { ...req.headers, Host: url.host };
  const serverName = url.hostname.replace(/\.$/, "");
  const tls =
    url.protocol === "https:"
      ? { ...(literal ? {} : { serverName }), ...(req.ca !== undefined ? { ca: req.ca } : {}) }
      : undefined;
  return fetch(target, { method: req.method, headers, body: req.body, redirect: "manual", signal: req.signal, ...(tls ? { tls } : {}) });
}
