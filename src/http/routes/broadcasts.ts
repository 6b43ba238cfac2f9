import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { IdParam } from "../models/common";
import {
  BroadcastAcceptedAnswer,
  BroadcastAnswer,
  BroadcastBody,
  BroadcastCancelAnswer,
  BroadcastCreateQuery,
  BroadcastListAnswer,
  BroadcastListQuery,
  BroadcastPreviewAnswer,
} from "../models/broadcasts";
import { routeAccess } from "../plugins/route-access";

export function broadcastsRoutes(deps: AppDeps) {
  return new Elysia({ name: "broadcasts-routes", prefix: "/v1/broadcasts" })
    .use(routeAccess)
    .post(
      "/",
      async ({ request, body, query, set }) => {
        const r = await deps.broadcasts.create(authOf(request).accountId, body, { dryRun: query.dryRun === "true" });
        if (r.dryRun) {
          const { dryRun: _, ...preview } = r;
          return { status: "success", data: preview };
        }
        set.status = 202;
        return {
          status: "success",
          message: "Broadcast accepted; its messages are being queued",
          data: { broadcastId: r.broadcast.id, recipients: r.broadcast.recipients, suppressed: r.broadcast.suppressed, broadcast: r.broadcast },
        };
      },
      {
        permission: "broadcasts.write", rateLimit: "api-key",
        body: BroadcastBody,
        query: BroadcastCreateQuery,
        response: { 200: BroadcastPreviewAnswer, 202: BroadcastAcceptedAnswer },
        detail: { summary: "Send one text to a segment of contacts (admin); ?dryRun=true previews", tags: ["Broadcasts"], "x-errors": ["FORM_NOT_FOUND"] },
      },
    )
    .get("/", ({ request, query }) => ({ status: "success", data: deps.broadcasts.list(authOf(request).accountId, query) }), {
      permission: "broadcasts.read", rateLimit: "api-key",
      query: BroadcastListQuery,
      response: { 200: BroadcastListAnswer },
      detail: { summary: "List broadcasts with their progress", tags: ["Broadcasts"] },
    })
    .get("/:id", ({ request, params }) => ({ status: "success", data: { broadcast: deps.broadcasts.get(authOf(request).accountId, params.id) } }), {
      permission: "broadcasts.read", rateLimit: "api-key",
      params: IdParam,
      response: { 200: BroadcastAnswer },
      detail: { summary: "A broadcast and its progress (queued, sent, failed, cancelled)", tags: ["Broadcasts"] },
    })
    .post(
      "/:id/cancel",
      async ({ request, params }) => {
        const r = await deps.broadcasts.cancel(authOf(request).accountId, params.id);
        return { status: "success", message: `Broadcast cancelled; ${r.cancelled} queued message(s) cancelled`, data: r };
      },
      { permission: "broadcasts.write", rateLimit: "api-key", params: IdParam, response: { 200: BroadcastCancelAnswer }, detail: { summary: "Cancel what a broadcast still has queued (admin)", tags: ["Broadcasts"] } },
    );
}
