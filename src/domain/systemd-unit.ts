/**
 * The systemd unit `textwire service install` writes (docs/operations.md, "Installing as a
 * service"); scripts/textwire.service is this text for the usual paths (a test keeps them equal).
 * Pure: the caller finds the binary, the database and the options.
 */
import { dirname } from "node:path";

export interface UnitInput {
  /** The command that starts Textwire, e.g. ["/usr/local/bin/textwire"] or [bun, "/srv/textwire/src/main.ts"]. */
  exec: string[];
  /** Absolute path of the database. */
  db: string;
  user: string;
  /** TEXTWIRE_* settings given to `service install` (besides TEXTWIRE_DB), in order. */
  env: Array<[string, string]>;
  /** Other folders the service writes to (a backup folder). */
  writable: string[];
}

const quote = (v: string) => (/^[A-Za-z0-9_@%+=:,./-]*$/.test(v) ? v : `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%")}"`);

export function systemdUnit(u: UnitInput): string {
  const dbDir = dirname(u.db);
  const stateDir = dbDir.startsWith("/var/lib/") && !dbDir.slice("/var/lib/".length).includes("/") ? dbDir.slice("/var/lib/".length) : undefined;
  const underHome = [u.db, ...u.writable].some((p) => p === "/root" || p.startsWith("/root/") || p.startsWith("/home/"));
  const lines = [
    "# systemd unit for Textwire, as `textwire service install` writes it (docs/operations.md, \"Installing as a service\").",
    "#   sudo textwire service install [--domain sms.example.com --acme-email you@example.com] [--dry-run]",
    "#   sudo journalctl -u textwire -n 20 --no-pager   # the one-time setup link appears here (a new one: textwire setup-link)",
    "# Settings: the TEXTWIRE_* lines below, or /etc/textwire/textwire.env (one per line, as in the serve",
    "# options table of docs/operations.md), then `sudo systemctl restart textwire`.",
    "[Unit]",
    "Description=Textwire form-to-SMS service",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `User=${u.user}`,
    `Group=${u.user}`,
    ...(stateDir ? [`# ${dbDir}, owned by ${u.user}, created by systemd.`, `StateDirectory=${stateDir}`, "StateDirectoryMode=0750"] : []),
    `WorkingDirectory=${dbDir}`,
    `Environment=TEXTWIRE_DB=${quote(u.db)}`,
    ...u.env.map(([k, v]) => `Environment=${k}=${quote(v)}`),
    "EnvironmentFile=-/etc/textwire/textwire.env",
    `ExecStart=${u.exec.map(quote).join(" ")} serve`,
    "# SIGTERM: stop accepting, finish in-flight requests, close the database, exit 0.",
    "KillSignal=SIGTERM",
    "# Long-polling devices (wait up to 30 s) are answered before exit.",
    "TimeoutStopSec=45",
    "Restart=on-failure",
    "RestartSec=5",
    "",
    "# Hardening: the service needs its database folder, the network, and nothing else.",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    `ReadWritePaths=${[dbDir, ...u.writable].map(quote).join(" ")}`,
    underHome ? "# The database lives under a home folder: home folders stay visible to the service." : "ProtectHome=yes",
    ...(underHome ? ["ProtectHome=no"] : []),
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "ProtectClock=yes",
    "ProtectHostname=yes",
    "ProtectProc=invisible",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
    "RestrictNamespaces=yes",
    "RestrictRealtime=yes",
    "RestrictSUIDSGID=yes",
    "LockPersonality=yes",
    "RemoveIPC=yes",
    "UMask=0077",
    "SystemCallArchitectures=native",
    "SystemCallFilter=@system-service",
    "# A refused call fails with EPERM instead of killing the process.",
    "SystemCallErrorNumber=EPERM",
    "# One privilege: ports 80 and 443 (--domain, or Settings → Server address → \"Get a certificate\").",
    "CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
    "AmbientCapabilities=CAP_NET_BIND_SERVICE",
    "# Bun's JIT needs writable+executable memory, so MemoryDenyWriteExecute stays off.",
    "MemoryDenyWriteExecute=no",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ];
  return lines.join("\n");
}
