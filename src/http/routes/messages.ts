import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import { actorOf } from "../../domain/permissions";
import { IdParam } from "../models/common";
import {
  AnalyticsQuery,
  BulkAnswer,
  BulkBody,
  ManualMessageBody,
  MessageAnalyticsAnswer,
  MessageAnswer,
  MessageDeleted,
  MessageListAnswer,
  MessageListQuery,
  NextBody,
  NextManyAnswer,
  NextOneAnswer,
  NextQuery,
  QueuedAnswer,
  StatusAnswer,
  StatusBody,
} from "../models/messages";
import { NoContent } from "../models/common";
import { LEASE_SECONDS_DEFAULT } from "../../services/leases";
import { routeAccess } from "../plugins/route-access";

/**
 * Declared without the key segment: the outer handler authenticates `/v1/messages/<KEY>/…` and
 * rewrites it to `/v1/messages/…` (the Bearer form arrives that way already).
 */
export function messagesRoutes(deps: AppDeps) {
  /** A recipe phone named by X-Device-Id (registered by the outer handler on first sight). */
  const recipeOf = (request: Request) =>
    deps.deviceRegistry.recipe(authOf(request).accountId, request.headers.get("x-device-id"), request.headers.get("x-device-name"), stateOf(request).clientIp);
  return new Elysia({ name: "messages-routes", prefix: "/v1/messages" })
    .use(routeAccess)
    .get(
      "/",
      ({ request, query }) => ({ status: "success", data: deps.messages.list(authOf(request).accountId, query) }),
      { permission: "messages.read", rateLimit: "api-key", query: MessageListQuery, response: { 200: MessageListAnswer }, detail: { summary: "List messages with pagination and a status summary", tags: ["Messages"] } },
    )
    .post(
      "/",
      ({ request, body, set }) => {
        const st = stateOf(request);
        const auth = authOf(request);
        const r = deps.messages.createManual(auth.accountId, body as Record<string, unknown>, {
          monthlyQuota: auth.account.monthlyQuota,
          ipAddress: st.clientIp,
          userAgent: request.headers.get("user-agent"),
          actor: actorOf(auth),
        });
        set.status = 201;
        return {
          status: "success",
          message: "Message queued",
          data: { messageId: r.message.id, contactId: r.message.contactId, queuePosition: r.queuePosition, estimatedDelivery: r.estimatedDelivery, message: r.message },
        };
      },
      { permission: "messages.send", rateLimit: "api-key", body: ManualMessageBody, response: { 201: QueuedAnswer }, detail: { summary: "Queue a manual message (extension)", tags: ["Messages"], "x-errors": ["QUOTA_EXCEEDED", "RECIPIENT_OPTED_OUT"] } },
    )
    .get(
      "/analytics",
      ({ request, query }) => ({ status: "success", data: { analytics: deps.analytics.messages(authOf(request).accountId, query, deps.clock()) } }),
      { permission: "messages.read", rateLimit: "api-key", query: AnalyticsQuery, response: { 200: MessageAnalyticsAnswer }, detail: { summary: "Message analytics for a period", tags: ["Messages"] } },
    )
    .post(
      "/next",
      ({ request, body }) => {
        const phone = recipeOf(request);
        deps.leases.askedForWork(authOf(request).accountId);
        if (phone) {
          const messages = deps.devices.leaseTo(phone, body?.limit ?? 1, body?.leaseSeconds ?? LEASE_SECONDS_DEFAULT);
          return { status: "success", data: { messages } };
        }
        const r = deps.leases.next(authOf(request).accountId, {
          limit: body?.limit ?? 1,
          leaseSeconds: body?.leaseSeconds ?? LEASE_SECONDS_DEFAULT,
          deviceId: body?.deviceId ?? null,
        });
        const retryAfter = r.rateLimitedForMs === undefined ? undefined : Math.ceil(r.rateLimitedForMs / 1000);
        return { status: "success", data: { messages: r.messages, ...(retryAfter === undefined ? {} : { retryAfter }) } };
      },
      { permission: "phone.work", rateLimit: "device", body: NextBody, response: { 200: NextManyAnswer }, detail: { summary: "Lease due messages to a device (extension)", tags: ["Devices"] } },
    )
    .get(
      "/next",
      async ({ request, query, status }) => {
        const phone = recipeOf(request);
        deps.leases.askedForWork(authOf(request).accountId);
        const m = phone
          ? await deps.devices.waitLease(phone, query.leaseSeconds ?? LEASE_SECONDS_DEFAULT, query.wait ?? 0)
          : await deps.leases.waitNext(
          authOf(request).accountId,
          { leaseSeconds: query.leaseSeconds ?? LEASE_SECONDS_DEFAULT, deviceId: query.deviceId ?? null },
          query.wait ?? 0,
        );
        if (!m) return status(204, undefined);
        return { status: "success", data: { message: m } };
      },
      { permission: "phone.work", rateLimit: "device", query: NextQuery, response: { 200: NextOneAnswer, 204: NoContent("No message is due (after waiting up to `wait` seconds)") }, detail: { summary: "Lease one due message, flat; 204 when none (extension)", tags: ["Devices"] } },
    )
    .put(
      "/bulk",
      ({ request, body }) => ({ status: "success", data: deps.messages.bulk(authOf(request).accountId, body, actorOf(authOf(request))) }),
      { permission: "messages.write", rateLimit: "api-key", body: BulkBody, response: { 200: BulkAnswer }, detail: { summary: "Set one status on up to 1000 messages", tags: ["Messages"] } },
    )
    .get(
      "/:id",
      ({ request, params }) => ({ status: "success", data: deps.messages.getWithTimeline(authOf(request).accountId, params.id) }),
      {
        permission: "messages.read", rateLimit: "api-key",
        params: IdParam,
        response: { 200: MessageAnswer },
        detail: { summary: "Get a message and its timeline", description: "`timeline` lists the message's steps oldest first: created, scheduled, each lease (phone and expiry), leases that ended with no report, failed attempts and retries, and the final sent / failed / cancelled.", tags: ["Messages"] },
      },
    )
    .put(
      "/:id/status",
      ({ request, params, body }) => {
        const accountId = authOf(request).accountId;
        const phone = recipeOf(request);
        const before = phone ? deps.messages.findRow(accountId, params.id)?.status : undefined;
        const data = deps.messages.updateStatus(accountId, params.id, body, { actor: actorOf(authOf(request)) });
        // A failure the retry policy re-queued still counts as this phone's failure.
        if (phone && before === "queued" && (body.status === "sent" || body.status === "failed")) deps.devices.countResult(phone, body.status);
        return { status: "success", message: "Message status updated", data };
      },
      { permission: "phone.report", rateLimit: "device-report", params: IdParam, body: StatusBody, response: { 200: StatusAnswer }, detail: { summary: "Report or change a message's status", tags: ["Messages"], "x-errors": ["INVALID_TRANSITION", "LEASE_CONFLICT"] } },
    )
    .delete(
      "/:id",
      ({ request, params }) => ({ status: "success", message: "Message deleted", data: deps.messages.delete(authOf(request).accountId, params.id) }),
      { permission: "messages.write", rateLimit: "api-key", params: IdParam, response: { 200: MessageDeleted }, detail: { summary: "Delete a queued message", tags: ["Messages"], "x-errors": ["INVALID_STATE"] } },
    );
}
