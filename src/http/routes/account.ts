import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { AccountAnswer, BackupScheduleBody, StoredBackupsAnswer } from "../models/account";
import { backupsView } from "../../services/backup-schedule";
import { routeAccess } from "../plugins/route-access";

/** `GET /v1/account` (any key: what the account may do and has used) and the operator's list of scheduled backups. */
/** How long saving a backup schedule waits for its first backup before answering (ms). */
const FIRST_BACKUP_WAIT_MS = 5_000;

export function accountRoutes(deps: AppDeps) {
  const backups = () => backupsView(deps.backupSchedule, deps.config.backupKeep);
  return new Elysia({ name: "account-routes" })
    .use(routeAccess)
    .get("/v1/account", ({ request }) => ({ status: "success" as const, data: deps.accountOverview.get(authOf(request), deps.clock()) }), {
      permission: "account.read", rateLimit: "api-key",
      response: { 200: AccountAnswer },
      detail: {
        summary: "The account's plan, limits and this month's message count, and what the calling key may do",
        description: "Read-only: the server's operator changes limits with `textwire accounts update`.",
        tags: ["Account"],
      },
    })
    .get(
      "/v1/admin/backups",
      () => ({ status: "success" as const, data: backups() }),
      {
        permission: "operator", rateLimit: "api-key",
        response: { 200: StoredBackupsAnswer },
        detail: { summary: "The backup schedule and the scheduled backups, newest first (operator)", tags: ["Operations"] },
      },
    )
    .put(
      "/v1/admin/backups",
      async ({ body }) => {
        deps.backupSchedule.set(body);
        // The first backup starts now; a small database's is listed in this answer already.
        const first = deps.backupSchedule.firstBackup;
        if (first) await Promise.race([first, Bun.sleep(FIRST_BACKUP_WAIT_MS)]);
        return { status: "success" as const, message: body.directory ? "Backup schedule saved; a backup is made at once" : "Scheduled backups turned off", data: backups() };
      },
      {
        permission: "operator", rateLimit: "api-key",
        body: BackupScheduleBody,
        response: { 200: StoredBackupsAnswer },
        detail: {
          "x-errors": ["VALIDATION_ERROR", "INVALID_STATE"],
          summary: "Set (or with directory null turn off) scheduled backups (operator)",
          description: "The folder is created when missing and checked for writability at once. Applies without a restart. Refused with INVALID_STATE while the server runs with --backup-dir (the flag wins).",
          tags: ["Operations"],
        },
      },
    );
}
