import { Elysia, t } from "elysia";
import type { AppDeps } from "../../../deps";
import { authOf } from "../../context";
import { SmsgateIdParam, SmsgateWebhook, SmsgateWebhookBody } from "../../models/thirdparty";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/**
 * SMSGate's webhooks, kept as outbound event endpoints of format "smsgate" (services/thirdparty-webhooks.ts).
 * Listing takes any key, as SMSGate's documentation says; registering and deleting need an admin
 * key, as /v1/webhook-endpoints: a registration decides what leaves the server.
 */
export function thirdPartyWebhooksRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-webhooks", prefix: "/webhooks" })
    .use(routeAccess)
    .get("", ({ request }) => deps.thirdPartyWebhooks.list(authOf(request).accountId), {
      permission: "messages.read", rateLimit: "api-key", response: { 200: t.Array(SmsgateWebhook) }, detail: { ...hidden, summary: "List webhooks (SMSGate)" },
    })
    .post(
      "",
      async ({ request, body, set }) => {
        const hook = await deps.thirdPartyWebhooks.register(authOf(request).accountId, body);
        set.status = 201;
        return hook;
      },
      { permission: "event-endpoints.write", rateLimit: "api-key", body: SmsgateWebhookBody, response: { 201: SmsgateWebhook }, detail: { ...hidden, summary: "Register or replace a webhook (SMSGate)" } },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        deps.thirdPartyWebhooks.delete(authOf(request).accountId, params.id);
        return new Response(null, { status: 204 });
      },
      { permission: "event-endpoints.write", rateLimit: "api-key", params: SmsgateIdParam, detail: { ...hidden, summary: "Delete a webhook (SMSGate; 204 also when unknown)" } },
    );
}
