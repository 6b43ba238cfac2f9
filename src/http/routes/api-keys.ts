import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { CreateKeyBody, KeyCreatedAnswer, KeyIdParam, KeyListAnswer, KeyRevokedAnswer } from "../models/api-keys";
import { routeAccess } from "../plugins/route-access";

/** The account's API keys (admin): the dashboard's Settings → API keys. */
export function apiKeysRoutes(deps: AppDeps) {
  return new Elysia({ name: "api-keys-routes", prefix: "/v1/api-keys" })
    .use(routeAccess)
    .get("/", ({ request }) => ({ status: "success" as const, data: { keys: deps.apiKeys.list(authOf(request).accountId) } }), {
      permission: "api-keys.manage", rateLimit: "api-key",
      response: { 200: KeyListAnswer },
      detail: { summary: "The account's API keys: last 4 characters, permission, created, last used, revoked (admin)", tags: ["Account"] },
    })
    .post(
      "/",
      ({ request, body, set }) => {
        const key = deps.apiKeys.create(authOf(request).accountId, body);
        set.status = 201;
        return { status: "success" as const, message: "API key created: it is shown this once, store it now", data: key };
      },
      { permission: "api-keys.manage", rateLimit: "api-key", body: CreateKeyBody, response: { 201: KeyCreatedAnswer }, detail: { summary: "Create an API key; the answer is the only time it is shown (admin)", tags: ["Account"] } },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        deps.apiKeys.revoke(authOf(request).accountId, params.id);
        return { status: "success" as const, message: "API key revoked; its dashboard sessions have ended", data: { revokedId: params.id } };
      },
      { permission: "api-keys.manage", rateLimit: "api-key", params: KeyIdParam, response: { 200: KeyRevokedAnswer }, detail: { summary: "Revoke an API key at once (admin); not the account's last admin key", tags: ["Account"], "x-errors": ["KEY_NOT_FOUND", "INVALID_STATE"] } },
    );
}
