import { t } from "elysia";
import { ALL_EVENTS, EVENT_TYPES } from "../../domain/outbound-events";
import { DESCRIPTION_MAX, URL_MAX } from "../../services/event-endpoints";
import { PageQuery, checked, literals } from "./common";

const eventList = `["*"] or any of ${EVENT_TYPES.join(", ")}`;

/** What each field must be; the service checks it (below). */
const EndpointUrl = t.String({ minLength: 1, maxLength: URL_MAX, format: "uri" });
const EventList = t.Array(literals([ALL_EVENTS, ...EVENT_TYPES]), { minItems: 1 });
const EndpointDescription = t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()]);

/**
 * Fields are checked by the service (so a bad value gets the field-named 400 of the catalogue);
 * each carries its real type for the document (`checked`).
 */
export const EndpointCreateBody = t.Object({
  url: checked(EndpointUrl, "https:// address of your receiver (http:// only to this machine or the LAN, with allowInsecure)"),
  events: checked(EventList, eventList),
  description: t.Optional(checked(EndpointDescription, `free text, at most ${DESCRIPTION_MAX} characters`)),
  isActive: t.Optional(checked(t.Boolean(), "true (default) or false")),
  allowInsecure: t.Optional(checked(t.Boolean(), "true to allow a plain http:// URL on this machine or the LAN (default false)")),
});

export const EndpointUpdateBody = t.Object({
  url: t.Optional(checked(EndpointUrl, "https:// address of your receiver")),
  events: t.Optional(checked(EventList, eventList)),
  description: t.Optional(checked(EndpointDescription, `free text, at most ${DESCRIPTION_MAX} characters; null clears it`)),
  isActive: t.Optional(checked(t.Boolean(), "false pauses deliveries; true resumes them (and re-enables a disabled endpoint)")),
  allowInsecure: t.Optional(checked(t.Boolean(), "true to allow a plain http:// URL on this machine or the LAN")),
});

export const WebhookEndpoint = t.Object({
  id: t.String(),
  format: t.UnionEnum(["textwire", "smsgate"], {
    description: "textwire: Standard Webhooks; smsgate: registered by an SMSGate client (/3rdparty/v1/webhooks), sent in SMSGate's body and signed with X-Signature",
  }),
  url: t.String(),
  events: t.Array(t.String()),
  description: t.Union([t.String(), t.Null()]),
  isActive: t.Boolean(),
  allowInsecure: t.Boolean(),
  disabledAt: t.Union([t.String(), t.Null()], { description: "set when Textwire disabled it after 3 days of failures" }),
  disabledReason: t.Union([t.String(), t.Null()]),
  previousSecretExpiresAt: t.Union([t.String(), t.Null()], { description: "until when the secret before the last rotation still signs" }),
  createdAt: t.String(),
  updatedAt: t.String(),
});

export const WebhookEndpointWithSecret = t.Composite([
  WebhookEndpoint,
  t.Object({ secret: t.String({ description: "whsec_… signing secret: shown only now; store it in your receiver" }) }),
]);

export const EndpointAnswer = t.Object({ status: t.Literal("success"), message: t.Optional(t.String()), data: t.Object({ endpoint: WebhookEndpoint }) });
export const EndpointSecretAnswer = t.Object({ status: t.Literal("success"), message: t.Optional(t.String()), data: t.Object({ endpoint: WebhookEndpointWithSecret }) });
export const EndpointListAnswer = t.Object({ status: t.Literal("success"), data: t.Object({ endpoints: t.Array(WebhookEndpoint) }) });
export const EndpointDeletedAnswer = t.Object({ status: t.Literal("success"), message: t.String(), data: t.Object({ deletedId: t.String() }) });

export const Delivery = t.Object({
  id: t.Integer(),
  eventId: t.String({ description: "also the webhook-id header (receivers dedupe on it)" }),
  eventType: t.String(),
  status: t.UnionEnum(["pending", "delivered", "failed"]),
  attempts: t.Integer(),
  lastAttemptAt: t.Union([t.String(), t.Null()]),
  lastResponseCode: t.Union([t.Integer(), t.Null()]),
  lastResponseBody: t.Union([t.String(), t.Null()], { description: "first 1 KB of the receiver's last answer" }),
  lastError: t.Union([t.String(), t.Null()]),
  nextAttemptAt: t.Union([t.String(), t.Null()]),
  deliveredAt: t.Union([t.String(), t.Null()]),
  createdAt: t.String(),
});

export const DeliveryListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(t.String({ description: "pending | delivered | failed" })),
  eventType: t.Optional(t.String({ description: "e.g. message.sent" })),
  createdAfter: t.Optional(t.String({ description: "ISO 8601 date or date-time (inclusive)" })),
  createdBefore: t.Optional(t.String({ description: "ISO 8601 date or date-time (exclusive)" })),
});

export const DeliveryListAnswer = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    deliveries: t.Array(Delivery),
    pagination: t.Object({ total: t.Integer(), page: t.Integer(), limit: t.Integer(), totalPages: t.Integer() }),
  }),
});

export const RedeliverBody = t.Optional(
  t.Object({ endpointId: t.Optional(t.String({ maxLength: 200, description: "send to this endpoint only (default: every endpoint the event went to)" })) }),
);
export const RedeliverAnswer = t.Object({ status: t.Literal("success"), message: t.String(), data: t.Object({ eventId: t.String(), deliveries: t.Array(Delivery) }) });
export const TestAnswer = t.Object({ status: t.Literal("success"), message: t.String(), data: t.Object({ eventId: t.String(), deliveryId: t.Integer() }) });
