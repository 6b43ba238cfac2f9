/**
 * The server's public address: the origin forms and phones are given (webhook addresses, embed
 * snippets, QR codes, the phone wizard). Pure: checking an address as typed, and which address
 * wins (docs/api-decisions.md, "The business's name, the server address and HTTPS without breaking forms").
 */

export type PublicAddressSource = "flag" | "setting" | "request";

export interface PublicAddress {
  /** scheme://host[:port], no trailing slash. */
  url: string;
  /** flag: --public-url; setting: saved in Settings; request: the address this request came in on (a last resort). */
  source: PublicAddressSource;
}

/** --public-url, else the saved setting, else the request's own origin. */
export function choosePublicAddress(flag: string | undefined | null, saved: string | undefined | null, origin: string): PublicAddress {
  if (flag) return { url: flag.replace(/\/+$/, ""), source: "flag" };
  if (saved) return { url: saved, source: "setting" };
  return { url: origin.replace(/\/+$/, ""), source: "request" };
}

/**
 * An address as an operator types it ("sms.example.com", "https://sms.example.com/"): its origin,
 * or a plain-words reason. A bare host name is taken as https://; a path, query, user name or
 * fragment is refused: forms and phones append their own paths.
 */
export function parsePublicAddress(text: string): { ok: true; url: string } | { ok: false; message: string } {
  const t = text.trim();
  if (t.length > 300) return { ok: false, message: "The address is too long (300 characters at most)" };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `https://${t}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    return { ok: false, message: "Type the address as https://name-or-address[:port], e.g. https://sms.example.com" };
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") return { ok: false, message: "The address must start with https:// (or http://)" };
  if (u.username || u.password) return { ok: false, message: "The address must not hold a user name or password" };
  if ((u.pathname !== "/" && u.pathname !== "") || u.search || u.hash) {
    return { ok: false, message: "Give only the start of the address (https://sms.example.com), without a path such as /v1/…" };
  }
  if (!u.hostname) return { ok: false, message: "The address needs a name or IP address" };
  return { ok: true, url: u.origin };
}
