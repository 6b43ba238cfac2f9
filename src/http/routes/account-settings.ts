import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { AccountSettingsAnswer, AccountSettingsBody } from "../models/account-settings";
import { routeAccess } from "../plugins/route-access";

/** `GET/PUT /v1/account/settings` (admin: settings.read, settings.write): keyword lists and replies. */
export function accountSettingsRoutes(deps: AppDeps) {
  return new Elysia({ name: "account-settings-routes", prefix: "/v1/account" })
    .use(routeAccess)
    .get(
      "/settings",
      ({ request }) => ({ status: "success" as const, data: deps.accountSettings.get(authOf(request).accountId) }),
      { permission: "settings.read", rateLimit: "api-key", response: AccountSettingsAnswer, detail: { summary: "The account's keyword lists and replies (admin)", tags: ["Account"] } },
    )
    .put(
      "/settings",
      ({ request, body }) => ({
        status: "success" as const,
        message: "Settings updated",
        data: deps.accountSettings.update(authOf(request).accountId, body),
      }),
      { permission: "settings.write", rateLimit: "api-key", body: AccountSettingsBody, response: AccountSettingsAnswer, detail: { summary: "Change keyword lists and replies; null restores a default (admin)", tags: ["Account"] } },
    );
}
