import { Elysia, t } from "elysia";
import type { AppDeps } from "../../../deps";
import { actorOf } from "../../../domain/permissions";
import { THIRDPARTY_PREFIX } from "../../access";
import { authOf, stateOf } from "../../context";
import { SmsgateIdParam, SmsgateListQuery, SmsgateMessageState, SmsgateSendQuery } from "../../models/thirdparty";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/** One resource under both spellings: the npm client uses /message, client-go and newer clients /messages. */
function messagesAt(deps: AppDeps, prefix: "/message" | "/messages") {
  return new Elysia({ name: `thirdparty-messages${prefix}`, prefix })
    .use(routeAccess)
    .post(
      "",
      ({ request, body, query, set }) => {
        const auth = authOf(request);
        const state = deps.thirdParty.send(auth.accountId, body, {
          skipPhoneValidation: query.skipPhoneValidation === "true",
          monthlyQuota: auth.account.monthlyQuota,
          actor: actorOf(auth),
          ipAddress: stateOf(request).clientIp,
          userAgent: request.headers.get("user-agent"),
        });
        set.status = 202;
        set.headers["Location"] = `${THIRDPARTY_PREFIX}/messages/${encodeURIComponent(state.id)}`;
        return state;
      },
      { permission: "messages.send", rateLimit: "api-key", query: SmsgateSendQuery, body: t.Unknown(), response: { 202: SmsgateMessageState }, detail: { ...hidden, summary: "Send a text to 1-100 numbers (SMSGate)" } },
    )
    .get(
      "",
      ({ request, query, set }) => {
        const { items, total } = deps.thirdParty.list(authOf(request).accountId, query as Record<string, string | undefined>);
        set.headers["X-Total-Count"] = String(total);
        return items;
      },
      { permission: "messages.read", rateLimit: "api-key", query: SmsgateListQuery, response: { 200: t.Array(SmsgateMessageState) }, detail: { ...hidden, summary: "List messages, newest first (SMSGate; X-Total-Count)" } },
    )
    .get("/:id", ({ request, params }) => deps.thirdParty.state(authOf(request).accountId, params.id), {
      permission: "messages.read", rateLimit: "api-key", params: SmsgateIdParam, response: { 200: SmsgateMessageState }, detail: { ...hidden, summary: "A message's state (SMSGate)" },
    })
    .delete("/:id", ({ request, params }) => deps.thirdParty.cancel(authOf(request).accountId, params.id, actorOf(authOf(request))), {
      permission: "messages.write", rateLimit: "api-key", params: SmsgateIdParam, response: { 200: SmsgateMessageState }, detail: { ...hidden, summary: "Cancel what no phone has taken yet (SMSGate)" },
    });
}

export function thirdPartyMessagesRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-messages" }).use(messagesAt(deps, "/message")).use(messagesAt(deps, "/messages"));
}
