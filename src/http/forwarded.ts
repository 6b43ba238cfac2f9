import { IpRangeList, parseIp } from "../lib/ip-ranges";

/**
 * Who the client is behind `--trust-proxy` (docs/api-decisions.md, "Hostile input, round two:
 * bodies, paging and proxies"). X-Forwarded-For/-Proto/-Host are read only when the TCP peer is one
 * of the configured proxies: anyone else could write them, and the failed sign-in limit, the
 * per-address webhook limit and the log key on the address they name.
 */

/** An X-Forwarded-For entry without brackets or port ("[::1]:8080" → "::1", "10.0.0.1:443" → "10.0.0.1"). */
function entryAddress(entry: string): string {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return bracketed[1];
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(e);
  return v4port ? v4port[1] : e;
}

/** Entries read from the right at most: a longer chain is no real deployment. */
const MAX_HOPS = 20;

export interface ClientAddress {
  /** The address limits and the log key on. */
  clientIp: string;
  /** True when the peer is a trusted proxy: its X-Forwarded-Proto/-Host count too. */
  viaProxy: boolean;
}

/**
 * The client's address: the peer's own, unless the peer is a trusted proxy; then the right-most
 * X-Forwarded-For entry that is not itself a trusted proxy (each proxy appends the address it saw,
 * so entries left of that one are whatever the client wrote). When every entry is a trusted proxy,
 * the left-most; when an entry is not an address, the hop that passed it on (the nearest proxy is
 * then the one limited, never a name the client made up).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | null, proxies: IpRangeList | null): ClientAddress {
  if (peer === undefined) return { clientIp: "unknown", viaProxy: false };
  if (proxies === null || !proxies.contains(peer)) return { clientIp: peer, viaProxy: false };
  let hop = peer;
  if (forwardedFor) {
    const entries = forwardedFor.split(",").slice(-MAX_HOPS);
    for (let i = entries.length - 1; i >= 0; i--) {
      const addr = entryAddress(entries[i]);
      if (addr === "") continue;
      const bytes = parseIp(addr);
      if (bytes === null) break;
      hop = addr;
      if (!proxies.contains(bytes)) break;
    }
  }
  return { clientIp: hop, viaProxy: true };
}
