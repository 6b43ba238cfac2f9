/**
 * `textwire service install|uninstall`: Textwire as a systemd service for the running binary and
 * database (docs/operations.md, "Installing as a service"). The unit's text is
 * src/domain/systemd-unit.ts; this file finds what goes in it and runs useradd/systemctl.
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { envName, OPTIONS, resolveOptions, type ParsedArgs } from "../config";
import { systemdUnit } from "../domain/systemd-unit";
import { isCompiledExecutable } from "../lib/cli-command";
import { UsageError, type CliIO } from "./common";

export const SERVICE_HELP = `Usage:
  textwire service install [--dry-run] [--user NAME] [--db PATH] [serve options …]
  textwire service uninstall [--dry-run]

install (Linux with systemd, as root) makes Textwire start with the machine and restart after a
failure: it creates the system user (default textwire), gives it the database's folder, writes
/etc/systemd/system/textwire.service for this program and database, enables and starts it, and
says where the one-time setup link appears. serve options given here (--domain, --acme-email,
--port, --public-url, --backup-dir, …) go into the unit as TEXTWIRE_* settings. The service may use
ports 80 and 443 (for --domain, or Settings → "Get a certificate") and nothing else privileged.
--dry-run prints the unit and the commands instead. uninstall stops and removes the service; the
database and the user stay.`;

export const UNIT_PATH = "/etc/systemd/system/textwire.service";
const OWN_FLAGS = ["dry-run", "user"];

/** The command that runs this Textwire: the compiled executable itself, or Bun with this checkout's entry point. */
export function runningCommand(): string[] {
  if (isCompiledExecutable()) return [process.execPath];
  return [process.execPath, resolve(import.meta.dir, "..", "main.ts")];
}

type Run = (cmd: string[]) => { code: number; out: string };
const defaultRun: Run = (cmd) => {
  const p = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? 1, out: `${p.stdout.toString()}${p.stderr.toString()}`.trim() };
};

export function serviceCommand(parsed: ParsedArgs, io: CliIO, run: Run = defaultRun): number {
  const [, sub] = parsed.positionals;
  const dry = parsed.flags.get("dry-run") === true;
  if (sub !== "install" && sub !== "uninstall") throw new UsageError(sub ? `unknown service command "${sub}"\n\n${SERVICE_HELP}` : SERVICE_HELP);
  if (!dry && process.platform !== "linux") {
    io.err("textwire service: services are installed with systemd, on Linux. Elsewhere start `textwire serve` with your system's own tool.");
    return 1;
  }
  if (!dry && !existsSync("/run/systemd/system")) {
    io.err("textwire service: this machine does not run systemd (no /run/systemd/system). Start `textwire serve` with your system's own tool, or see docs/operations.md.");
    return 1;
  }
  if (!dry && process.getuid?.() !== 0) {
    io.err("textwire service: run it as root (sudo), which installing a system service needs. --dry-run shows what it would do.");
    return 1;
  }
  if (sub === "uninstall") {
    const steps = [["systemctl", "disable", "--now", "textwire"], ["rm", "-f", UNIT_PATH], ["systemctl", "daemon-reload"]];
    if (dry) {
      io.out(steps.map((s) => s.join(" ")).join("\n"));
      return 0;
    }
    run(steps[0]);
    rmSync(UNIT_PATH, { force: true });
    run(steps[2]);
    io.out("Textwire is no longer a service (stopped, and it will not start with the machine). The database and the textwire user are left as they were.");
    return 0;
  }
  // Every serve option given here becomes a TEXTWIRE_* line, as given (checked by serve at start).
  const given = parsed.flags.get("user");
  const user = typeof given === "string" ? given : "textwire";
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(user)) throw new UsageError(`--user: "${user}" is not a user name`);
  const o = resolveOptions(parsed, OPTIONS, io.env, OWN_FLAGS);
  const dbGiven = o.db as string;
  const db = isAbsolute(dbGiven) ? dbGiven : resolve(dbGiven);
  const env: Array<[string, string]> = [];
  for (const spec of OPTIONS) {
    if (spec.global) continue;
    const v = parsed.flags.get(spec.flag);
    if (v === undefined) continue;
    env.push([envName(spec.flag), v === true ? (spec.bare ?? "true") : v]);
  }
  if (!env.some(([k]) => k === "TEXTWIRE_LOG_FORMAT")) env.unshift(["TEXTWIRE_LOG_FORMAT", "json"]);
  const backupDir = parsed.flags.get("backup-dir");
  const writable = typeof backupDir === "string" ? [resolve(backupDir)] : [];
  const unit = systemdUnit({ exec: runningCommand(), db, user, env, writable });
  const steps = [
    `id -u ${user} || useradd --system --home-dir ${dirname(db)} --shell /usr/sbin/nologin ${user}`,
    `mkdir -p ${dirname(db)} && chown -R ${user}:${user} ${[dirname(db), ...writable].join(" ")}`,
    `write ${UNIT_PATH}`,
    "systemctl daemon-reload",
    "systemctl enable --now textwire",
  ];
  const after = [
    `The first time, the one-time setup link is printed to the service's log: sudo journalctl -u textwire -n 20 --no-pager`,
    `(a new link at any time: sudo -u ${user} ${runningCommand().join(" ")} setup-link --db ${db})`,
    "Status: systemctl status textwire · Logs: journalctl -u textwire -f · Remove: textwire service uninstall",
  ];
  if (dry) {
    io.out(unit);
    io.out(`# would run:\n${steps.map((s) => `#   ${s}`).join("\n")}`);
    io.out(after.map((l) => `# ${l}`).join("\n"));
    return 0;
  }
  if (run(["id", "-u", user]).code !== 0) {
    const r = run(["useradd", "--system", "--home-dir", dirname(db), "--shell", "/usr/sbin/nologin", user]);
    if (r.code !== 0) {
      io.err(`textwire service: could not create the user ${user}: ${r.out}`);
      return 1;
    }
  }
  for (const d of [dirname(db), ...writable]) {
    mkdirSync(d, { recursive: true });
    run(["chown", "-R", `${user}:${user}`, d]);
  }
  // The service's user must be able to walk down to the database.
  for (let d = dirname(dirname(db)); d !== "/" && d !== "."; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) io.err(`warning: ${d} is closed to other users, so ${user} cannot reach the database under it; move the database (e.g. --db /var/lib/textwire/textwire.db).`);
  }
  writeFileSync(UNIT_PATH, unit, { mode: 0o644 });
  for (const cmd of [["systemctl", "daemon-reload"], ["systemctl", "enable", "--now", "textwire"]]) {
    const r = run(cmd);
    if (r.code !== 0) {
      io.err(`textwire service: ${cmd.join(" ")} failed: ${r.out}`);
      return 1;
    }
  }
  io.out(`Textwire is installed as a service: it runs now, starts with the machine and restarts after a failure (${UNIT_PATH}).`);
  for (const l of after) io.out(l);
  return 0;
}
