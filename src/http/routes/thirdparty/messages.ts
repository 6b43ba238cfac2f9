import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/** One resource under both spellings: the npm client uses /message, client-go and newer clients /messages. */
function messagesAt(deps: AppDeps, prefix: "/message" | "/messages") {
  void deps;
  return new Elysia({ name: `thirdparty-messages${prefix}`, prefix })
    .use(routeAccess)
    .get(
      "",
      ({ set }) => {
        set.headers["X-Total-Count"] = "0";
        return [];
      },
      { permission: "messages.read", rateLimit: "api-key", detail: { ...hidden, summary: "List messages (SMSGate)" } },
    );
}

export function thirdPartyMessagesRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-messages" }).use(messagesAt(deps, "/message")).use(messagesAt(deps, "/messages"));
}
