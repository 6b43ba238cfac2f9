import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { AccountSettingsAnswer, AccountSettingsBody, BusinessProfileAnswer, BusinessProfileBody } from "../models/account-settings";
import { routeAccess } from "../plugins/route-access";

/**
 * `GET/PUT /v1/account/settings` (admin: settings.read, settings.write): keyword lists and replies.
 * `GET/PUT /v1/account/profile` (the same permissions): the business's name, country and time zone.
 */
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
      {
        permission: "settings.write", rateLimit: "api-key", body: AccountSettingsBody, response: AccountSettingsAnswer,
        detail: { summary: "Change keyword lists and replies; null restores a default (admin)", tags: ["Account"], "x-errors": ["VALIDATION_ERROR", "COMMON_WORDS_UNCONFIRMED"] },
      },
    )
    .get(
      "/profile",
      ({ request }) => ({ status: "success" as const, data: deps.accountSettings.businessProfile(authOf(request).accountId) }),
      {
        permission: "settings.read", rateLimit: "api-key", response: BusinessProfileAnswer,
        detail: { summary: "The business's name, country and time zone, and the replies as customers receive them (admin)", tags: ["Account"] },
      },
    )
    .put(
      "/profile",
      ({ request, body }) => ({
        status: "success" as const,
        message: "Business details saved",
        data: deps.accountSettings.setBusinessProfile(authOf(request).accountId, body),
      }),
      {
        permission: "settings.write", rateLimit: "api-key", body: BusinessProfileBody, response: BusinessProfileAnswer,
        detail: {
          "x-errors": ["VALIDATION_ERROR"],
          summary: "Set the business's name, country and time zone (admin)",
          description: "All three are required. Until a name is saved here (or on the setup page), replies to STOP, START and HELP say \"this number\" instead of the account's name.",
          tags: ["Account"],
        },
      },
    );
}
