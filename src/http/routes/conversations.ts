import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { ContactIdParam, ConversationListAnswer, ConversationListQuery, MarkReadAnswer, ThreadAnswer, ThreadQuery } from "../models/conversations";
import { routeAccess } from "../plugins/route-access";

/** Conversations: replies in the CRM. Replying is `POST /v1/messages` to the contact. */
export function conversationsRoutes(deps: AppDeps) {
  return new Elysia({ name: "conversations-routes", prefix: "/v1/conversations" })
    .use(routeAccess)
    .get(
      "/",
      ({ request, query }) => ({ status: "success" as const, data: deps.conversations.list(authOf(request).accountId, query) }),
      { permission: "conversations.read", rateLimit: "api-key", query: ConversationListQuery, response: ConversationListAnswer, detail: { summary: "Contacts with messages either way, newest activity first, with unread counts", tags: ["Conversations"] } },
    )
    .get(
      "/:contactId",
      ({ request, params, query }) => ({ status: "success" as const, data: deps.conversations.thread(authOf(request).accountId, params.contactId, query) }),
      { permission: "conversations.read", rateLimit: "api-key", params: ContactIdParam, query: ThreadQuery, response: ThreadAnswer, detail: { summary: "One contact's messages in both directions, in time order", tags: ["Conversations"] } },
    )
    .post(
      "/:contactId/read",
      ({ request, params }) => ({
        status: "success" as const,
        message: "Conversation marked read",
        data: deps.conversations.markRead(authOf(request).accountId, params.contactId),
      }),
      { permission: "conversations.write", rateLimit: "api-key", params: ContactIdParam, response: MarkReadAnswer, detail: { summary: "Mark a contact's received texts read", tags: ["Conversations"] } },
    );
}
