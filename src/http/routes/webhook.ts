import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError, validationError } from "../../errors";
import { rateLimitDetails, rateLimitHeaders } from "../../limits/api-limiter";
import { IDEMPOTENCY_KEY_MAX, type WebhookForm } from "../../services/submissions";
import { CAPTCHA_TOKEN_FIELDS, honeypotFilled, normalizeOrigin } from "../../domain/protection";
import { PAGE_HEADERS, errorPage, prefersHtml, reasonFor, safeBackUrl, thankYouPage, withQuery } from "../pages";
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

/** The parts of a webhook answer the JSON and the browser renderings share. */
interface WebhookResult {
  status: number;
  body: string;
  replayed: boolean;
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

export function webhookRoutes(deps: AppDeps) {
  const { submissions, webhookLimiter, webhookIpLimiter, config } = deps;
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

  /** Everything from the lookup to the committed answer; throws AppError for every refusal. */
  async function handle(request: Request, token: string, found: (form: WebhookForm) => void): Promise<WebhookResult> {
    const state = stateOf(request);
    Object.assign(state.headers, WEBHOOK_CORS_HEADERS);
    /** Answers that spend no token (disabled form, bad key, replay) still show the form's limit. */
    const showLimit = (id: string) => Object.assign(state.headers, rateLimitHeaders(webhookLimiter.peek(id, config.webhookLimitPerMinute)));
    const l0 = timing ? performance.now() : 0;
    const form = submissions.findForm(token);
    if (timing) timing.add("lookup", performance.now() - l0);
    if (!form) {
      throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: token.slice(0, 100) } });
    }
    found(form);
    const p = form.protection;
    corsFor(form, request.headers.get("origin"), state.headers);
    if (!form.isActive) {
      showLimit(form.id);
      throw new AppError("FORM_DISABLED", {
        message: "This form is not accepting submissions",
        details: { formId: form.id, action: "Activate the form (PUT /v1/forms/<id> with isActive: true) to accept submissions" },
      });
    }
    if (p.allowedOrigins !== null) {
      const origin = requestOrigin(request);
      if (origin === null || !p.allowedOrigins.includes(origin)) {
        showLimit(form.id);
        throw new AppError("ORIGIN_NOT_ALLOWED", {
          message: "This form only accepts submissions from the websites listed in its allowedOrigins setting",
          details: { provided: origin ?? "none", allowed: p.allowedOrigins },
        });
      }
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
    // With a key the body is read first: a replay must be the same request (else 422).
    let bytes: Uint8Array | undefined;
    let bodyHash: string | undefined;
    if (key !== undefined) {
      bytes = await readLimitedBody(request, WEBHOOK_BODY_LIMIT);
      bodyHash = sha256(bytes);
      let prior;
      try {
        prior = submissions.replay(form.id, key, bodyHash);
      } catch (err) {
        showLimit(form.id);
        throw err;
      }
      if (prior) {
        showLimit(form.id);
        await submissions.durable();
        return { status: prior.status, body: prior.body, replayed: true };
      }
    }
    const ipKey = p.ipLimitPerMinute !== null ? `${form.id} ${state.clientIp}` : "";
    if (p.ipLimitPerMinute !== null) {
      const ip = webhookIpLimiter.peek(ipKey, p.ipLimitPerMinute);
      if (!ip.allowed) {
        Object.assign(state.headers, rateLimitHeaders(ip));
        throw new AppError("RATE_LIMIT_EXCEEDED", {
          message: `More than ${ip.limit} submissions per minute from your address to this form; retry in ${ip.retryAfterSeconds} seconds`,
          details: { ...rateLimitDetails(ip), scope: "ip" },
          extra: { retryAfter: ip.retryAfterSeconds },
        });
      }
    }
    const rl = webhookLimiter.check(form.id, config.webhookLimitPerMinute);
    Object.assign(state.headers, rateLimitHeaders(rl));
    if (!rl.allowed) {
      throw new AppError("RATE_LIMIT_EXCEEDED", {
        message: `More than ${rl.limit} submissions per minute for this form; retry in ${rl.retryAfterSeconds} seconds`,
        details: { ...rateLimitDetails(rl), scope: "form" },
        extra: { retryAfter: rl.retryAfterSeconds },
      });
    }
    if (p.ipLimitPerMinute !== null) webhookIpLimiter.check(ipKey, p.ipLimitPerMinute);
    bytes ??= await readLimitedBody(request, WEBHOOK_BODY_LIMIT);
    const { body, rawJson } = parseSubmissionBody(request.headers.get("content-type"), bytes);
    if (honeypotFilled(body, p.honeypotField)) {
      deps.spam.record(form.id);
      deps.metrics.count("textwire_webhook_spam_total");
      const fake = submissions.spamAnswer(form);
      return { status: fake.status, body: fake.body, replayed: false };
    }
    let captchaToken: unknown;
    if (p.captcha !== null) {
      const field = CAPTCHA_TOKEN_FIELDS[p.captcha.provider];
      captchaToken = body[field];
      // The widget's token is not a form value: it is neither stored nor validated as one.
      delete body[field];
    }
    if (p.honeypotField !== null) delete body[p.honeypotField];
    if (p.captcha !== null) await deps.captcha.verify(p.captcha, captchaToken, state.clientIp);
    const v0 = timing ? performance.now() : 0;
    const submitted = submissions.submit(form, {
      body,
      rawJson,
      ipAddress: state.clientIp,
      userAgent: request.headers.get("user-agent"),
      idempotencyKey: key,
      bodyHash,
    });
    // submit() runs synchronously up to handing its job to the writer.
    if (timing) timing.add("validation", performance.now() - v0);
    const answer = await submitted;
    return { status: answer.status, body: answer.body, replayed: !answer.created };
  }

  /** A browser's answer: 303 to the form's pages, or Textwire's own thank-you / error page. */
  function forBrowser(request: Request, form: WebhookForm | null, result: WebhookResult | AppError): Response {
    const back = safeBackUrl(request.headers.get("referer"));
    const p = form?.protection;
    if (!(result instanceof AppError)) {
      if (p?.successUrl) return new Response(null, { status: 303, headers: { Location: p.successUrl } });
      return new Response(thankYouPage(form?.name ?? null, back), { status: 200, headers: PAGE_HEADERS });
    }
    const field = typeof result.details?.field === "string" ? result.details.field : undefined;
    if (p?.errorUrl) {
      return new Response(null, { status: 303, headers: { Location: withQuery(p.errorUrl, { error: result.code, field }), ...result.headers } });
    }
    const reason = reasonFor(result.code, field, result.code === "VALIDATION_ERROR" ? result.message : null);
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
        if (prefersHtml(request.headers.get("accept"))) {
          const seen: { form: WebhookForm | null } = { form: null };
          let result: WebhookResult | AppError;
          try {
            result = await handle(request, params.id, (f) => (seen.form = f));
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            result = err;
          }
          return forBrowser(request, seen.form, result);
        }
        const result = await handle(request, params.id, () => {});
        if (marks) marks.routeDoneAt = performance.now();
        return new Response(result.body, { status: result.status, headers: answerHeaders(stateOf(request), result.replayed) });
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

/** The posting page's origin: the Origin header, else the Referer's origin; null when neither. */
function requestOrigin(request: Request): string | null {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null") return normalizeOrigin(origin);
  if (origin === "null") return null;
  const referer = request.headers.get("referer");
  if (!referer) return null;
  try {
    return normalizeOrigin(new URL(referer).origin);
  } catch {
    return null;
  }
}
