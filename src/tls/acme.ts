/**
 * A certificate every browser trusts, from an ACME certificate authority (Let's Encrypt by
 * default): docs/api-decisions.md, "Online on its own". The protocol is acme-client's (pinned in
 * package.json); this module only chooses its options, answers HTTP-01 through a token map the
 * plain-HTTP listener reads, and turns the CA's refusals into words an owner can act on.
 */
import { Agent } from "node:https";
import { X509Certificate } from "node:crypto";
export { parseDomains } from "../domain/public-names";

export const LETS_ENCRYPT_DIRECTORY = "https://acme-v02.api.letsencrypt.org/directory";
/** A certificate is renewed when it has fewer days left than this (Let's Encrypt's own advice). */
export const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 86_400_000;

/** The HTTP-01 answers being offered: token → key authorization (read by the plain-HTTP listener). */
export type ChallengeTokens = Map<string, string>;
export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

/** The answer to `GET /.well-known/acme-challenge/<token>`, or null when the path is not one. */
export function challengeAnswer(tokens: ChallengeTokens, method: string, path: string): Response | null {
  if (!path.startsWith(CHALLENGE_PREFIX) || (method !== "GET" && method !== "HEAD")) return null;
  const value = tokens.get(path.slice(CHALLENGE_PREFIX.length));
  return value === undefined ? new Response("Not found\n", { status: 404, headers: { "Content-Type": "text/plain" } }) : new Response(value, { headers: { "Content-Type": "text/plain" } });
}

export interface IssuedCertificate {
  /** The account the CA issued it to (kept with the account key). */
  accountUrl?: string;
  domains: string[];
  certPem: string;
  keyPem: string;
  notAfter: string;
  issuedAt: string;
  directoryUrl: string;
}

export interface ObtainOptions {
  domains: string[];
  email?: string;
  directoryUrl: string;
  /** PEM of a CA to trust for the ACME server's own HTTPS (a test CA such as Pebble's). */
  caPem?: string;
  /** The account key (PEM); created by the caller once and kept. */
  accountKeyPem: string;
  /** The account's URL at the CA once registered (kept: asking again with the same key is refused by some CAs). */
  accountUrl?: string;
  tokens: ChallengeTokens;
  now: number;
}

/** Makes an account key (ECDSA P-256) to keep with the database. */
export async function newAccountKey(): Promise<string> {
  // Loaded on first use: most servers never ask a CA for anything, and the CLI starts faster without it.
  const acme = await import("acme-client");
  return (await acme.crypto.createPrivateEcdsaKey()).toString();
}

/** Asks the CA for a certificate naming `domains`, proving control of each by HTTP-01 on port 80. */
export async function obtainCertificate(o: ObtainOptions): Promise<IssuedCertificate> {
  const acme = await import("acme-client");
  // acme-client talks through axios; a test CA's HTTPS is trusted through the agent it uses.
  acme.axios.defaults.httpsAgent = o.caPem ? new Agent({ ca: o.caPem, keepAlive: false }) : undefined;
  const client = new acme.Client({ directoryUrl: o.directoryUrl, accountKey: o.accountKeyPem, accountUrl: o.accountUrl, backoffAttempts: 8, backoffMin: 1_000, backoffMax: 10_000 });
  const key = await acme.crypto.createPrivateEcdsaKey();
  const [, csr] = await acme.crypto.createCsr({ commonName: o.domains[0], altNames: o.domains }, key);
  const offered: string[] = [];
  try {
    const certPem = await client.auto({
      csr,
      email: o.email || undefined,
      termsOfServiceAgreed: true,
      challengePriority: ["http-01"],
      // The CA checks from the internet; checking from here would only test this machine's own DNS.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        o.tokens.set(challenge.token, keyAuthorization);
        offered.push(challenge.token);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        o.tokens.delete(challenge.token);
      },
    });
    return { accountUrl: client.getAccountUrl(), domains: o.domains, certPem, keyPem: key.toString(), notAfter: certificateNotAfter(certPem), issuedAt: new Date(o.now).toISOString(), directoryUrl: o.directoryUrl };
  } finally {
    for (const t of offered) o.tokens.delete(t);
  }
}

/** The first certificate's expiry in a PEM chain (ISO). */
export function certificateNotAfter(pem: string): string {
  return new Date(new X509Certificate(pem).validTo).toISOString();
}

/** A stored certificate still good for these names and not yet due for renewal. */
export function certificateCurrent(c: IssuedCertificate | null, domains: string[], now: number): boolean {
  if (!c || !sameDomains(c.domains, domains)) return false;
  return Date.parse(c.notAfter) - now > RENEW_BEFORE_DAYS * DAY_MS;
}

/** A stored certificate that can still be served for these names (even if due for renewal). */
export function certificateUsable(c: IssuedCertificate | null, domains: string[], now: number): boolean {
  return Boolean(c && sameDomains(c.domains, domains) && Date.parse(c.notAfter) > now);
}

export function sameDomains(a: string[], b: string[]): boolean {
  const norm = (l: string[]) => [...new Set(l.map((d) => d.toLowerCase()))].sort().join(",");
  return norm(a) === norm(b);
}

/**
 * What went wrong, in words an owner can act on. The CA's problem types (RFC 8555, "Errors") say which
 * check failed; the message names the domain, the port and what to look at.
 */
export function explainAcmeFailure(err: unknown, domains: string[], plainPort: number): string {
  const text = String((err as Error)?.message ?? err);
  const names = domains.join(", ");
  const port = plainPort === 80 ? "port 80" : `port 80 (forwarded to this server's port ${plainPort})`;
  if (/rateLimited|too many (certificates|failed|new orders|registrations)/i.test(text)) {
    return `The certificate authority refused for now: too many requests for ${names} (a rate limit). It will be tried again later by itself; nothing to change unless it keeps failing for days.`;
  }
  if (/\b(dns|NXDOMAIN|SERVFAIL|no valid A records|no such host|DNS problem)\b/i.test(text)) {
    return `The certificate authority could not find ${names} in DNS. Check that each name has an A (or AAAA) record pointing to this server's public IP address; a new record can take an hour to be seen.`;
  }
  if (/connection refused|timeout|timed out|unauthorized|Invalid response|connection reset|fetching http|404/i.test(text)) {
    return `The certificate authority could not reach this server at http://${domains[0]}/ on ${port}. Check that the name points to this server's public IP address, that the router forwards ${port}, and that no firewall blocks it.`;
  }
  if (/rejectedIdentifier|policy|forbidden name|blocklist/i.test(text)) {
    return `The certificate authority will not issue a certificate for ${names}: use a name of a domain you own.`;
  }
  if (/invalidContact|contact/i.test(text)) return `The certificate authority refused the e-mail address given with --acme-email (or in Settings): give a working address.`;
  if (/ENOTFOUND|ECONNREFUSED|EAI_AGAIN|certificate|self.signed|socket|network/i.test(text)) {
    return `The certificate authority could not be reached from this server (${text.slice(0, 160)}). Check this server's internet connection and the --acme-directory address.`;
  }
  return `Getting a certificate for ${names} failed: ${text.slice(0, 300)}`;
}
