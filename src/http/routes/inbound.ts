import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { InboundAnswer, InboundBody, InboundListAnswer, InboundListQuery } from "../models/inbound";
import { routeAccess } from "../plugins/route-access";

/**
 * Inbound messages. `POST /v1/messages/inbound` is reached as `/v1/messages/<KEY>/inbound` too:
 * the outer handler authenticates the key segment and rewrites the path, as for `…/next`.
 */
export function inboundRoutes(deps: AppDeps) {
  return new Elysia({ name: "inbound-routes" })
    .use(routeAccess)
    .post(
      "/v1/messages/inbound",
      ({ request, body, set }) => {
        const r = deps.inbound.handle(authOf(request).accountId, body as Parameters<typeof deps.inbound.handle>[1]);
        set.status = r.duplicate || r.fromTeam ? 200 : 201;
        if (r.fromTeam) return { status: "success" as const, message: "From a team member's mobile: not stored as a customer's text", data: { message: r.message, duplicate: false, fromTeam: true } };
        return { status: "success" as const, message: r.duplicate ? "Already received" : "Inbound message stored", data: { message: r.message, duplicate: r.duplicate } };
      },
      {
        permission: "phone.report", rateLimit: "device-report",
        body: InboundBody,
        response: { 200: InboundAnswer, 201: InboundAnswer },
        detail: { summary: "Report a text the phone received (recipes; SMSGate uses its own webhook)", tags: ["Devices"] },
      },
    )
    .get(
      "/v1/inbound",
      ({ request, query }) => ({ status: "success" as const, data: deps.inbound.list(authOf(request).accountId, query) }),
      { permission: "messages.read", rateLimit: "api-key", query: InboundListQuery, response: InboundListAnswer, detail: { summary: "List received texts, newest first", tags: ["Messages"] } },
    );
}
