import { buildServeConfig, OPTIONS, envName, type ParsedArgs } from "../config";
import { createLogger } from "../lib/log";
import { startServer } from "../server";
import { SchemaTooNewError } from "../db/migrate";
import type { CliIO } from "./common";

export const SERVE_HELP = `Usage: textwire serve [options]   (also the default with no command)

Starts the HTTP API. Applies pending migrations first; on an empty database creates a first
account and prints its admin key once, on stdout.

Options (each also an environment variable):
${OPTIONS.map((o) => `  --${o.flag}${o.type === "bool" ? "" : " VALUE"}`.padEnd(34) + `${o.help}${o.default !== undefined ? ` [default: ${o.default}]` : ""}\n${" ".repeat(34)}env ${envName(o.flag)}`).join("\n")}`;

export async function serveCommand(parsed: ParsedArgs, io: CliIO): Promise<number> {
  const config = buildServeConfig(parsed, io.env, io.isTTY);
  const logger = createLogger(config.logFormat);
  let running;
  try {
    running = await startServer(config, {
      logger,
      onFirstKey: (k) => {
        io.out("First start on an empty database: created an account and its admin API key (an operator key: it may also download backups).");
        io.out(`Admin API key (shown once — store it now): ${k.apiKey}`);
        io.out(`Account id: ${k.accountId}`);
      },
    });
  } catch (err) {
    if (err instanceof SchemaTooNewError) {
      io.err(err.message);
      return 1;
    }
    throw err;
  }
  if (!config.tlsCert) {
    io.err(
      "warning: serving plain HTTP. Clients must reach Textwire over HTTPS: give it --tls-cert/--tls-key, " +
        "or put it behind a TLS reverse proxy and pass --trust-proxy, before it leaves a trusted LAN.",
    );
  }
  io.out(`Textwire listening on ${running.url} (database ${config.db})`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info("shutting down", { signal });
      await running.stop();
      resolve();
    };
    process.on("SIGINT", () => void stop("SIGINT"));
    process.on("SIGTERM", () => void stop("SIGTERM"));
  });
  return 0;
}
