import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { THIRDPARTY_PREFIX } from "../access";
import { authOf, stateOf } from "../context";
import { SmsgateClientsAnswer, SmsgateClientsBody } from "../models/smsgate-clients";
import { routeAccess } from "../plugins/route-access";

const tags = ["Account"];

/**
 * `GET/PUT /v1/account/smsgate-clients` (admin: the signing key is a secret): what Settings →
 * SMSGate clients shows — the base URL, the login (the account id), where the password comes
 * from — and the rules for texts SMSGate clients send (docs/api-decisions.md, "SMSGate third-party API").
 */
export function smsgateClientsRoutes(deps: AppDeps) {
  const view = (request: Request) => {
    const { accountId } = authOf(request);
    return {
      baseUrl: deps.serverAddress.publicAddress(stateOf(request).origin).url.replace(/\/+$/, "") + THIRDPARTY_PREFIX,
      login: accountId,
      passwordHint: "An API key of this account (Settings → Developers → API keys): a standard key can send; registering webhooks needs an admin key",
      signingKey: deps.thirdParty.signingKey(accountId),
      ...deps.thirdParty.rules(accountId),
    };
  };
  return new Elysia({ name: "smsgate-clients-routes", prefix: "/v1/account" })
    .use(routeAccess)
    .get("/smsgate-clients", ({ request }) => ({ status: "success" as const, data: view(request) }), {
      permission: "settings.read", rateLimit: "api-key", response: SmsgateClientsAnswer,
      detail: { summary: "How SMSGate's apps and integrations sign in, and the rules for their texts (admin)", tags },
    })
    .put(
      "/smsgate-clients",
      ({ request, body }) => {
        deps.thirdParty.setRules(authOf(request).accountId, body as Record<string, unknown>);
        return { status: "success" as const, message: "SMSGate client settings saved", data: view(request) };
      },
      {
        permission: "settings.write", rateLimit: "api-key", body: SmsgateClientsBody, response: SmsgateClientsAnswer,
        detail: { "x-errors": ["VALIDATION_ERROR"], summary: "Set quiet hours and the per-recipient limit for texts from SMSGate clients; null turns one off (admin)", tags },
      },
    );
}
