import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { authOf } from "../../context";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/**
 * SMSGate's settings: one document per account, in SMSGate's camelCase shape, mapped onto the
 * account's phones' own settings and announced to them (services/smsgate-settings.ts). PUT
 * replaces, PATCH merges; both answer the document as stored. Reading needs what reading phones
 * needs; changing them what changing a phone needs (docs/api-decisions.md, "SMSGate third-party
 * API: devices, health, settings").
 */
export function thirdPartySettingsRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-settings", prefix: "/settings" })
    .use(routeAccess)
    .get("", ({ request }) => deps.smsgateSettings.get(authOf(request).accountId), {
      permission: "devices.read", rateLimit: "api-key",
      detail: { ...hidden, summary: "The phones' settings (SMSGate)" },
    })
    .put("", ({ request, body }) => deps.smsgateSettings.update(authOf(request).accountId, body, "replace"), {
      permission: "devices.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Replace the phones' settings (SMSGate)" },
    })
    .patch("", ({ request, body }) => deps.smsgateSettings.update(authOf(request).accountId, body, "merge"), {
      permission: "devices.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Change some of the phones' settings (SMSGate)" },
    });
}
