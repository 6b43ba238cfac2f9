import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError, validationError } from "../../errors";
import type { AcceptInput, AcceptResult, WebhookForm } from "../../services/submissions";
import { normalizeOrigin } from "../../domain/protection";
import { PAGE_HEADERS, errorPage, prefersHtml, safeBackUrl, thankYouPage, withQuery } from "../pages";
import { refusalFor } from "../../domain/visitor-words";
import { WEBHOOK_BODY_LIMIT } from "../server";
import { stateOf, type RequestState } from "../context";
import { JSON_TYPE, checkJsonDepth, readLimitedBody } from "../body";
import { Preflight, SubmissionAnswer, WebhookRequest } from "../models/webhook";
import { routeAccess } from "../plugins/route-access";

const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/**
 * CORS: any origin may post (the address is the credential; nothing is shared by cookie), unless
 * the form lists allowedOrigins: then only those are echoed.
 */
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
const ERROR_CONTENT = { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } };
/** What the OpenAPI document lists for the webhook beyond the generated answers. */
const WEBHOOK_RESPONSES: Record<string, any> = {
  "200": { description: "Accepted (data may carry duplicate: true, or messageId null with suppressed: \"recipient-limit\"); for a browser without successUrl, the thank-you page" },
  "303": { description: "Browser post: to settings.successUrl, or settings.errorUrl with ?error=<CODE>&field=<name>" },
  "400": { description: "VALIDATION_ERROR (fields, links, value cap, allowedCountries) or CAPTCHA_FAILED", content: ERROR_CONTENT },
  "403": { description: "ORIGIN_NOT_ALLOWED: the form's allowedOrigins does not list the posting page", content: ERROR_CONTENT, "x-error-codes": ["ORIGIN_NOT_ALLOWED"] },
  "422": { description: "IDEMPOTENCY_KEY_REUSED: the key was used with a different body", content: ERROR_CONTENT, "x-error-codes": ["IDEMPOTENCY_KEY_REUSED"] },
  "429": { description: "RATE_LIMIT_EXCEEDED (details.scope form or ip) or QUOTA_EXCEEDED", content: ERROR_CONTENT },
  "503": { description: "FORM_DISABLED, SERVICE_UNAVAILABLE or CAPTCHA_UNAVAILABLE", content: ERROR_CONTENT, "x-error-codes": ["FORM_DISABLED", "SERVICE_UNAVAILABLE", "CAPTCHA_UNAVAILABLE"] },
};

/** JSON object or url-encoded pairs → the posted object and the text stored as webhookData. */
export function parseSubmissionBody(contentType: string | null, bytes: Uint8Array): { body: Record<string, unknown>; rawJson: string } {
  if (contentType && JSON_TYPE.test(contentType)) {
    // Before the parse: a value nested thousands deep would overflow whatever walks it next.
    checkJsonDepth(bytes);
    const text = decoder.decode(bytes);
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
    // A Map, then own properties: a posted `__proto__` or `constructor` is a field like any other.
    const pairs = new Map<string, string>();
    for (const [k, v] of new URLSearchParams(decoder.decode(bytes))) {
      // Repeated names (checkbox groups) are joined.
      const before = pairs.get(k);
      pairs.set(k, before === undefined ? v : `${before}, ${v}`);
    }
    const body: Record<string, string> = Object.fromEntries(pairs);
    return { body, rawJson: JSON.stringify(body) };
  }
  throw new AppError("UNSUPPORTED_MEDIA_TYPE", {
    message: "Send the submission as JSON (Content-Type: application/json) or as an HTML form (application/x-www-form-urlencoded)",
    details: { provided: contentType ?? "none", expected: "application/json or application/x-www-form-urlencoded" },
  });
}

export function webhookRoutes(deps: AppDeps) {
  const { submissions } = deps;
  const timing = deps.stageTiming;

  /** CORS for this form: any origin, or only the listed ones (echoed) when the form has a list. */
  function corsFor(form: WebhookForm | null, origin: string | null, headers: Record<string, string>) {
    const allowed = form?.protection.allowedOrigins;
    if (!allowed) return;
    const o = normalizeOrigin(origin);
    if (o !== null && allowed.includes(o)) headers["Access-Control-Allow-Origin"] = origin!;
    else delete headers["Access-Control-Allow-Origin"];
    headers["Vary"] = "Origin";
  }

  /** The request as `accept` takes it; `accept` sets `form` once it has found it. */
  function acceptInput(request: Request, token: string, state: RequestState): AcceptInput {
    const h = request.headers;
    return {
      token,
      origin: h.get("origin"),
      referer: h.get("referer"),
      idempotencyKey: h.get("idempotency-key"),
      contentType: h.get("content-type"),
      userAgent: h.get("user-agent"),
      clientIp: state.clientIp,
      headers: state.headers,
      readBody: () => readLimitedBody(request, WEBHOOK_BODY_LIMIT),
      decode: parseSubmissionBody,
      form: null,
    };
  }

  /** A browser's answer: 303 to the form's pages, or Textwire's own thank-you / error page. */
  function forBrowser(request: Request, form: WebhookForm | null, result: AcceptResult | AppError): Response {
    const back = safeBackUrl(request.headers.get("referer"));
    const p = form?.protection;
    if (!(result instanceof AppError)) {
      if (p?.successUrl) return new Response(null, { status: 303, headers: { Location: p.successUrl } });
      return new Response(thankYouPage(form?.name ?? null, back, !suppressedAnswer(result.body)), { status: 200, headers: PAGE_HEADERS });
    }
    const field = typeof result.details?.field === "string" ? result.details.field : undefined;
    if (p?.errorUrl) {
      return new Response(null, { status: 303, headers: { Location: withQuery(p.errorUrl, { error: result.code, field }), ...result.headers } });
    }
    // Every refusal from accept() is in the visitor's words already, field problems by their labels.
    const reason = result.message || refusalFor(result.code);
    return new Response(errorPage(form?.name ?? null, reason, back), { status: result.status, headers: { ...PAGE_HEADERS, ...result.headers } });
  }

  return new Elysia({ name: "webhook-routes", prefix: "/v1/forms" })
    .use(routeAccess)
    .options(
      "/:id/webhook",
      ({ request, params }) => {
        const headers = { ...PREFLIGHT_HEADERS };
        corsFor(submissions.findForm(params.id), request.headers.get("origin"), headers);
        const state = stateOf(request);
        if (headers["Access-Control-Allow-Origin"] === undefined) delete state.headers["Access-Control-Allow-Origin"];
        return new Response(null, { status: 204, headers });
      },
      {
        permission: "webhook", rateLimit: "none",
        response: { 204: Preflight },
        detail: { summary: "CORS preflight for the webhook (any origin, or the form's allowedOrigins)", tags: ["Webhook"] },
      },
    )
    .post(
      "/:id/webhook",
      async ({ request, params }) => {
        const marks = timing ? stateOf(request).marks : undefined;
        if (marks) marks.routeAt = performance.now();
        const state = stateOf(request);
        const input = acceptInput(request, params.id, state);
        Object.assign(state.headers, WEBHOOK_CORS_HEADERS);
        if (prefersHtml(request.headers.get("accept"))) {
          let result: AcceptResult | AppError;
          try {
            result = await submissions.accept(input);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            result = err;
          } finally {
            corsFor(input.form, input.origin, state.headers);
          }
          return forBrowser(request, input.form, result);
        }
        let result: AcceptResult;
        try {
          result = await submissions.accept(input);
        } finally {
          // The form's CORS headers go on its answer and on its refusals alike.
          corsFor(input.form, input.origin, state.headers);
        }
        if (marks) marks.routeDoneAt = performance.now();
        return new Response(result.body, { status: result.status, headers: answerHeaders(state, result.replayed) });
      },
      {
        permission: "webhook", rateLimit: "form",
        parse: "none",
        response: { 200: SubmissionAnswer },
        detail: {
        "x-errors": ["ORIGIN_NOT_ALLOWED", "IDEMPOTENCY_KEY_REUSED", "CAPTCHA_FAILED", "CAPTCHA_UNAVAILABLE"],
          summary: "Submit a form: creates or updates a contact and queues a message (no API key)",
          description:
            "JSON for API clients; a browser's form post (Accept preferring text/html) gets a 303 to the form's successUrl/errorUrl or a small built-in page.",
          tags: ["Webhook"],
          responses: WEBHOOK_RESPONSES,
          ...WebhookRequest,
        },
      },
    );
}

/**
 * A JSON answer's headers, with everything the outer handler would add (CORS and limit figures
 * from the request state, request id, API version) so it adds nothing: one Response construction
 * instead of a set() per header. The answer's own headers win, as they do in the outer handler.
 */
function answerHeaders(state: RequestState, replayed: boolean): Record<string, string> {
  const own: Record<string, string> = replayed ? { "Content-Type": "application/json", "Idempotent-Replayed": "true" } : { "Content-Type": "application/json" };
  // Every answer that gets here has its limit figures; should one not, the outer handler adds them.
  if (state.headers["X-RateLimit-Limit"] === undefined) return own;
  state.headersDone = true;
  return { ...state.headers, ...own, "X-Request-Id": state.requestId, "X-API-Version": "v1" };
}

/** Whether an accepted submission's answer says no text will be sent (its data.suppressed). */
function suppressedAnswer(body: string): boolean {
  try {
    return typeof (JSON.parse(body) as { data?: { suppressed?: unknown } }).data?.suppressed === "string";
  } catch {
    return false;
  }
}
