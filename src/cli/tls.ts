import { DEFAULT_PORT, DEFAULT_TLS_PORT, envName, OPTIONS, resolveOptions, type ParsedArgs } from "../config";
import { checkAltNames, EXPIRY_WARNING_DAYS, initLocalCa, localTlsStatus, renewServerCert, TlsSetupError, type CertificateInfo, type TlsInitResult } from "../tls/local-ca";
import { dbPathOf, UsageError, type CliIO } from "./common";

export const TLS_HELP = `Usage:
  textwire tls init [--ip ADDRESS …] [--name HOST …] [--port N] [--https-port N] [--json] [--db PATH]
  textwire tls renew [--ip ADDRESS …] [--name HOST …] [--json] [--db PATH]
  textwire tls status [--json] [--db PATH]

HTTPS on a LAN without a public name. init creates a local certificate authority (valid 10 years)
and a server certificate signed by it (825 days) in <folder of the database>/tls/. The server
certificate names the given --ip/--name values (each may be repeated or comma-separated), this
machine's own addresses, localhost and 127.0.0.1. serve uses it when --tls-cert/--tls-key are not
given; the plain-HTTP port (--port, as serve is started) then forwards to HTTPS on --https-port
(8443). Install the CA on each phone once: it is served at /ca.crt. The local CA is for your phones
and your own devices; a public website's forms need serve --domain (a certificate every browser trusts).
renew issues a new server certificate from the same CA, keeping its names and adding new ones
(restart serve to use it). status shows both certificates' expiry.`;

const FLAGS = ["ip", "name", "json", "port", "https-port"];

function listFlag(parsed: ParsedArgs, name: string): string[] {
  const values = parsed.repeated?.get(name) ?? (parsed.flags.has(name) ? [parsed.flags.get(name)!] : []);
  const out: string[] = [];
  for (const v of values) {
    if (v === true) throw new UsageError(`--${name} needs a value`);
    out.push(...v.split(",").map((x) => x.trim()).filter(Boolean));
  }
  return out;
}

const day = (iso: string) => iso.slice(0, 10);

function certJson(c: CertificateInfo) {
  return { subject: c.subject, notBefore: c.notBefore, notAfter: c.notAfter, daysLeft: c.daysLeft, fingerprint256: c.fingerprint256, ips: c.ips, names: c.names };
}

function printIssued(io: CliIO, r: TlsInitResult, what: string) {
  io.out(`${what} in ${r.paths.dir}:`);
  io.out(`  CA certificate      ${r.paths.caCert}   (valid until ${day(r.ca.notAfter)})`);
  io.out(`  CA fingerprint      SHA-256 ${r.ca.fingerprint256}`);
  io.out(`  server certificate  ${r.paths.serverCert}   (valid until ${day(r.server.notAfter)})`);
  io.out(`  server key          ${r.paths.serverKey}   (mode 0600)`);
  io.out(`  names               ${[...r.server.names, ...r.server.ips].join(", ")}`);
}

export function tlsCommand(parsed: ParsedArgs, io: CliIO): number {
  const [, sub] = parsed.positionals;
  const json = parsed.flags.get("json") === true;
  const db = dbPathOf(parsed, io.env, FLAGS);
  const now = Date.now();
  try {
    if (sub === "init" || sub === "renew") {
      let sans;
      try {
        sans = checkAltNames(listFlag(parsed, "ip"), listFlag(parsed, "name"));
      } catch (err) {
        throw err instanceof TlsSetupError ? new UsageError(err.message) : err;
      }
      const r = sub === "init" ? initLocalCa(db, sans, now) : renewServerCert(db, sans, now);
      if (json) {
        io.out(JSON.stringify({ dir: r.paths.dir, caCertificate: r.paths.caCert, serverCertificate: r.paths.serverCert, serverKey: r.paths.serverKey, ca: certJson(r.ca), server: certJson(r.server) }));
        return 0;
      }
      if (sub === "init") {
        // The ports serve will use (the same flags and TEXTWIRE_* variables: src/config.ts withHttpsPorts).
        const o = resolveOptions(parsed, OPTIONS.filter((x) => x.flag === "port" || x.flag === "https-port"), io.env, [...FLAGS, "db"]);
        const given = (f: string) => parsed.flags.has(f) || Boolean(io.env[envName(f)]);
        const plainPort = given("port") ? (o.port as number) : DEFAULT_PORT;
        const httpsPort = (o["https-port"] as number | undefined) ?? DEFAULT_TLS_PORT;
        printIssued(io, r, "Created a local certificate authority and a server certificate");
        io.out("");
        io.out("Next: restart textwire serve with the same --db and the same --port; it uses these files and says so.");
        io.out(`HTTPS then answers on port ${httpsPort} (--https-port), and the plain-HTTP port it used before (${plainPort}; --port) forwards to it, so published forms keep working.`);
        io.out(`On each phone, open http://<this machine's address>:${plainPort}/ca.crt,`);
        io.out("install the profile and trust it (iOS: Settings → General → About → Certificate Trust Settings).");
        io.out("This certificate is for your phones and your own devices on your network. Forms on a public website need a");
        io.out("certificate every browser trusts: serve --domain sms.example.com (see docs/operations.md, \"A public address\").");
        io.out("Never share ca.key: whoever has it can make certificates your phones trust.");
      } else {
        printIssued(io, r, "Issued a new server certificate from the same CA");
        io.out("Restart textwire serve to use it; phones need nothing new.");
      }
      return 0;
    }
    if (sub === "status") {
      const st = localTlsStatus(db, now);
      if (!st) {
        if (json) io.out(JSON.stringify({ dir: null, ca: null, server: null }));
        io.err(`no local CA for ${db}; create one with: textwire tls init [--ip ADDRESS] [--name HOST]`);
        return 1;
      }
      const warn = st.server !== null && st.server.daysLeft < EXPIRY_WARNING_DAYS;
      if (json) {
        io.out(JSON.stringify({ dir: st.paths.dir, ca: certJson(st.ca), server: st.server && certJson(st.server), expiresSoon: warn }));
        return 0;
      }
      io.out(`Local CA in ${st.paths.dir}`);
      io.out(`  CA certificate      valid until ${day(st.ca.notAfter)} (${st.ca.daysLeft} days left), SHA-256 ${st.ca.fingerprint256}`);
      if (st.server) {
        io.out(`  server certificate  valid until ${day(st.server.notAfter)} (${st.server.daysLeft} days left)`);
        io.out(`  names               ${[...st.server.names, ...st.server.ips].join(", ")}`);
        if (st.server.daysLeft < 0) io.out("  EXPIRED: run textwire tls renew, then restart textwire serve.");
        else if (warn) io.out(`  Expires in under ${EXPIRY_WARNING_DAYS} days: run textwire tls renew, then restart textwire serve.`);
      } else io.out("  no server certificate: run textwire tls renew");
      return 0;
    }
  } catch (err) {
    if (err instanceof TlsSetupError) {
      io.err(`textwire tls ${sub}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  throw new UsageError(sub ? `unknown tls command "${sub}"\n\n${TLS_HELP}` : TLS_HELP);
}
