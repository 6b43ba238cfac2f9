import type { Server } from "bun";
import type { AppDeps } from "../deps";
import type { App } from "../app";
import { AppError, databaseBusy, errorResponse, submissionsNotApplied } from "../errors";
import { readSessionCookie } from "../services/sessions";
import { rateLimitHeaders } from "../limits/api-limiter";
import { THIRDPARTY_HEALTH_PATH, classify, findCredential, redactPath, type CredentialLookup } from "./access";
import { RouteTable, badRequestTarget, malformedPathError, methodNotAllowedError, noRouteError, requestUrl, routedByElysiaAs, safeDecode } from "./request-guard";
import { routeAccessOf } from "./permissions";
import { createAuthorizer } from "./authorize";
import { setState, type RequestState } from "./context";
import { asSmsgateError } from "./thirdparty-errors";
import { JSON_TYPE, checkJsonDepth, payloadTooLarge, readLimitedBody } from "./body";
import { isDashboardPath, serveDashboard } from "../dashboard/assets";
import { IpRangeList } from "../lib/ip-ranges";
import { clientAddress } from "./forwarded";
import { LOOPBACK_PROXIES } from "../config";

/** Webhook payload limit (docs/operations.md, "Limits": 10 KB). */
export const WEBHOOK_BODY_LIMIT = 10_240;
/** JSON API bodies (bulk updates of 1000 ids fit easily). */
export const API_BODY_LIMIT = 1_048_576;
/** CSV imports. */
export const IMPORT_BODY_LIMIT = 50 * 1_048_576;
/**
 * What Bun itself accepts before anything of ours runs. Set far above our own limits so that an
 * oversized body gets our 413 envelope (from its Content-Length, before it is read) instead of
 * Bun's bare 413; bodies without Content-Length are read with our per-route limit.
 */
export const SERVER_BODY_LIMIT = Number.MAX_SAFE_INTEGER;


function bodyLimitFor(kind: string, path: string): number {
  if (kind === "webhook") return WEBHOOK_BODY_LIMIT;
  if (path.startsWith("/v1/contacts/import")) return IMPORT_BODY_LIMIT;
  return API_BODY_LIMIT;
}

export interface Observer {
  (req: RequestState, method: string, status: number, durationMs: number): void;
}

/**
 * The outer handler: request id, origin, body limits, the matched route — whose declared
 * permission and limiter the authorizer checks (authorize.ts) before Elysia reads any body — then
 * the app, then the headers every response carries and the log line.
 */
export function createFetchHandler(deps: AppDeps, app: App, observers: Observer[] = []) {
  const { config, logger } = deps;
  // Each route's declaration (permissions.ts), read once; a route without one stops the start here.
  const routeTable = new RouteTable(() => deps.routes(), routeAccessOf);
  routeTable.prepare();
  const authorizer = createAuthorizer(deps);
  const proxies = config.trustProxy ? IpRangeList.parse(config.trustedProxies ?? LOOPBACK_PROXIES) : null;
  const timing = deps.stageTiming;
  return async function fetch(req: Request, server?: Server<unknown>): Promise<Response> {
    const startedAt = performance.now();
    const url = requestUrl(req);
    const path = url?.pathname ?? "*";
    // Forwarded headers count only from a configured proxy (see clientAddress).
    const { clientIp, viaProxy } = clientAddress(server?.requestIP(req)?.address, req.headers.get("x-forwarded-for"), proxies);
    const fwdProto = viaProxy ? req.headers.get("x-forwarded-proto")?.split(",")[0].trim() || undefined : undefined;
    const fwdHost = viaProxy ? req.headers.get("x-forwarded-host")?.split(",")[0].trim() || undefined : undefined;
    const proto = fwdProto ?? url?.protocol.replace(":", "") ?? "http";
    const host = fwdHost ?? req.headers.get("host") ?? url?.host ?? "";
    const state: RequestState = {
      requestId: crypto.randomUUID(),
      startedAt,
      origin: `${proto}://${host}`,
      clientIp,
      headers: {},
      logPath: redactPath(path),
    };
    let res: Response;
    try {
      if (!url) throw badRequestTarget(req.method);
      res = await route(req, url, path, state, fwdProto, host);
      if (state.marks) state.marks.resumedAt = performance.now();
    } catch (err) {
      const known = err instanceof AppError ? err : databaseBusy(err);
      if (known) res = errorResponse(known);
      else {
        logger.error("unhandled error", { requestId: state.requestId, error: String((err as Error)?.stack ?? err) });
        res = errorResponse(new AppError("INTERNAL_ERROR", { details: { requestId: state.requestId } }));
      }
    }
    // SMSGate's clients read errors in SMSGate's own body (thirdparty-errors.ts).
    if (res.status >= 400 && classify(path) === "thirdparty") res = await asSmsgateError(res);
    if (!state.headersDone) {
      if (state.limitFormId !== undefined && state.headers["X-RateLimit-Limit"] === undefined) {
        Object.assign(state.headers, rateLimitHeaders(deps.webhookLimiter.peek(state.limitFormId, config.webhookLimitPerMinute)));
      }
      for (const [k, v] of Object.entries(state.headers)) if (!res.headers.has(k)) res.headers.set(k, v);
      res.headers.set("X-Request-Id", state.requestId);
      res.headers.set("X-API-Version", "v1");
    }
    const ms = performance.now() - startedAt;
    for (const o of observers) o(state, req.method, res.status, ms);
    const logAt = timing ? performance.now() : 0;
    logger.info("request", {
      id: state.requestId,
      method: req.method,
      path: state.logPath,
      status: res.status,
      ms: Math.round(ms * 10) / 10,
      ip: state.clientIp,
    });
    const m = state.marks;
    if (timing && m !== undefined && m.routeDoneAt > 0) {
      // Accepted JSON webhook requests only (the route stamps routeDoneAt): the app's time is split out of ours.
      timing.requests++;
      timing.add("outer", m.handleAt - startedAt + (logAt - m.resumedAt));
      timing.add("dispatch", m.routeAt - m.handleAt);
      timing.add("log", performance.now() - logAt);
    }
    return res;
  };

  /** The app answers; with --stage-timing, stamped first (see RequestState.marks). */
  function handleApp(target: Request, state: RequestState): Promise<Response> {
    if (timing) state.marks = { handleAt: performance.now(), routeAt: 0, routeDoneAt: 0, resumedAt: 0 };
    return app.handle(target);
  }

  async function route(req: Request, url: URL, path: string, state: RequestState, fwdProto: string | undefined, host: string): Promise<Response> {
    // Only a request the proxy says came in over plain HTTP is redirected (to the host the client
    // used); a direct local request (a health check on the box) has no forwarded proto.
    if (config.trustProxy && fwdProto?.toLowerCase() === "http") {
      // A form still posted over plain HTTP is named in the dashboard (services/plain-http-posts.ts).
      deps.plainHttpPosts.record(req.method, url.pathname);
      return new Response(null, { status: 308, headers: { Location: `https://${host}${url.pathname}${url.search}` } });
    }
    const kind = classify(path);
    // A path that is not valid percent-encoding names no form, key or message.
    if (path.includes("%") && safeDecode(path) === null) {
      if (kind === "webhook") throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: null } });
      if (kind === "messages") throw malformedPathError();
    }
    // Any origin may post to a webhook: even its 413 must be readable by the browser.
    if (kind === "webhook") {
      state.headers["Access-Control-Allow-Origin"] = "*";
      // Every webhook answer shows the form's limit, even a 404 or a 413 refused before the route
      // runs: the route sets the figures after its own count; an answer without them gets the
      // form's current figures at the end (one limiter look per request, not two).
      state.limitFormId = path.split("/")[3] ?? "";
    }
    // The read barrier: what a webhook acknowledged is applied before any other API
    // request (or a phone's) runs, so it reads — and changes — what was acknowledged.
    // SMSGate's /3rdparty/v1/health reports a stuck applier in its own shape instead.
    if (kind === "api" || kind === "messages" || (kind === "thirdparty" && path !== THIRDPARTY_HEALTH_PATH && !path.startsWith(THIRDPARTY_HEALTH_PATH + "/")) || path.startsWith("/api/mobile/")) {
      // Bounded (BARRIER_MAX_WAIT_MS): a stuck applier answers 503 + Retry-After, not a hang.
      const caughtUp = deps.intake.barrier();
      if (caughtUp && !(await caughtUp)) throw submissionsNotApplied();
    }
    // HEAD is GET without the body (uptime monitors send it): same checks, same status and headers.
    if (req.method === "HEAD") {
      const res = await route(new Request(req.url, { method: "GET", headers: req.headers }), url, path, state, fwdProto, host);
      await res.body?.cancel().catch(() => {});
      return new Response(null, { status: res.status, headers: res.headers });
    }
    // The dashboard's pages and files: no key (the app signs in through /v1/session).
    if (kind === "public" && req.method === "GET" && isDashboardPath(path)) return serveDashboard(path, req.headers.get("accept-encoding"));
    const hasBody = req.method === "POST" || req.method === "PUT" || req.method === "PATCH";
    if (!NO_BODY_METHODS.has(req.method)) {
      const limit = bodyLimitFor(kind, path);
      const declared = Number(req.headers.get("content-length") ?? "0");
      if (declared > limit) throw payloadTooLarge(limit, declared);
    }
    // 404 for a path nothing serves and 405 for a method the path does not take, before any key
    // is asked for (messages paths are matched without the key segment).
    let cred: CredentialLookup | undefined;
    // A browser signed in to the dashboard sends its session cookie and no key.
    // (Only API routes take one: the webhook and public pages skip the cookie parsing.)
    const sessionToken = kind === "webhook" || kind === "public" || kind === "thirdparty" || req.headers.has("authorization") ? null : readSessionCookie(req.headers.get("cookie"));
    if (kind === "messages") cred = findCredential(kind, path, req.headers.get("authorization"), sessionToken !== null);
    const match = routeTable.match(req.method, cred?.rewrittenPath ?? path);
    if (match.kind === "unknown") throw noRouteError(req.method, path);
    if (match.kind === "method") throw methodNotAllowedError(req.method, match.allow);
    const access = match.route;
    state.access = access;
    let targetUrl = routedByElysiaAs(req, url) ?? req.url;
    // Dashboard sign-in: the body carries the key; refused keys count as failed sign-ins.
    if (access.permission === "sign-in") {
      authorizer.signInAllowed(state.clientIp);
      checkJsonContentType(req, path);
      const target = await withCheckedBody(req, targetUrl, kind, path);
      setState(target, state);
      const res = await handleApp(target, state);
      if (res.status === 401) authorizer.signInRefused(state.clientIp);
      return res;
    }
    // A route that needs a key (or a dashboard session): who calls, the declared limiter, the declared permission.
    if (access.key !== null) {
      cred ??= findCredential(kind, path, req.headers.get("authorization"), sessionToken !== null);
      const effectivePath = cred.rewrittenPath ?? path;
      authorizer.authorize(req, state, access, cred, sessionToken, effectivePath);
      if (hasBody) checkJsonContentType(req, effectivePath);
      if (cred.rewrittenPath !== undefined) {
        const inner = new URL(targetUrl);
        inner.pathname = cred.rewrittenPath;
        targetUrl = inner.toString();
      }
    }
    const target = await withCheckedBody(req, targetUrl, kind, path);
    setState(target, state);
    return handleApp(target, state);
  }

  /**
   * The request the app gets: its body read here (never past the route's limit, chunked or not)
   * and its JSON nesting checked before Elysia or a route parses it, so no schema check or error
   * report ever walks a value thousands of levels deep (docs/api-decisions.md, "Hostile input,
   * round two"). The webhook reads and checks its own body (its lean path, parseSubmissionBody);
   * an import is CSV, XLSX or multipart, streamed and never parsed as JSON.
   */
  async function withCheckedBody(req: Request, targetUrl: string, kind: string, path: string): Promise<Request> {
    if (req.body === null || NO_BODY_METHODS.has(req.method) || kind === "webhook" || path.startsWith("/v1/contacts/import")) {
      return targetUrl !== req.url ? new Request(targetUrl, req) : req;
    }
    const bytes = await readLimitedBody(req, bodyLimitFor(kind, path));
    checkJsonDepth(bytes);
    return new Request(targetUrl, { method: req.method, headers: req.headers, body: bytes.byteLength > 0 ? bytes : null });
  }
}

/** Methods whose body, if any, nothing reads. */
const NO_BODY_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function checkJsonContentType(req: Request, path: string) {
  if (path.startsWith("/v1/contacts/import")) return;
  const ct = req.headers.get("content-type");
  const length = req.headers.get("content-length");
  if (!ct && (length === "0" || length === null)) return; // no body at all
  if (!ct || !JSON_TYPE.test(ct)) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", {
      message: "Send the body as JSON with Content-Type: application/json",
      details: { provided: ct ?? "none", expected: "application/json" },
    });
  }
}
