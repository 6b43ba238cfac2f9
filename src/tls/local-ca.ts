/**
 * A local certificate authority for HTTPS on a LAN without a public name.
 *
 * `textwire tls init` makes a CA (10 years) and a server certificate signed by it into
 * `<db dir>/tls/`; phones install the CA once (served at GET /ca.crt) and then trust every server
 * certificate it signs. The server certificate follows what iOS and Android require of a
 * certificate from a user-installed CA: the names and IPs phones use as subjectAltName,
 * extendedKeyUsage=serverAuth, and a validity of at most 825 days.
 *
 * Keys are RSA-2048 from node:crypto; the certificates are built and signed with node-forge
 * (pure JavaScript, no openssl on the machine needed, works inside the compiled binary).
 */
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname, networkInterfaces } from "node:os";
import { isIP } from "node:net";
import { dirname, join, resolve } from "node:path";
import forge from "node-forge";

const DAY_MS = 86_400_000;
/** The CA lives ten years: phones install it once. */
export const CA_VALIDITY_DAYS = 3_650;
/** Apple's limit for a TLS server certificate (also from a user-installed CA). */
export const SERVER_CERT_VALIDITY_DAYS = 825;
/** The server warns (log, /health, tls status) when its certificate has fewer days left. */
export const EXPIRY_WARNING_DAYS = 30;
const RSA_BITS = 2_048;

export interface TlsPaths {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
}

/** `<folder of the database>/tls/…`. */
export function tlsPathsFor(dbPath: string): TlsPaths {
  const dir = join(dirname(resolve(dbPath)), "tls");
  return { dir, caCert: join(dir, "ca.crt"), caKey: join(dir, "ca.key"), serverCert: join(dir, "server.crt"), serverKey: join(dir, "server.key") };
}

/** True when `tls init` has run for this database (a server certificate and key exist). */
export function hasLocalServerCert(dbPath: string): boolean {
  if (dbPath === ":memory:") return false;
  const p = tlsPathsFor(dbPath);
  return existsSync(p.serverCert) && existsSync(p.serverKey);
}

export class TlsSetupError extends Error {}

export interface SubjectAltNames {
  ips: string[];
  names: string[];
}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Checks --ip/--name values; throws TlsSetupError naming the bad one. */
export function checkAltNames(ips: string[], names: string[]): SubjectAltNames {
  for (const ip of ips) if (!isIP(ip)) throw new TlsSetupError(`--ip: "${ip}" is not an IPv4 or IPv6 address`);
  for (const n of names) {
    if (!DNS_NAME.test(n)) throw new TlsSetupError(`--name: "${n}" is not a host name (letters, digits, - and dots, e.g. textwire.lan)`);
  }
  return { ips, names: names.map((n) => n.toLowerCase()) };
}

/** This machine's own addresses other than loopback and IPv6 link-local (which need a zone). */
export function machineAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === "IPv6" && /^fe80:/i.test(a.address)) continue;
      out.push(a.address);
    }
  }
  return out;
}

const unique = (xs: string[]) => [...new Set(xs)];

/** The SANs a server certificate gets: the given ones, the machine's own, and localhost. */
export function serverAltNames(given: SubjectAltNames, machine: string[] = machineAddresses()): SubjectAltNames {
  return { ips: unique([...given.ips, ...machine, "127.0.0.1", "::1"]), names: unique([...given.names, "localhost"]) };
}

function newKeyPair(): { pem: string; forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: RSA_BITS });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { pem, forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

/** 16 random bytes, top bit clear: a positive serial number, as RFC 5280 asks. */
function serialNumber(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[0] &= 0x7f;
  b[0] |= 0x01;
  return Buffer.from(b).toString("hex");
}

function writeFileAtomic(path: string, text: string, mode: number) {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

function issueCa(now: number): { certPem: string; keyPem: string } {
  const keys = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now - 5 * 60_000);
  cert.validity.notAfter = new Date(now + CA_VALIDITY_DAYS * DAY_MS);
  const subject = [
    { name: "commonName", value: `Textwire local CA (${hostname().slice(0, 40) || "server"})` },
    { name: "organizationName", value: "Textwire" },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.forgeKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.pem };
}

function issueServerCert(ca: { certPem: string; keyPem: string }, sans: SubjectAltNames, now: number): { certPem: string; keyPem: string } {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  const notBefore = now - 5 * 60_000;
  cert.validity.notBefore = new Date(notBefore);
  cert.validity.notAfter = new Date(notBefore + SERVER_CERT_VALIDITY_DAYS * DAY_MS);
  cert.setSubject([{ name: "commonName", value: sans.names.find((n) => n !== "localhost") ?? sans.ips[0] ?? "localhost" }, { name: "organizationName", value: "Textwire" }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [...sans.names.map((value) => ({ type: 2, value })), ...sans.ips.map((ip) => ({ type: 7, ip }))] },
    { name: "subjectKeyIdentifier" },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.pem };
}

export interface CertificateInfo {
  subject: string;
  notBefore: string;
  notAfter: string;
  daysLeft: number;
  /** SHA-256 fingerprint, colon-separated hex (what a phone shows for an installed profile). */
  fingerprint256: string;
  ips: string[];
  names: string[];
}

/** Reads what matters of a PEM certificate (any key type: uses node:crypto's parser). */
export function certificateInfo(pem: string, now: number): CertificateInfo {
  const c = new X509Certificate(pem);
  const notAfter = c.validToDate;
  const ips: string[] = [];
  const names: string[] = [];
  for (const part of (c.subjectAltName ?? "").split(/,\s*/)) {
    if (part.startsWith("IP Address:")) ips.push(normaliseIp(part.slice("IP Address:".length)));
    else if (part.startsWith("DNS:")) names.push(part.slice(4));
  }
  return {
    subject: c.subject.replace(/\n/g, ", "),
    notBefore: c.validFromDate.toISOString(),
    notAfter: notAfter.toISOString(),
    daysLeft: Math.floor((notAfter.getTime() - now) / DAY_MS),
    fingerprint256: c.fingerprint256,
    ips,
    names,
  };
}

/** node:crypto prints IPv6 SANs in full form; compare and keep them in the short one. */
function normaliseIp(ip: string): string {
  if (!ip.includes(":")) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

export interface TlsInitResult {
  paths: TlsPaths;
  ca: CertificateInfo;
  server: CertificateInfo;
}

/** `tls init`: a new CA and a server certificate. Refuses when a CA already exists. */
export function initLocalCa(dbPath: string, given: SubjectAltNames, now: number, machine?: string[]): TlsInitResult {
  if (dbPath === ":memory:") throw new TlsSetupError("tls init needs a database file (--db PATH): the certificates live next to it");
  const paths = tlsPathsFor(dbPath);
  if (existsSync(paths.caCert) || existsSync(paths.caKey)) {
    throw new TlsSetupError(
      `a local CA already exists in ${paths.dir}. "textwire tls renew" issues a new server certificate from it. ` +
        `To start over, move that folder away first; phones that trusted the old CA must then install the new one.`,
    );
  }
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const ca = issueCa(now);
  const server = issueServerCert(ca, serverAltNames(given, machine), now);
  // Keys first, certificates last: a server never finds a certificate without its key.
  writeFileAtomic(paths.caKey, ca.keyPem, 0o600);
  writeFileAtomic(paths.serverKey, server.keyPem, 0o600);
  writeFileAtomic(paths.serverCert, server.certPem, 0o644);
  writeFileAtomic(paths.caCert, ca.certPem, 0o644);
  return { paths, ca: certificateInfo(ca.certPem, now), server: certificateInfo(server.certPem, now) };
}

/** `tls renew`: a new server certificate and key from the same CA, keeping its SANs and adding the given ones. */
export function renewServerCert(dbPath: string, given: SubjectAltNames, now: number, machine?: string[]): TlsInitResult {
  const paths = tlsPathsFor(dbPath);
  if (!existsSync(paths.caCert) || !existsSync(paths.caKey)) {
    throw new TlsSetupError(`no local CA in ${paths.dir}; create one with: textwire tls init [--ip ADDRESS] [--name HOST]`);
  }
  const ca = { certPem: readFileSync(paths.caCert, "utf8"), keyPem: readFileSync(paths.caKey, "utf8") };
  const old = existsSync(paths.serverCert) ? certificateInfo(readFileSync(paths.serverCert, "utf8"), now) : { ips: [], names: [] };
  const sans = serverAltNames({ ips: unique([...old.ips, ...given.ips]), names: unique([...old.names, ...given.names]) }, machine);
  const server = issueServerCert(ca, sans, now);
  writeFileAtomic(paths.serverKey, server.keyPem, 0o600);
  writeFileAtomic(paths.serverCert, server.certPem, 0o644);
  return { paths, ca: certificateInfo(ca.certPem, now), server: certificateInfo(server.certPem, now) };
}

/** `tls status`: what exists in `<db dir>/tls/`, or null when tls init never ran. */
export function localTlsStatus(dbPath: string, now: number): { paths: TlsPaths; ca: CertificateInfo; server: CertificateInfo | null } | null {
  const paths = tlsPathsFor(dbPath);
  if (!existsSync(paths.caCert)) return null;
  const ca = certificateInfo(readFileSync(paths.caCert, "utf8"), now);
  const server = existsSync(paths.serverCert) ? certificateInfo(readFileSync(paths.serverCert, "utf8"), now) : null;
  return { paths, ca, server };
}

/** What /health and the start line show of the certificate the server uses. */
export interface TlsExpiry {
  certificateExpiresAt: string;
  daysLeft: number;
}

export function tlsExpiry(certPem: string, now: number): TlsExpiry {
  const notAfter = new X509Certificate(certPem).validToDate.getTime();
  return { certificateExpiresAt: new Date(notAfter).toISOString(), daysLeft: Math.floor((notAfter - now) / DAY_MS) };
}
