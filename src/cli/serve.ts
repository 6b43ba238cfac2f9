import { buildServeConfig, LOOPBACK_PROXIES, OPTIONS, envName, withHttpsPorts, type ParsedArgs, type ServeConfig } from "../config";
import { createLogger } from "../lib/log";
import { startServer, type RunningServer } from "../server";
import { SchemaTooNewError } from "../db/migrate";
import { UpgradeCopyError } from "../db/upgrade-copy";
import { EXPIRY_WARNING_DAYS, hasLocalServerCert, tlsPathsFor } from "../tls/local-ca";
import { dbPathOf, type CliIO } from "./common";
import { warmDashboard } from "../dashboard/assets";
import { startMemoryTrim } from "../lib/memory-trim";
import { cliCommand } from "../lib/cli-command";

export const SERVE_HELP = `Usage: textwire serve [options]   (also the default with no command)

Starts the HTTP API. Applies pending migrations first; until the first owner has been set up,
prints a one-time setup address (valid 24 hours) to open in a browser. A headless install creates
its account and key with \`textwire accounts create\` instead.

Options (each also an environment variable):
${OPTIONS.map((o) => `  --${o.flag}${o.type === "bool" ? "" : " VALUE"}`.padEnd(34) + `${o.help}${o.default !== undefined ? ` [default: ${o.default}]` : ""}\n${" ".repeat(34)}env ${envName(o.flag)}`).join("\n")}`;

export async function serveCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  // After `textwire tls init`, the local CA's server certificate is used unless --tls-cert/--tls-key
  // (flag or env) say otherwise: filled in as if given in the environment.
  const db = dbPathOf(parsed, io.env, OPTIONS.map((o) => o.flag));
  const ownCert = parsed.flags.has("tls-cert") || parsed.flags.has("tls-key") || Boolean(io.env[envName("tls-cert")]) || Boolean(io.env[envName("tls-key")]);
  const given = (flag: string) => parsed.flags.has(flag) || Boolean(io.env[envName(flag)]);
  // --domain brings its own certificate: the local CA's is not filled in then.
  const local = !ownCert && !given("domain") && hasLocalServerCert(db) ? tlsPathsFor(db) : undefined;
  const env: Record<string, string | undefined> = local ? { ...io.env, [envName("tls-cert")]: local.serverCert, [envName("tls-key")]: local.serverKey } : { ...io.env };
  // With HTTPS, the plain-HTTP port keeps answering (308 to HTTPS), whatever --port was, so forms
  // published with the http:// address keep working (docs/api-decisions.md, "Online on its own").
  const config = { ...withHttpsPorts(buildServeConfig(parsed, env, io.isTTY), given), tlsLocalCa: Boolean(local) };
  const logger = createLogger(config.logFormat);
  // Signal handlers go in before anything starts: a SIGTERM that arrives while the server is
  // starting (a supervisor, or npm forwarding one right after the start line) still ends in a clean
  // stop with exit 0, never a kill that skips closing the database.
  let signalled: string | undefined;
  let onSignal = (signal: string) => void (signalled ??= signal);
  const onSigint = () => onSignal("SIGINT");
  const onSigterm = () => onSignal("SIGTERM");
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  const removeHandlers = () => {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
  };
  let running: RunningServer;
  try {
    running = await startServer(config, { logger });
  } catch (err) {
    removeHandlers();
    if (err instanceof SchemaTooNewError || err instanceof UpgradeCopyError) {
      io.err(err.message);
      return 1;
    }
    if ((err as { code?: string }).code === "EADDRINUSE") {
      io.err(
        `textwire: cannot listen on ${config.host} port ${config.port}${config.redirectPort !== undefined ? ` or ${config.redirectPort}` : ""}${config.smsgateLocalPort !== undefined ? ` or ${config.smsgateLocalPort}` : ""}: ` +
          "already in use (another Textwire or another program). Stop it, or choose another with --port (and --https-port). Nothing was created.",
      );
      return 1;
    }
    if ((err as { code?: string }).code === "EACCES") {
      io.err(
        `textwire: no permission to listen on port ${config.port}${config.redirectPort !== undefined ? ` or ${config.redirectPort}` : ""} (ports below 1024 need it). ` +
          `Install it as a service (\`sudo ${cliCommand()} service install …\`, which grants it), or choose ports above 1024 with --port and --https-port. Nothing was created.`,
      );
      return 1;
    }
    throw err;
  }
  if (!config.tlsCert && !config.trustProxy && !running.deps.publicCertificate.wanted()) {
    io.err(
      `warning: serving plain HTTP. Clients must reach Textwire over HTTPS: run \`${cliCommand()} tls init\` (LAN), give it --tls-cert/--tls-key, ` +
        "or put it behind a TLS reverse proxy and pass --trust-proxy, before it leaves a trusted LAN.",
    );
  }
  io.out(startLine(running, config, local?.dir));
  if (running.smsgateLocalServer) io.out(`SMSGate local-server API (Home Assistant) on port ${running.smsgateLocalServer.port}: log in with your account id and an API key`);
  const expiry = running.tlsCertificate;
  if (expiry && expiry.daysLeft < EXPIRY_WARNING_DAYS) {
    io.err(`warning: the TLS certificate ${expiry.daysLeft < 0 ? "has expired" : `expires in ${expiry.daysLeft} days`} (${expiry.certificateExpiresAt}).` +
      (local ? ` Run \`${cliCommand()} tls renew\` and restart.` : " Renew it and restart."));
  }
  // Until someone can sign in, each start prints a new one-time setup address (the last one stops
  // working): docs/api-decisions.md, "People, roles and the first run".
  const setup = running.deps.setup.newLink();
  if (setup) io.out(`Set up Textwire in your browser (this link works once, for 24 hours): ${running.url}/setup#${setup.token}`);
  else io.out(`Dashboard: ${running.url}/ (sign in with your e-mail and password)`);
  // Bundled now (or read from the binary) so the first visitor does not wait for it.
  warmDashboard((err) => logger.error("dashboard build failed", { error: String((err as Error)?.message ?? err) }));
  // Resident memory kept under a ceiling while busy (src/lib/memory-trim.ts).
  const stopTrim = startMemoryTrim();
  await new Promise<void>((resolve) => {
    let stopping = false;
    onSignal = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info("shutting down", { signal });
      void running.stop().then(resolve);
    };
    if (signalled) onSignal(signalled);
  });
  stopTrim();
  removeHandlers();
  return 0;
}

/** "Textwire listening on …": the URL, the database, where TLS comes from and the redirect listener. */
export function startLine(running: RunningServer, config: ServeConfig, localTlsDir?: string): string {
  const parts = [`database ${config.db}`];
  const pub = running.deps.publicCertificate.view();
  if (pub.source && running.deps.publicCertificate.servingPort !== undefined) parts.push(`HTTPS with a public certificate for ${pub.domains.join(", ")}, renewed by itself`);
  else if (pub.source) parts.push(`plain HTTP until the certificate for ${pub.domains.join(", ")} arrives (HTTPS then on port ${pub.httpsPort}; the certificate authority must reach this port from port 80 on the internet)`);
  else if (localTlsDir) parts.push(`HTTPS with the local CA's certificate from ${localTlsDir} (textwire tls init); phones get the CA at /ca.crt`);
  else if (config.tlsCert) parts.push(`HTTPS with ${config.tlsCert}`);
  else if (config.trustProxy) parts.push(`plain HTTP behind a TLS reverse proxy (--trust-proxy: forwarded headers honoured from ${(config.trustedProxies ?? LOOPBACK_PROXIES).join(", ")})`);
  if (running.tlsCertificate) parts.push(`certificate valid until ${running.tlsCertificate.certificateExpiresAt.slice(0, 10)}`);
  let line = `Textwire listening on ${running.url} (${parts.join("; ")})`;
  if (running.redirectServer) line += `; plain HTTP on port ${running.redirectServer.port} forwards to HTTPS on port ${running.port}`;
  return line;
}
