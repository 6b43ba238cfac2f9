import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { stateOf } from "../context";
import { parseBearer } from "../access";
import { readLimitedBody } from "../body";
import { API_BODY_LIMIT } from "../server";
import {
  DeviceIdParam, MobileDeviceResponse, MobileMessage, MobileMessagesQuery, MobilePatchDeviceBody, MobileRegisterBody,
  MobileRegisterResponse, MobileSettings, MobileStatesBody, MobileWebhook,
} from "../models/devices";
import type { DeviceRow } from "../../db/stores/devices";
import { routeAccess } from "../plugins/route-access";

const tags = ["Phones (SMSGate mobile API)"];
// Every route here is the SMSGate app's own protocol, not Textwire's /v1 API: docs/devices.md
// documents it, and `hide` keeps it out of /v1/openapi.json (docs/api-decisions.md, "Phones and SMSGate").
const decoder = new TextDecoder();

/**
 * The SMSGate app's mobile API, at the URL the user types into the app:
 * https://<host>:<port>/api/mobile/v1. A device token (Bearer) identifies the phone; its requests
 * count against the per-device limiter only, and a status report is never refused for a rate.
 */
export function mobileRoutes(deps: AppDeps) {
  // The token is checked here, not by the outer handler, so a malformed body is still answered
  // first; the limiter is the one the route declares (`device`, or `device-report`: never refused).
  const device = (request: Request): DeviceRow => {
    const d = deps.devices.authenticate(parseBearer(request.headers.get("authorization")));
    if (!d) throw new AppError("AUTHENTICATION_ERROR", { message: "Unknown device token; register the phone again" });
    const st = stateOf(request);
    deps.devices.touch(d, st.clientIp, request.headers.get("user-agent"));
    const rl = deps.devices.limit(d.id);
    if (!rl.allowed && st.access?.rateLimit !== "device-report") {
      const retryAfter = Math.ceil(rl.retryAfterMs / 1000);
      throw new AppError("RATE_LIMIT_EXCEEDED", { message: `Device rate limit exceeded; retry in ${retryAfter} seconds`, details: { limit: rl.limit, window: "1 minute", retryAfter }, extra: { retryAfter }, headers: { "Retry-After": String(retryAfter) } });
    }
    return d;
  };
  return new Elysia({ name: "mobile-routes", prefix: "/api/mobile/v1" })
    .use(routeAccess)
    .post(
      "/device",
      ({ request, body, set }) => {
        const st = stateOf(request);
        const rl = deps.devices.limit("register:" + st.clientIp);
        if (!rl.allowed) throw new AppError("RATE_LIMIT_EXCEEDED", { message: "Too many registrations from this address; wait a minute" });
        set.status = 201;
        return deps.devices.register(parseBearer(request.headers.get("authorization")), (body ?? {}) as Record<string, unknown>, st.clientIp);
      },
      { permission: "device", rateLimit: "registration", body: MobileRegisterBody, response: { 201: MobileRegisterResponse }, detail: { hide: true, summary: "Register a phone with a registration token (Bearer)", tags } },
    )
    .get(
      "/device",
      ({ request }) => {
        const presented = parseBearer(request.headers.get("authorization"));
        const d = presented ? device(request) : null;
        return deps.devices.deviceInfo(d, stateOf(request).clientIp);
      },
      { permission: "device", rateLimit: "device", response: { 200: MobileDeviceResponse }, detail: { hide: true, summary: "The caller's address and device", tags } },
    )
    .patch(
      "/device",
      ({ request, body }) => {
        deps.devices.patch(device(request), (body ?? {}) as Record<string, unknown>);
        return new Response(null, { status: 204 });
      },
      { permission: "device", rateLimit: "device", body: MobilePatchDeviceBody, detail: { hide: true, summary: "Update the phone's SIM cards (unknown token: 401, register again)", tags } },
    )
    .get(
      "/message",
      ({ request, query }) => deps.devices.appMessages(device(request), query.order),
      { permission: "device", rateLimit: "device", query: MobileMessagesQuery, response: { 200: MobileMessagesResponse() }, detail: { hide: true, summary: "Lease up to 100 due messages to this phone (same lease rules as /v1/messages/<KEY>/next)", tags } },
    )
    .patch(
      "/message",
      async ({ request, body }) => {
        await deps.devices.applyStates(device(request), body);
        return new Response(null, { status: 204 });
      },
      { permission: "device", rateLimit: "device-report", body: MobileStatesBody, detail: { hide: true, summary: "Report message states (Processed, Sent, Delivered, Failed); 204 for any well-formed array", tags } },
    )
    .get(
      "/events",
      ({ request }) => {
        const d = device(request);
        const ip = stateOf(request).clientIp;
        return deps.devices.events.open(d.accountId, d.id, () => deps.devices.touch(d, ip));
      },
      { permission: "device", rateLimit: "device", detail: { hide: true, summary: "Server-Sent Events: MessageEnqueued, MessageCancelled, SettingsUpdated, WebhooksUpdated, MessagesExportRequested; :keepalive every 15 s", tags } },
    )
    .get("/webhooks", ({ request }) => deps.devices.callbacks(device(request), stateOf(request).origin), {
      permission: "device", rateLimit: "device",
      response: { 200: MobileWebhookList() },
      detail: { hide: true, summary: "Textwire's receiver for the phone's webhooks", tags },
    })
    .get("/settings", ({ request }) => deps.devices.settings(device(request)), {
      permission: "device", rateLimit: "device",
      response: { 200: MobileSettings },
      detail: { hide: true, summary: "Settings in the app's snake_case shape (send rate, ping interval, signing key, SSE only)", tags },
    })
    .post(
      "/webhooks/:deviceId",
      async ({ request, params }) => {
        const raw = decoder.decode(await readLimitedBody(request, API_BODY_LIMIT));
        const r = deps.devices.receiveCallback(params.deviceId, raw, request.headers.get("x-signature"), request.headers.get("x-timestamp"), stateOf(request).clientIp);
        return { status: "success", data: r };
      },
      {
        permission: "device", rateLimit: "none",
        parse: "none",
        params: DeviceIdParam,
        detail: { hide: true, summary: "Signed webhooks of the phone (X-Signature: hex HMAC-SHA256 of body + X-Timestamp); each event id applied once", tags },
      },
    );
}

function MobileMessagesResponse() {
  return t.Array(MobileMessage);
}
function MobileWebhookList() {
  return t.Array(MobileWebhook);
}
