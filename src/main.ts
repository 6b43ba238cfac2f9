#!/usr/bin/env bun
/** argv → CLI command (default serve); nothing else. */
import { ConfigError, parseArgs } from "./config";
import { VERSION } from "./version";
import { SCHEMA_VERSION } from "./db/migrate";
import type { CliIO } from "./cli/common";
import { serveCommand, SERVE_HELP } from "./cli/serve";
import { accountsCommand, ACCOUNTS_HELP } from "./cli/accounts";
import { keysCommand, KEYS_HELP } from "./cli/keys";
import { migrateCommand, MIGRATE_HELP } from "./cli/migrate";
import { COMMANDS_EXTRA } from "./cli/registry";

export const HELP = `textwire ${VERSION} — self-hosted form-to-text-message appliance

Usage: textwire [command] [options]

Commands:
  serve                 start the HTTP API (default)
  accounts create|list|update|delete
                        manage accounts
  keys create|list|revoke  manage API keys
  migrate               apply schema migrations and exit
${COMMANDS_EXTRA.map((c) => `  ${c.name.padEnd(22)}${c.summary}`).join("\n")}

Every command takes --db PATH (env TEXTWIRE_DB, default ./data/textwire.db).
textwire <command> --help shows a command's options.`;

const BOOLEAN_FLAGS = new Set(["json", "help", "version", "metrics", "force", "operator", "reusable", "allow-private-webhook-urls", "confirm", "stage-timing", "check", "rebuild", "no-serve", "dry-run"]);

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseArgs(argv, BOOLEAN_FLAGS);
  const cmd = parsed.positionals[0] ?? "serve";
  if (parsed.flags.get("version") === true) {
    io.out(parsed.flags.get("json") === true ? JSON.stringify({ version: VERSION, schemaVersion: SCHEMA_VERSION }) : `textwire ${VERSION} (schema ${SCHEMA_VERSION})`);
    return 0;
  }
  const help = parsed.flags.get("help") === true || cmd === "help";
  try {
    switch (cmd) {
      case "serve":
        if (help) return io.out(SERVE_HELP), 0;
        return await serveCommand(parsed, io);
      case "accounts":
        if (help) return io.out(ACCOUNTS_HELP), 0;
        return accountsCommand(parsed, io);
      case "keys":
        if (help) return io.out(KEYS_HELP), 0;
        return keysCommand(parsed, io);
      case "migrate":
        if (help) return io.out(MIGRATE_HELP), 0;
        return migrateCommand(parsed, io);
      case "help":
        io.out(HELP);
        return 0;
      default: {
        const extra = COMMANDS_EXTRA.find((c) => c.name === cmd);
        if (extra) {
          if (help) return io.out(extra.help), 0;
          return await extra.run(parsed, io);
        }
        if (parsed.positionals.length === 0 && help) return io.out(HELP), 0;
        io.err(`unknown command "${cmd}"\n\n${HELP}`);
        return 2;
      }
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`textwire: ${err.message}`);
      return 2;
    }
    if (err instanceof Error && /SchemaTooNew|newer Textwire/.test(err.message)) {
      io.err(err.message);
      return 1;
    }
    throw err;
  }
}

if (import.meta.main) {
  const io: CliIO = {
    out: (l) => process.stdout.write(l + "\n"),
    err: (l) => process.stderr.write(l + "\n"),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
  };
  const argv = process.argv.slice(2);
  // `textwire --help` with no command prints the overview.
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    io.out(HELP);
    process.exit(0);
  }
  runCli(argv, io).then(
    (code) => process.exit(code),
    (err) => {
      io.err(`textwire: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
