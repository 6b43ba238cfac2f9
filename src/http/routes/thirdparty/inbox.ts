import { Elysia, t } from "elysia";
import type { AppDeps } from "../../../deps";
import { AppError, validationError } from "../../../errors";
import { authOf } from "../../context";
import { routeAccess } from "../../plugins/route-access";
import { listSmsgateInbox } from "../../../services/thirdparty-inbox";

const text = t.Optional(t.String({ maxLength: 200 }));

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

type Body = { deviceId?: unknown; since?: unknown; until?: unknown } | null | undefined;

/** deviceId: a text naming one phone; absent (refresh only) for all of the account's connected phones. */
function deviceIdOf(body: Body, required: boolean): string | null {
  const id = body?.deviceId;
  if (id === undefined || id === null) {
    if (!required) return null;
    throw validationError([{ field: "deviceId", message: "deviceId is required: the id of the phone to ask (GET /3rdparty/v1/devices lists them)", requirement: "a phone's id", provided: null }]);
  }
  if (typeof id !== "string" || id.length === 0 || id.length > 200) {
    throw validationError([{ field: "deviceId", message: "deviceId must be the id of one of your phones (GET /3rdparty/v1/devices lists them)", requirement: "a phone's id", provided: typeof id === "string" ? `${id.length} characters` : id }]);
  }
  return id;
}

function objectBody(body: unknown): Body {
  if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body))) {
    throw validationError([{ field: "body", message: "The body must be a JSON object: {\"deviceId\", \"since\", \"until\"}", requirement: "object", provided: Array.isArray(body) ? "an array" : body }]);
  }
  return body as Body;
}

/**
 * SMSGate's inbox export (the npm client's exportInbox, client-go's ExportInbox) and refresh
 * (client-go's RefreshInbox: deviceId optional): 202 once the request is on its way to the phone
 * over its live connection; the texts it sends again arrive as sms:received, each applied once.
 * And SMSGate's logs, which its cloud server does not serve either: 501 (docs/api-decisions.md,
 * "SMSGate third-party API: devices, health, settings").
 */
export function thirdPartyInboxRoutes(deps: AppDeps) {
  const ask = (request: Request, body: unknown, required: boolean) => {
    const b = objectBody(body);
    deps.deviceRegistry.requestInboxExport(authOf(request).accountId, deviceIdOf(b, required), b?.since, b?.until);
    return new Response(null, { status: 202 });
  };
  return new Elysia({ name: "thirdparty-inbox" })
    .use(routeAccess)
    .get(
      "/inbox",
      ({ request, query, set }) => {
        const { items, total } = listSmsgateInbox(deps.sqlite, authOf(request).accountId, query as Record<string, string | undefined>);
        set.headers["X-Total-Count"] = String(total);
        return items;
      },
      {
        permission: "conversations.read", rateLimit: "api-key",
        query: t.Object({ type: text, limit: text, offset: text, from: text, to: text, deviceId: text, includeAttachments: text }, { additionalProperties: true }),
        detail: { ...hidden, summary: "Received texts, newest first (SMSGate; X-Total-Count)" },
      },
    )
    .post("/inbox/export", ({ request, body }) => ask(request, body, true), {
      permission: "conversations.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Ask a phone to send its received texts again (SMSGate)" },
    })
    // client-py's export_inbox posts here (android_sms_gateway/client.py, export_inbox).
    .post("/messages/inbox/export", ({ request, body }) => ask(request, body, true), {
      permission: "conversations.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Ask a phone to send its received texts again (SMSGate; client-py's path)" },
    })
    .post("/inbox/refresh", ({ request, body }) => ask(request, body, false), {
      permission: "conversations.write", rateLimit: "api-key",
      detail: { ...hidden, summary: "Ask the phones to send their received texts again (SMSGate)" },
    })
    .get(
      "/logs",
      () => {
        throw new AppError("NOT_IMPLEMENTED", { message: "For privacy reasons, a phone's logs are not sent to the server: read them in the SMSGate app" });
      },
      { permission: "devices.read", rateLimit: "api-key", detail: { ...hidden, summary: "Phone logs: not served (SMSGate's cloud server answers 501 too)" } },
    );
}
