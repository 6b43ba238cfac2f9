/**
 * The names a public certificate is for (--domain, or Settings → Server address → "Get a
 * certificate"): docs/api-decisions.md, "Online on its own". Pure.
 */
const DNS_NAME = /^(?=.{1,253}$)(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/**
 * `sms.example.com,www.example.com` → names, checked: a public certificate names hosts of a real
 * domain (no IP addresses, no wildcards: HTTP-01 cannot prove those). `localhost` is let through
 * for a test CA.
 */
export function parseDomains(text: string): { ok: true; domains: string[] } | { ok: false; message: string } {
  const domains = [...new Set(text.split(",").map((d) => d.trim().toLowerCase().replace(/\.$/, "")).filter(Boolean))];
  if (domains.length === 0) return { ok: false, message: "Give the name your website's visitors will use, e.g. sms.example.com." };
  if (domains.length > 20) return { ok: false, message: "At most 20 names in one certificate." };
  for (const d of domains) {
    if (d.startsWith("*.")) return { ok: false, message: `"${d}": a wildcard name cannot be proven over HTTP; list each name, e.g. sms.example.com.` };
    if (/^[\d.]+$/.test(d) || d.includes(":")) return { ok: false, message: `"${d}" is an IP address; a public certificate needs a name such as sms.example.com that points to this server.` };
    if (d !== "localhost" && !DNS_NAME.test(d)) return { ok: false, message: `"${d}" is not a domain name such as sms.example.com.` };
  }
  return { ok: true, domains };
}

