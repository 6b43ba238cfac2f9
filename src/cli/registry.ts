import type { ParsedArgs } from "../config";
import type { CliIO } from "./common";
import { BACKUP_HELP, backupCommand } from "./backup";
import { RESTORE_HELP, restoreCommand } from "./restore";
import { DEVICES_HELP, devicesCommand } from "./devices";
import { TLS_HELP, tlsCommand } from "./tls";
import { EVENTS_HELP, eventsCommand } from "./events";
import { DOCTOR_HELP, doctorCommand } from "./doctor";
import { SETUP_LINK_HELP, setupLinkCommand, USERS_HELP, usersCommand } from "./users";
import { SERVICE_HELP, serviceCommand } from "./service";
import { PROMOTE_HELP, promoteCommand, STANDBY_HELP, standbyCommand } from "./standby";

/** Commands beyond the core four (backup, restore): each registers its name, help and runner here. */
export interface ExtraCommand {
  name: string;
  summary: string;
  help: string;
  run(parsed: ParsedArgs, io: CliIO): number | Promise<number>;
}

export const COMMANDS_EXTRA: ExtraCommand[] = [
  { name: "backup", summary: "OUT_FILE: consistent online copy of the database, integrity-checked", help: BACKUP_HELP, run: backupCommand },
  { name: "devices", summary: "token --account ID: a registration token for the SMSGate app", help: DEVICES_HELP, run: devicesCommand },
  { name: "restore", summary: "IN_FILE | --from-replica URL: check a backup (or a replica's copy) and put it in place (server stopped)", help: RESTORE_HELP, run: restoreCommand },
  { name: "standby", summary: "--from-replica URL: keep this machine's copy of a replica up to date (warm standby)", help: STANDBY_HELP, run: standbyCommand },
  { name: "promote", summary: "stop the standby, restore the replica's newest state and start serving", help: PROMOTE_HELP, run: promoteCommand },
  { name: "tls", summary: "init|renew|status: local CA and certificate for HTTPS on a LAN", help: TLS_HELP, run: tlsCommand },
  { name: "doctor", summary: "--check|--rebuild: compare derived data (analytics, counts, search) with a recomputation", help: DOCTOR_HELP, run: doctorCommand },
  { name: "users", summary: "list|add|reset-password: the people who sign in to the dashboard (lock-outs)", help: USERS_HELP, run: usersCommand },
  { name: "setup-link", summary: "a new one-time address for the first run in the browser (24 h)", help: SETUP_LINK_HELP, run: setupLinkCommand },
  { name: "service", summary: "install|uninstall [--dry-run]: run Textwire as a systemd service (Linux)", help: SERVICE_HELP, run: (p, io) => serviceCommand(p, io) },
  { name: "events", summary: "tail: print outbound events as they happen (debugging)", help: EVENTS_HELP, run: (p, io) => eventsCommand(p, io) },
];
