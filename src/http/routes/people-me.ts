import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { authOf } from "../context";
import { routeAccess } from "../plugins/route-access";
import { NotificationSettingsAnswer, NotificationSettingsBody } from "../models/notifications";

/** The signed-in person (a key's session has none). */
function me(request: Request) {
  const user = authOf(request).user;
  if (!user) throw new AppError("SESSION_NOT_FOUND", { message: "Sign in with your e-mail and password to do this (this request used an API key)" });
  return user;
}

/**
 * A person's own profile: their mobile number and what they want to hear about (docs/api.md,
 * "Being told"; docs/api-decisions.md, "The owner hears back", the team told).
 */
export function peopleMeRoutes(deps: AppDeps) {
  return new Elysia({ name: "people-me-routes" })
    .use(routeAccess)
    .get("/v1/people/me", ({ request }) => ({ status: "success" as const, data: deps.teamNotices.settings(me(request).id) }), {
      permission: "session.own",
      rateLimit: "api-key",
      response: { 200: NotificationSettingsAnswer },
      detail: { summary: "Your mobile number and what you are told about (a person's session)", tags: ["Account"], "x-errors": ["SESSION_NOT_FOUND"] },
    })
    .patch(
      "/v1/people/me",
      ({ request, body }) => ({ status: "success" as const, message: "Saved", data: deps.teamNotices.update(me(request).id, body) }),
      {
        permission: "session.own",
        rateLimit: "api-key",
        body: NotificationSettingsBody,
        response: { 200: NotificationSettingsAnswer },
        detail: { summary: "Change your mobile number, what you are told about and your quiet hours; fields not given stay", tags: ["Account"], "x-errors": ["SESSION_NOT_FOUND"] },
      },
    );
}
