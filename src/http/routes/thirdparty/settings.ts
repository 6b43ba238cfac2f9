import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { AppError } from "../../../errors";
import { holdsPermission } from "../../authorize";
import { authOf } from "../../context";
import { routeAccess } from "../../plugins/route-access";
import { snakeCaseSettings } from "../../../domain/smsgate-settings";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/** Whether a body sets `webhooks.signingKey` (either spelling) to something. */
function setsSigningKey(body: unknown): boolean {
  const w = (body as { webhooks?: unknown } | null)?.webhooks;
  if (typeof w !== "object" || w === null) return false;
  const k = w as Record<string, unknown>;
  return [k.signingKey, k.signing_key].some((v) => v !== undefined && v !== null && v !== "");
}

/**
 * SMSGate's settings: one document per account, answered in SMSGate's snake_case (either spelling
 * is taken; stored camelCase), mapped onto the
 * account's phones' own settings and announced to them (services/smsgate-settings.ts). PUT
 * replaces, PATCH merges; both answer the document as stored. Reading needs what reading phones
 * needs; changing them what changing a phone needs (docs/api-decisions.md, "SMSGate third-party
 * API: devices, health, settings"). `webhooks.signingKey` is the account's signing key: only a
 * caller who may read the account's settings (an admin key) sees it, and setting it needs what
 * changing them needs (docs/api-decisions.md, "SMSGate: signing key in the settings document, and
 * re-sent history").
 */
export function thirdPartySettingsRoutes(deps: AppDeps) {
  const reader = (request: Request) => ({ withSigningKey: holdsPermission(authOf(request), "settings.read") });
  const update = (request: Request, body: unknown, mode: "replace" | "merge") => {
    const auth = authOf(request);
    if (setsSigningKey(body) && !holdsPermission(auth, "settings.write")) {
      throw new AppError("PERMISSION_ERROR", {
        message: "Setting webhooks.signingKey needs an admin key: it signs every webhook this account receives",
        details: { field: "webhooks.signingKey", required: "admin_access" },
      });
    }
    return snakeCaseSettings(deps.smsgateSettings.update(auth.accountId, body, mode, reader(request)));
  };
  return new Elysia({ name: "thirdparty-settings", prefix: "/settings" })
    .use(routeAccess)
    .get("", ({ request }) => snakeCaseSettings(deps.smsgateSettings.get(authOf(request).accountId, reader(request))), {
      permission: "devices.read", rateLimit: "api-key",
      detail: { ...hidden, summary: "The phones' settings (SMSGate)" },
    })
    .put("", ({ request, body }) => update(request, body, "replace"), {
      permission: "devices.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Replace the phones' settings (SMSGate)" },
    })
    .patch("", ({ request, body }) => update(request, body, "merge"), {
      permission: "devices.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Change some of the phones' settings (SMSGate)" },
    });
}
