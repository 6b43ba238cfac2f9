import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError, validationError } from "../../errors";
import { rateLimitDetails, rateLimitHeaders } from "../../limits/api-limiter";
import { IDEMPOTENCY_KEY_MAX } from "../../services/submissions";
import { WEBHOOK_BODY_LIMIT } from "../server";
import { stateOf } from "../context";
import { JSON_TYPE, readLimitedBody } from "../body";
import { Preflight, SubmissionAnswer, WebhookRequest } from "../models/webhook";

const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/** CORS: any origin may post (the form id is the credential); nothing is shared by cookie. */
export const WEBHOOK_CORS_HEADERS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Burst-Limit, X-RateLimit-Burst-Remaining, Retry-After",
};
const PREFLIGHT_HEADERS: Record<string, string> = {
  ...WEBHOOK_CORS_HEADERS,
  "Access-Control-Allow-Methods": "POST, OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type, Idempotency-Key, Accept, X-API-Version",
  "Access-Control-Max-Age": "86400",
};

const decoder = new TextDecoder();

/** JSON object or url-encoded pairs → the posted object and the text stored as webhookData. */
export function parseSubmissionBody(contentType: string | null, bytes: Uint8Array): { body: Record<string, unknown>; rawJson: string } {
  const text = decoder.decode(bytes);
  if (contentType && JSON_TYPE.test(contentType)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw validationError(
        [{ field: "body", message: "Malformed JSON in request body", requirement: "a valid JSON object", provided: null }],
        "Malformed JSON in request body",
      );
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw validationError(
        [{ field: "body", message: "The body must be a JSON object", requirement: "a JSON object", provided: Array.isArray(value) ? "array" : value === null ? "null" : typeof value }],
        "The body must be a JSON object",
      );
    }
    return { body: value as Record<string, unknown>, rawJson: text };
  }
  if (contentType && FORM_TYPE.test(contentType)) {
    const body: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(text)) {
      // Repeated names (checkbox groups) are joined.
      body[k] = Object.prototype.hasOwnProperty.call(body, k) ? `${body[k]}, ${v}` : v;
    }
    return { body, rawJson: JSON.stringify(body) };
  }
  throw new AppError("UNSUPPORTED_MEDIA_TYPE", {
    message: "Send the submission as JSON (Content-Type: application/json) or as an HTML form (application/x-www-form-urlencoded)",
    details: { provided: contentType ?? "none", expected: "application/json or application/x-www-form-urlencoded" },
  });
}

export function webhookRoutes(deps: AppDeps) {
  const { submissions, webhookLimiter, config } = deps;
  return new Elysia({ name: "webhook-routes", prefix: "/v1/forms" })
    .options("/:id/webhook", () => new Response(null, { status: 204, headers: PREFLIGHT_HEADERS }), {
      response: { 204: Preflight },
      detail: { summary: "CORS preflight for the webhook (any origin)", tags: ["Webhook"] },
    })
    .post(
      "/:id/webhook",
      async ({ request, params }) => {
        const state = stateOf(request);
        Object.assign(state.headers, WEBHOOK_CORS_HEADERS);
        /** Answers that spend no token (disabled form, bad key, replay) still show the form's limit. */
        const showLimit = (id: string) => Object.assign(state.headers, rateLimitHeaders(webhookLimiter.peek(id, config.webhookLimitPerMinute)));
        const formId = params.id;
        const form = submissions.findForm(formId);
        if (!form) {
          throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: formId.slice(0, 100) } });
        }
        if (!form.isActive) {
          showLimit(form.id);
          throw new AppError("FORM_DISABLED", {
            message: "This form is not accepting submissions",
            details: { formId: form.id, action: "Activate the form (PUT /v1/forms/<id> with isActive: true) to accept submissions" },
          });
        }
        const key = request.headers.get("idempotency-key") ?? undefined;
        if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
          showLimit(form.id);
          throw validationError([
            {
              field: "Idempotency-Key",
              message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
              requirement: `1-${IDEMPOTENCY_KEY_MAX} characters`,
              provided: key.length,
            },
          ]);
        }
        if (key !== undefined) {
          const prior = submissions.replay(form.id, key);
          if (prior) {
            showLimit(form.id);
            return new Response(prior.body, {
              status: prior.status,
              headers: { "Content-Type": "application/json", "Idempotent-Replayed": "true" },
            });
          }
        }
        const rl = webhookLimiter.check(form.id, config.webhookLimitPerMinute);
        Object.assign(state.headers, rateLimitHeaders(rl));
        if (!rl.allowed) {
          throw new AppError("RATE_LIMIT_EXCEEDED", {
            message: `More than ${rl.limit} submissions per minute for this form; retry in ${rl.retryAfterSeconds} seconds`,
            details: rateLimitDetails(rl),
            extra: { retryAfter: rl.retryAfterSeconds },
          });
        }
        const bytes = await readLimitedBody(request, WEBHOOK_BODY_LIMIT);
        const { body, rawJson } = parseSubmissionBody(request.headers.get("content-type"), bytes);
        const answer = await submissions.submit(form, {
          body,
          rawJson,
          ipAddress: state.clientIp,
          userAgent: request.headers.get("user-agent"),
          idempotencyKey: key,
        });
        return new Response(answer.body, {
          status: answer.status,
          headers: answer.created ? { "Content-Type": "application/json" } : { "Content-Type": "application/json", "Idempotent-Replayed": "true" },
        });
      },
      {
        parse: "none",
        response: { 200: SubmissionAnswer },
        detail: { summary: "Submit a form: creates or updates a contact and queues a message (no API key)", tags: ["Webhook"], ...WebhookRequest },
      },
    );
}
