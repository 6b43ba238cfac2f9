import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { Deleted, IdParam } from "../models/common";
import { KeywordReplyAnswer, KeywordReplyCreateBody, KeywordReplyListAnswer, KeywordReplyUpdateBody } from "../models/keyword-replies";
import { routeAccess } from "../plugins/route-access";

/**
 * `GET/POST /v1/keyword-replies`, `GET/PUT/DELETE /v1/keyword-replies/<id>` (admin: settings.read,
 * settings.write): the owner's automatic answers to keywords such as HOURS (docs/api-decisions.md,
 * "Keyword replies").
 */
export function keywordRepliesRoutes(deps: AppDeps) {
  const tags = ["Account"];
  return new Elysia({ name: "keyword-replies-routes", prefix: "/v1/keyword-replies" })
    .use(routeAccess)
    .get("/", ({ request }) => ({ status: "success" as const, data: deps.keywordReplies.list(authOf(request).accountId) }), {
      permission: "settings.read", rateLimit: "api-key",
      response: KeywordReplyListAnswer,
      detail: { summary: "The account's keyword replies, oldest first (admin)", tags },
    })
    .post(
      "/",
      ({ request, body, set }) => {
        set.status = 201;
        return { status: "success" as const, message: "Keyword reply saved", data: { keywordReply: deps.keywordReplies.create(authOf(request).accountId, body) } };
      },
      {
        permission: "settings.write", rateLimit: "api-key",
        body: KeywordReplyCreateBody,
        response: { 201: KeywordReplyAnswer },
        detail: {
          summary: "Add a keyword reply (admin)",
          description:
            "A text that is exactly one of the keywords (matched like STOP) gets the reply, at most once per contact per hour, never when the number opted out; " +
            "the contact gets addTags and setStatus. STOP, START and HELP keywords always come first and cannot be used.",
          tags,
          "x-errors": ["VALIDATION_ERROR", "COMMON_WORDS_UNCONFIRMED", "INVALID_STATE"],
        },
      },
    )
    .get("/:id", ({ request, params }) => ({ status: "success" as const, data: { keywordReply: deps.keywordReplies.get(authOf(request).accountId, params.id) } }), {
      permission: "settings.read", rateLimit: "api-key",
      params: IdParam,
      response: KeywordReplyAnswer,
      detail: { summary: "One keyword reply (admin)", tags, "x-errors": ["KEYWORD_REPLY_NOT_FOUND"] },
    })
    .put(
      "/:id",
      ({ request, params, body }) => ({
        status: "success" as const,
        message: "Keyword reply saved",
        data: { keywordReply: deps.keywordReplies.update(authOf(request).accountId, params.id, body) },
      }),
      {
        permission: "settings.write", rateLimit: "api-key",
        params: IdParam,
        body: KeywordReplyUpdateBody,
        response: KeywordReplyAnswer,
        detail: { summary: "Change a keyword reply; fields not given stay (admin)", tags, "x-errors": ["VALIDATION_ERROR", "COMMON_WORDS_UNCONFIRMED", "KEYWORD_REPLY_NOT_FOUND"] },
      },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        deps.keywordReplies.delete(authOf(request).accountId, params.id);
        return { status: "success" as const, message: "Keyword reply deleted", data: { deletedId: params.id } };
      },
      { permission: "settings.write", rateLimit: "api-key", params: IdParam, response: Deleted, detail: { summary: "Delete a keyword reply (admin)", tags, "x-errors": ["KEYWORD_REPLY_NOT_FOUND"] } },
    );
}
