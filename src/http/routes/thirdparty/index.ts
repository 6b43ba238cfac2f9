import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { THIRDPARTY_PREFIX } from "../../access";
import { thirdPartyMessagesRoutes } from "./messages";
import { thirdPartyWebhooksRoutes } from "./webhooks";
import { thirdPartyDevicesRoutes } from "./devices";
import { rootProbeRoutes, thirdPartyHealthRoutes } from "./health";
import { thirdPartySettingsRoutes } from "./settings";
import { thirdPartyInboxRoutes } from "./inbox";
import { thirdPartyAuthRoutes } from "./auth";

/**
 * SMSGate's third-party API at /3rdparty/v1, so SMSGate's own clients (the npm package, client-go,
 * client-py, Home Assistant, n8n) work against Textwire unchanged: only the base URL and the
 * credentials are new (docs/phones.md, "Using Textwire as your SMSGate server"; docs/api-decisions.md,
 * "SMSGate third-party API").
 *
 * The outer handler does the rest for every route here: Basic auth (login = the account id,
 * password = an API key) or Bearer, the key's limiter, the declared permission, and SMSGate's
 * error body (src/http/thirdparty-errors.ts). Each route sets `detail.hide`, which keeps it out of
 * /v1/openapi.json: the shapes are SMSGate's, documented by SMSGate.
 *
 * One file per SMSGate resource: messages.ts, webhooks.ts, devices.ts, health.ts (no key),
 * settings.ts, inbox.ts (the inbox list, export and refresh, and logs: 501), auth.ts (the JWTs).
 */
export function thirdPartyRoutes(deps: AppDeps) {
  const api = new Elysia({ name: "thirdparty-api", prefix: THIRDPARTY_PREFIX })
    .use(thirdPartyMessagesRoutes(deps))
    .use(thirdPartyWebhooksRoutes(deps))
    .use(thirdPartyDevicesRoutes(deps))
    .use(thirdPartyHealthRoutes(deps))
    .use(thirdPartySettingsRoutes(deps))
    .use(thirdPartyInboxRoutes(deps))
    .use(thirdPartyAuthRoutes(deps));
  // SMSGate's server also answers its three probes at its root (no key).
  return new Elysia({ name: "thirdparty-routes" }).use(api).use(rootProbeRoutes(deps));
}
