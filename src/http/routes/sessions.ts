import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { authOf, stateOf } from "../context";
import { CurrentSessionAnswer, SessionAnswer, SessionEnded, SessionIdParam, SessionListAnswer, SignedOut, SignInBody } from "../models/sessions";
import { sessionCookie, viewOf, type SessionView } from "../../services/sessions";
import { KEY_FORMAT } from "../../services/accounts";
import { describeProvided } from "../access";
import { routeAccess } from "../plugins/route-access";
import { permissionsHeld } from "../authorize";

/** Sessions are the dashboard's; the API itself keeps Bearer keys. */
function currentSession(request: Request) {
  const s = stateOf(request).session;
  if (!s) throw new AppError("SESSION_NOT_FOUND", { message: "This request carries no dashboard session (it used an API key)" });
  return s;
}

/** The 201 of a sign-in (password, invitation, setup or key): the cookie and the session with its CSRF token. */
export function signedIn(set: { status?: unknown; headers: Record<string, unknown> }, origin: string, r: { token: string; session: SessionView & { csrfToken: string } }) {
  set.status = 201;
  set.headers["set-cookie"] = sessionCookie(r.token, origin.startsWith("https:"));
  set.headers["cache-control"] = "no-store";
  return { status: "success" as const, data: r.session };
}

/**
 * Dashboard sign-in: POST /v1/session (no key: the body carries one; refusals count against the
 * failed sign-in limit per address), GET/DELETE /v1/session for the current one, and the list.
 */
export function sessionsRoutes(deps: AppDeps) {
  return new Elysia({ name: "sessions-routes" })
    .use(routeAccess)
    .post(
      "/v1/session",
      async ({ request, body, set }) => {
        const state = stateOf(request);
        const b = body as { email?: unknown; password?: unknown; apiKey?: unknown };
        if (b.apiKey === undefined || b.email !== undefined) {
          // A person: the answer for an unknown e-mail is the wrong password's, word for word.
          const missing = [typeof b.email !== "string" || b.email.trim() === "" ? "email" : null, typeof b.password !== "string" || b.password === "" ? "password" : null].filter(Boolean) as string[];
          if (missing.length) {
            throw new AppError("VALIDATION_ERROR", {
              message: "Enter your e-mail and password",
              details: { fields: missing },
              errors: missing.map((field) => ({ field, message: field === "email" ? "Enter your e-mail" : "Enter your password" })),
            });
          }
          const person = await deps.people.verify(b.email as string, b.password as string);
          if (!person) throw new AppError("AUTHENTICATION_ERROR", { message: "That e-mail and password do not match: check them and try again", details: { provided: "e-mail and password" } });
          return signedIn(set, state.origin, deps.sessions.signInPerson(person, state.clientIp, request.headers.get("user-agent")));
        }
        const key = b.apiKey;
        if (typeof key !== "string" || key.trim() === "") {
          throw new AppError("VALIDATION_ERROR", {
            message: "apiKey is required: paste an API key (txwire_sk_…)",
            details: { field: "apiKey", requirement: "an API key", provided: typeof key === "string" ? key : key === undefined ? null : typeof key },
            errors: [{ field: "apiKey", message: "apiKey is required" }],
          });
        }
        const r = deps.sessions.signIn(key.trim(), state.clientIp, request.headers.get("user-agent"));
        if (!r) {
          throw new AppError("AUTHENTICATION_ERROR", {
            message: "That API key is not valid: check it and try again",
            details: { provided: describeProvided(key.trim()), expected: KEY_FORMAT },
          });
        }
        return signedIn(set, state.origin, r);
      },
      { permission: "sign-in", rateLimit: "sign-in", body: SignInBody, response: { 201: SessionAnswer }, detail: { summary: "Sign in to the dashboard with e-mail and password (or, advanced, an API key): sets the session cookie", tags: ["Dashboard"] } },
    )
    .get(
      "/v1/session",
      ({ request, set }) => {
        const s = currentSession(request);
        set.headers["cache-control"] = "no-store";
        const auth = authOf(request);
        return { status: "success" as const, data: { ...viewOf(s), csrfToken: s.csrfToken, can: permissionsHeld(auth), operator: auth.operator } };
      },
      { permission: "session.own", rateLimit: "api-key", response: { 200: CurrentSessionAnswer }, detail: { summary: "The signed-in dashboard session (with its CSRF token)", tags: ["Dashboard"], "x-errors": ["SESSION_NOT_FOUND"] } },
    )
    .delete(
      "/v1/session",
      ({ request, set }) => {
        const s = currentSession(request);
        deps.sessions.revoke(s.accountId, s.id);
        set.headers["set-cookie"] = sessionCookie(null, stateOf(request).origin.startsWith("https:"));
        return { status: "success" as const, message: "Signed out", data: { sessionId: s.id } };
      },
      { permission: "session.own", rateLimit: "api-key", response: { 200: SignedOut }, detail: {
          summary: "Sign out: ends this dashboard session",
          description: "Like every POST, PUT, PATCH and DELETE made with a session cookie, it needs the session's X-CSRF-Token (403 CSRF_TOKEN_INVALID).",
          tags: ["Dashboard"],
          "x-errors": ["SESSION_NOT_FOUND"],
        } },
    )
    .get(
      "/v1/sessions",
      ({ request }) => {
        const current = stateOf(request).session?.id;
        const sessions = deps.sessions.list(authOf(request).accountId).map((s) => ({ ...s, current: s.id === current }));
        return { status: "success" as const, data: { sessions } };
      },
      { permission: "sessions.manage", rateLimit: "api-key", response: { 200: SessionListAnswer }, detail: { summary: "The account's open dashboard sessions (admin)", tags: ["Dashboard"] } },
    )
    .delete(
      "/v1/sessions/:id",
      ({ request, params }) => {
        deps.sessions.revoke(authOf(request).accountId, params.id);
        return { status: "success" as const, message: "Session ended", data: { deletedId: params.id } };
      },
      { permission: "sessions.manage", rateLimit: "api-key", params: SessionIdParam, response: { 200: SessionEnded }, detail: { summary: "End a dashboard session (admin)", tags: ["Dashboard"], "x-errors": ["SESSION_NOT_FOUND"] } },
    );
}
