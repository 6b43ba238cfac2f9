import { t } from "elysia";
import { checked, Envelope, Media } from "./common";

/**
 * A person signs in with e-mail and password; `apiKey` (advanced) opens a session with a key. The
 * route checks the fields (its 400 asks in plain words); typed for the document.
 */
export const SignInBody = t.Object({
  email: t.Optional(checked(t.String(), "a person's e-mail (with password)")),
  password: t.Optional(checked(t.String(), "their password")),
  apiKey: t.Optional(checked(t.String(), "or: an API key of the account (txwire_sk_…); the session acts with its permission")),
});

export const Role = t.UnionEnum(["owner", "admin", "staff", "viewer"]);
export const PersonModel = t.Object({ id: t.String(), name: t.String(), email: t.String(), role: Role });

export const SessionIdParam = t.Object({ id: t.String({ maxLength: 200, description: "a session id from GET /v1/sessions" }) });

const SessionFields = {
  id: t.String(),
  accountId: t.String(),
  permission: t.UnionEnum(["admin_access", "standard_access"]),
  createdAt: t.String(),
  lastSeenAt: t.String(),
  expiresAt: t.String(),
  ipAddress: t.Union([t.String(), t.Null()]),
  userAgent: t.Union([t.String(), t.Null()]),
  user: t.Union([PersonModel, t.Null()], { description: "the person signed in; null for a session opened with an API key" }),
};

export const SessionAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ ...SessionFields, csrfToken: t.String({ description: "send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE" }) }),
});

/** GET /v1/session: the session, and what it may do (the dashboard shows only those actions). */
export const CurrentSessionAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    ...SessionFields,
    csrfToken: t.String({ description: "send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE" }),
    can: t.Array(t.String(), { description: "the permissions this session holds, by name (e.g. forms.write, broadcasts.write, operator): the routes' own permission names" }),
    operator: t.Boolean({ description: "whether it acts as the server's operator (backups, server address, HTTPS, replication)" }),
  }),
});

export const SessionListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ sessions: t.Array(t.Object({ ...SessionFields, keyLast4: t.Union([t.String(), t.Null()]), current: t.Boolean() })) }),
});

export const SignedOut = Envelope(t.Object({ sessionId: t.String({ description: "the session that ended" }) }));
export const SessionEnded = Envelope(t.Object({ deletedId: t.String() }));

export const LiveStream = Media(
  { "text/event-stream": t.String({ description: "Server-Sent Events: `event: message` with `data: {source, at}` on each change; `: keepalive` every 15 s" }) },
  { description: "An endless event stream" },
);
