import { Elysia, t } from "elysia";
import type { AppDeps } from "../../../deps";
import { authOf } from "../../context";
import { parseBearer } from "../../access";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/**
 * SMSGate's tokens (services/smsgate-tokens.ts): POST /auth/token (201, a pair for the calling
 * key, which must be allowed tokens:manage), POST /auth/token/refresh (the refresh token as
 * Bearer: a new pair, the old refresh token spent) and DELETE /auth/token/{jti} (204). Which scope
 * each call needs is checked by the outer handler for every SMSGate route (authorize.ts).
 */
export function thirdPartyAuthRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-auth", prefix: "/auth/token" })
    .use(routeAccess)
    .post(
      "",
      ({ request, body, set }) => {
        const pair = deps.smsgateTokens.issue(authOf(request), body);
        set.status = 201;
        return pair;
      },
      { permission: "messages.read", rateLimit: "api-key", body: t.Unknown(), detail: { ...hidden, summary: "A short-lived token with scopes (SMSGate)" } },
    )
    .post(
      "/refresh",
      ({ request, set }) => {
        const pair = deps.smsgateTokens.refresh(authOf(request), parseBearer(request.headers.get("authorization")) ?? "");
        set.status = 201;
        return pair;
      },
      { permission: "messages.read", rateLimit: "api-key", detail: { ...hidden, summary: "Exchange a refresh token for a new pair (SMSGate)" } },
    )
    .delete(
      "/:jti",
      ({ request, params }) => {
        deps.smsgateTokens.revoke(authOf(request).accountId, params.jti);
        return new Response(null, { status: 204 });
      },
      { permission: "messages.read", rateLimit: "api-key", params: t.Object({ jti: t.String({ minLength: 1, maxLength: 200 }) }), detail: { ...hidden, summary: "Revoke a token by its jti (SMSGate)" } },
    );
}
