import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { authOf, stateOf } from "../context";
import { routeAccess } from "../plugins/route-access";
import { SessionAnswer } from "../models/sessions";
import {
  AcceptInvitationBody,
  InvitationAnswer,
  InviteBody,
  PasswordBody,
  PasswordChanged,
  PeopleAnswer,
  PersonAnswer,
  PersonIdParam,
  PersonRemoved,
  RoleBody,
  SetupBody,
  SetupStatus,
  SignedOutEverywhere,
} from "../models/people";
import { signedIn } from "./sessions";
import { sessionCookie } from "../../services/sessions";

/** A person's own session (password, sign out everywhere): a key's session has no person. */
function ownPerson(request: Request) {
  const s = stateOf(request).session;
  const user = authOf(request).user;
  if (!s || !user) throw new AppError("SESSION_NOT_FOUND", { message: "Sign in with your e-mail and password to do this (this request used an API key)" });
  return { session: s, user };
}

/**
 * The first run in the browser (/v1/setup), invitations, the account's people, and a person's own
 * password and sessions (docs/api-decisions.md, "People, roles and the first run").
 */
export function peopleRoutes(deps: AppDeps) {
  return new Elysia({ name: "people-routes" })
    .use(routeAccess)
    // Part of signing in (no key, the address's sign-in limit): what the sign-in page asks first.
    .get("/v1/setup", () => ({ status: "success" as const, data: { needed: deps.setup.needed() } }), {
      permission: "sign-in",
      rateLimit: "sign-in",
      response: { 200: SetupStatus },
      detail: { summary: "Whether this server still waits for its first run in the browser", tags: ["Dashboard"] },
    })
    .post(
      "/v1/setup",
      async ({ request, body, set }) => {
        const state = stateOf(request);
        const owner = await deps.setup.complete(body as Record<string, unknown>);
        return signedIn(set, state.origin, deps.sessions.signInPerson(owner, state.clientIp, request.headers.get("user-agent")));
      },
      {
        permission: "sign-in",
        rateLimit: "sign-in",
        body: SetupBody,
        response: { 201: SessionAnswer },
        detail: { summary: "First run: names the business, creates its owner and signs them in (the setup link's token, once, 24 h)", tags: ["Dashboard"], "x-errors": ["INVALID_STATE", "EMAIL_TAKEN"] },
      },
    )
    .post(
      "/v1/invitations/accept",
      async ({ request, body, set }) => {
        const state = stateOf(request);
        const b = body as Record<string, unknown>;
        const person = await deps.people.acceptInvitation(b.token, b);
        return signedIn(set, state.origin, deps.sessions.signInPerson(person, state.clientIp, request.headers.get("user-agent")));
      },
      {
        permission: "sign-in",
        rateLimit: "sign-in",
        body: AcceptInvitationBody,
        response: { 201: SessionAnswer },
        detail: { summary: "Join an account with an invitation link's token: sets name, e-mail and password, and signs in", tags: ["Dashboard"], "x-errors": ["EMAIL_TAKEN"] },
      },
    )
    .get("/v1/people", ({ request }) => ({ status: "success" as const, data: { people: deps.people.list(authOf(request).accountId).map(({ accountId: _, ...p }) => p) } }), {
      permission: "people.manage",
      rateLimit: "api-key",
      response: { 200: PeopleAnswer },
      detail: { summary: "The account's people and their roles (owner)", tags: ["Account"] },
    })
    .post(
      "/v1/invitations",
      ({ request, body, set }) => {
        const auth = authOf(request);
        const inv = deps.people.invite(auth.accountId, (body as { role?: unknown }).role, auth.user?.id ?? null);
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        const address = deps.serverAddress.publicAddress(stateOf(request).origin);
        return { status: "success" as const, data: { url: `${address.url}/invite#${inv.token}`, role: inv.role, expiresAt: inv.expiresAt, addressSet: address.source !== "request" } };
      },
      { permission: "people.manage", rateLimit: "api-key", body: InviteBody, response: { 201: InvitationAnswer }, detail: { summary: "A one-time invitation link for a role (72 h; owner)", tags: ["Account"] } },
    )
    .patch(
      "/v1/people/:id",
      ({ request, params, body }) => ({ status: "success" as const, data: deps.people.changeRole(authOf(request).accountId, params.id, (body as { role?: unknown }).role) }),
      {
        permission: "people.manage",
        rateLimit: "api-key",
        params: PersonIdParam,
        body: RoleBody,
        response: { 200: PersonAnswer },
        detail: { summary: "Change a person's role (owner); the last owner stays owner", tags: ["Account"], "x-errors": ["PERSON_NOT_FOUND", "LAST_OWNER"] },
      },
    )
    .delete(
      "/v1/people/:id",
      ({ request, params }) => {
        deps.people.remove(authOf(request).accountId, params.id);
        return { status: "success" as const, message: "Removed: their sessions have ended", data: { deletedId: params.id } };
      },
      {
        permission: "people.manage",
        rateLimit: "api-key",
        params: PersonIdParam,
        response: { 200: PersonRemoved },
        detail: { summary: "Remove a person (owner): their sessions end at once; never the last owner", tags: ["Account"], "x-errors": ["PERSON_NOT_FOUND", "LAST_OWNER"] },
      },
    )
    .put(
      "/v1/session/password",
      async ({ request, body }) => {
        const { session, user } = ownPerson(request);
        const b = body as { currentPassword?: unknown; newPassword?: unknown };
        const ended = await deps.people.changePassword(user.id, session.id, b.currentPassword, b.newPassword);
        return { status: "success" as const, message: "Password changed; your other sessions have ended", data: { otherSessionsEnded: ended } };
      },
      {
        permission: "session.own",
        rateLimit: "api-key",
        body: PasswordBody,
        response: { 200: PasswordChanged },
        detail: { summary: "Change your own password (the current one is asked); your other sessions end", tags: ["Dashboard"], "x-errors": ["SESSION_NOT_FOUND"] },
      },
    )
    .post(
      "/v1/session/sign-out-everywhere",
      ({ request, set }) => {
        const { user } = ownPerson(request);
        const n = deps.sessions.endPersonSessions(user.id);
        set.headers["set-cookie"] = sessionCookie(null, stateOf(request).origin.startsWith("https:"));
        return { status: "success" as const, message: "Signed out everywhere", data: { sessionsEnded: n } };
      },
      {
        permission: "session.own",
        rateLimit: "api-key",
        response: { 200: SignedOutEverywhere },
        detail: { summary: "Sign out everywhere: ends every session of the signed-in person", tags: ["Dashboard"], "x-errors": ["SESSION_NOT_FOUND"] },
      },
    );
}
