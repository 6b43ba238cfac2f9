import { t } from "elysia";
import { checked, Envelope, Media } from "./common";

/** The route checks `apiKey` (its 400 asks for a key in plain words); typed for the document. */
export const SignInBody = t.Object({
  apiKey: checked(t.String({ minLength: 1 }), "an API key of the account (txwire_sk_…); the session acts with its permission"),
});

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
};

export const SessionAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ ...SessionFields, csrfToken: t.String({ description: "send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE" }) }),
});

export const SessionListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({ sessions: t.Array(t.Object({ ...SessionFields, keyLast4: t.String(), current: t.Boolean() })) }),
});

export const SignedOut = Envelope(t.Object({ sessionId: t.String({ description: "the session that ended" }) }));
export const SessionEnded = Envelope(t.Object({ deletedId: t.String() }));

export const LiveStream = Media(
  { "text/event-stream": t.String({ description: "Server-Sent Events: `event: message` with `data: {source, at}` on each change; `: keepalive` every 15 s" }) },
  { description: "An endless event stream" },
);
