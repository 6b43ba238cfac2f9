import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

export function thirdPartyWebhooksRoutes(deps: AppDeps) {
  void deps;
  return new Elysia({ name: "thirdparty-webhooks", prefix: "/webhooks" })
    .use(routeAccess)
    .get("", () => [], { permission: "event-endpoints.read", rateLimit: "api-key", detail: { ...hidden, summary: "List webhooks (SMSGate)" } });
}
