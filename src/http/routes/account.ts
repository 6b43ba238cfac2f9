import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { AccountAnswer, StoredBackupsAnswer } from "../models/account";
import { AccountOverviewService } from "../../services/account-overview";
import { listStoredBackups } from "../../services/stored-backups";
import { DEFAULT_BACKUP_EVERY_MS } from "../../services/backups";
import { routeAccess } from "../plugins/route-access";

/** `GET /v1/account` (any key: what the account may do and has used) and the operator's list of scheduled backups. */
export function accountRoutes(deps: AppDeps) {
  const overview = new AccountOverviewService(deps.sqlite);
  return new Elysia({ name: "account-routes" })
    .use(routeAccess)
    .get("/v1/account", ({ request }) => ({ status: "success" as const, data: overview.get(authOf(request), deps.clock()) }), {
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
      () => {
        const dir = deps.config.backupDir ?? null;
        const everyMs = dir ? (deps.config.backupEveryMs ?? DEFAULT_BACKUP_EVERY_MS) : null;
        return {
          status: "success" as const,
          data: {
            scheduled: dir !== null,
            directory: dir,
            everyMinutes: everyMs === null ? null : Math.max(1, Math.round(everyMs / 60_000)),
            keep: deps.config.backupKeep,
            backups: dir ? listStoredBackups(dir) : [],
          },
        };
      },
      {
        permission: "operator", rateLimit: "api-key",
        response: { 200: StoredBackupsAnswer },
        detail: { summary: "The scheduled backups in --backup-dir, newest first (operator)", tags: ["Operations"] },
      },
    );
}
