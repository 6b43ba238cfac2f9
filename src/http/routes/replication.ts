import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { ReplicationAnswer, ReplicationBody } from "../models/replication";
import { routeAccess } from "../plugins/route-access";

/** `GET/PUT /v1/admin/replication` (operator): the replica address and how replication goes. */
export function replicationRoutes(deps: AppDeps) {
  return new Elysia({ name: "replication-routes", prefix: "/v1/admin" })
    .use(routeAccess)
    .get("/replication", () => ({ status: "success" as const, data: deps.replicationSettings.get() }), {
      permission: "operator", rateLimit: "api-key",
      response: { 200: ReplicationAnswer },
      detail: {
        summary: "Where the database is replicated, and how far behind the replica is (operator)",
        description: "Continuous replication with Litestream: every change is copied to the replica within about a second. `flagUrl` set means --replicate is in force and wins over the saved address.",
        tags: ["Operations"],
      },
    })
    .put(
      "/replication",
      async ({ body }) => ({
        status: "success" as const,
        message: body.url ? "Replication address saved; Litestream restarted on it" : "Replication turned off",
        data: await deps.replicationSettings.set(body.url),
      }),
      {
        permission: "operator", rateLimit: "api-key",
        body: ReplicationBody,
        response: { 200: ReplicationAnswer },
        detail: {
          "x-errors": ["VALIDATION_ERROR", "INVALID_STATE"],
          summary: "Set (or with null clear) the replica address (operator)",
          description: "Checked like --replicate; refused with INVALID_STATE while the server runs with --replicate (the flag wins).",
          tags: ["Operations"],
        },
      },
    );
}
