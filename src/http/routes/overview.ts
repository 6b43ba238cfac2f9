import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import { OverviewAnswer, OverviewQuery } from "../models/overview";
import { cliCommand } from "../../lib/cli-command";
import { routeAccess } from "../plugins/route-access";

/** `GET /v1/overview`: everything the dashboard's Overview shows, in one request. */
export function overviewRoutes(deps: AppDeps) {
  const command = cliCommand();
  return new Elysia({ name: "overview-routes" })
    .use(routeAccess)
    .get(
      "/v1/overview",
      ({ request, query }) => {
        const state = stateOf(request);
        const data = deps.dashboardOverview.get(authOf(request).accountId, query.timezone, deps.clock(), {
          clientIp: state.clientIp,
          origin: state.origin,
          backupsScheduled: deps.backupSchedule.current() !== null,
          replicationOn: deps.replication.health().state !== "off",
          cliCommand: command,
        });
        return { status: "success" as const, data };
      },
      {
        permission: "messages.read", rateLimit: "api-key",
        query: OverviewQuery,
        response: { 200: OverviewAnswer },
        detail: {
          summary: "The dashboard's Overview in one answer: the queue, today's and the week's texts, the phones and the status warnings' facts",
          tags: ["Dashboard"],
          "x-errors": ["VALIDATION_ERROR"],
        },
      },
    );
}
