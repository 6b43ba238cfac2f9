import { t } from "elysia";
import { Waiting } from "./sending";
import { IntParam, PageQuery, checked, Envelope, Timestamp, NullableTimestamp, NullableString, PageInfo, Deleted, literals, Actor } from "./common";
import { MESSAGE_STATUSES } from "../../domain/message-transitions";
import { PRIORITIES } from "../../domain/form-definition";
import { FAILURE_HISTORY_MAX, LEASE_HISTORY_MAX } from "../../db/stores/messages/history";
import { MESSAGE_STAGES } from "../../domain/message-stage";

const MessageStatus = literals(MESSAGE_STATUSES);
const Priority = literals(PRIORITIES);
const Period = literals(["1d", "7d", "30d", "90d", "1y"]);

/**
 * Enum-like query parameters are plain strings here and checked by the service, so an absent
 * filter stays absent (a t.UnionEnum would be filled with its first member) and a bad value gets
 * a 400 naming the parameter and the allowed values. "x-type" documents the allowed values.
 */
export const MessageListQuery = t.Object({
  ...PageQuery,
  status: t.Optional(t.String({ description: "queued | sent | failed | cancelled", "x-type": MessageStatus })),
  priority: t.Optional(t.String({ description: "low | normal | high | urgent", "x-type": Priority })),
  createdAfter: t.Optional(t.String({ description: "ISO 8601 date or date-time (inclusive)" })),
  createdBefore: t.Optional(t.String({ description: "ISO 8601 date or date-time (exclusive)" })),
  formId: t.Optional(t.String({ maxLength: 200 })),
  contactId: t.Optional(t.String({ maxLength: 200 })),
  sortBy: t.Optional(t.String({ description: "createdAt (default) | scheduledFor | sentAt | priority", "x-type": literals(["createdAt", "scheduledFor", "sentAt", "priority"]) })),
  order: t.Optional(t.String({ description: "asc | desc (default)", "x-type": literals(["asc", "desc"]) })),
});

export const StatusBody = t.Object(
  {
    status: checked(MessageStatus),
    sentAt: t.Optional(checked(t.String({ format: "date-time" }), "ISO 8601 timestamp; required when status is sent")),
    failureReason: t.Optional(checked(t.String({ minLength: 1 }), "required when status is failed, e.g. invalid-phone, rate-limit, network-error")),
    leaseToken: t.Optional(checked(t.String(), "the leaseToken from next; a stale one is refused with 409 LEASE_CONFLICT")),
  },
  { "x-required": ["status"] },
);

export const BulkBody = t.Object(
  {
    messageIds: checked(t.Array(t.String(), { minItems: 1, maxItems: 1000 }), "1-1000 message ids"),
    status: checked(MessageStatus),
    sentAt: t.Optional(checked(t.String({ format: "date-time" }))),
    failureReason: t.Optional(checked(t.String())),
  },
  { "x-required": ["messageIds", "status"] },
);

export const ManualMessageBody = t.Object(
  {
    phoneNumber: t.Optional(checked(t.String(), "recipient; give this or contactId")),
    contactId: t.Optional(checked(t.String(), "a contact of the account; give this or phoneNumber")),
    content: checked(t.String({ minLength: 1, maxLength: 1600 }), "the text, 1-1600 characters"),
    priority: t.Optional(checked(Priority, "default normal")),
    scheduledFor: t.Optional(checked(t.String({ format: "date-time" }), "ISO 8601 timestamp; default now")),
    maxAttempts: t.Optional(checked(t.Integer({ minimum: 1, maximum: 10 }), "attempts before a transient failure is final, 1-10 (default 2)")),
  },
  { "x-required": ["content"] },
);

export const NextBody = t.Optional(
  t.Object({
    limit: t.Optional(IntParam("limit", 1, 50, { description: "messages to lease, 1-50 (default 1)" })),
    leaseSeconds: t.Optional(IntParam("leaseSeconds", 30, 3600, { description: "lease length, 30-3600 s (default 300)" })),
    deviceId: t.Optional(t.String({ maxLength: 100, description: "free text naming the phone" })),
  }),
);

export const NextQuery = t.Object({
  wait: t.Optional(IntParam("wait", 0, 30, { description: "long-poll up to this many seconds (0-30)" })),
  leaseSeconds: t.Optional(IntParam("leaseSeconds", 30, 3600, { description: "lease length, 30-3600 s (default 300)" })),
  deviceId: t.Optional(t.String({ maxLength: 100 })),
});

export const AnalyticsQuery = t.Object({
  period: t.Optional(t.String({ description: "1d | 7d | 30d (default) | 90d | 1y", "x-type": Period })),
  formId: t.Optional(t.String({ maxLength: 200 })),
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone, default UTC" })),
});

// ---------------------------------------------------------------------------------------------
// Answers

const Count = t.Integer({ minimum: 0 });


export const Message = t.Object(
  {
    id: t.String(),
    content: t.String(),
    recipientPhone: t.String({ description: "E.164" }),
    recipientName: NullableString,
    contactId: NullableString,
    formId: NullableString,
    formName: NullableString,
    status: MessageStatus,
    priority: Priority,
    // Not t.Record: the response normaliser would drop a posted `__proto__` key (see contacts.ts).
    webhookData: t.Object({}, { additionalProperties: true, description: "the submission as posted" }),
    templateUsed: NullableString,
    scheduledFor: Timestamp,
    sentAt: NullableTimestamp,
    failureReason: NullableString,
    retryCount: Count,
    metadata: t.Record(t.String(), t.Unknown(), { description: "messageLength, variablesUsed, source, encoding, segments, …" }),
    createdBy: t.Union([Actor, t.Null()], { description: "who sent a manual text: a person or an API key; null otherwise" }),
    cancelledBy: t.Union([Actor, t.Null()], { description: "who cancelled the message; null when nobody did" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
);

export const LeasedMessage = t.Composite([
  Message,
  t.Object({ leaseToken: t.String({ description: "send it back with the status report" }), leaseExpiresAt: Timestamp }),
], { additionalProperties: true });

export const MessageSummary = t.Object(
  {
    id: t.String(),
    content: t.String(),
    recipientPhone: t.String(),
    recipientName: NullableString,
    formId: NullableString,
    formName: NullableString,
    contactId: NullableString,
    status: MessageStatus,
    priority: Priority,
    scheduledFor: Timestamp,
    sentAt: NullableTimestamp,
    createdAt: Timestamp,
    stage: t.UnionEnum([...MESSAGE_STAGES], {
      description: "where the text is, in the dashboard's words: queued; with-phone (a phone took it and has not reported yet); sent; delivered (the phone reported it reached the handset); failed; cancelled",
    }),
  },
  { additionalProperties: true },
);

const StatusCounts = t.Object({ queued: Count, sent: Count, failed: Count, cancelled: Count }, { additionalProperties: true });

export const MessageListAnswer = Envelope(t.Object({ messages: t.Array(MessageSummary), pagination: PageInfo, summary: StatusCounts }));
/** One step of a message's life (domain/message-timeline.ts). */
export const TimelineEvent = t.Object({
  at: Timestamp,
  kind: literals(["created", "scheduled", "leased", "lease_expired", "attempt_failed", "sent", "delivered", "failed", "cancelled"]),
  deviceId: t.Optional(NullableString),
  deviceName: t.Optional(NullableString),
  expiresAt: t.Optional(t.String({ description: "leased: when the lease ends unless the phone reports first" })),
  reason: t.Optional(NullableString),
  retryAt: t.Optional(t.String({ description: "attempt_failed: when the message went back to the queue" })),
  by: t.Optional(literals(["automatic", "owner"])),
  deviceTime: t.Optional(t.String({ description: "sent / delivered: the time the phone reported, when it lay before its lease or ahead of the server's clock and the server's time was recorded instead" })),
  sim: t.Optional(t.Integer({ minimum: 0, description: "leased: the SIM it was handed out with (SMSGate simNumber; 0: the phone's own choice)" })),
  moved: t.Optional(t.String({ description: "leased: why it went from another phone or SIM than its contact's own" })),
});
export const MessageAnswer = Envelope(
  t.Object({
    message: Message,
    timeline: t.Array(TimelineEvent, {
      description: `oldest first; the latest ${LEASE_HISTORY_MAX} leases and ${FAILURE_HISTORY_MAX} failed attempts are kept per message`,
    }),
    waiting: t.Optional(Waiting),
  }),
);
export const QueuedAnswer = Envelope(
  t.Object(
    {
      messageId: t.String(),
      contactId: NullableString,
      queuePosition: t.Integer({ minimum: 1 }),
      estimatedDelivery: Timestamp,
      message: Message,
    },
    { additionalProperties: true },
  ),
);
export const NextManyAnswer = Envelope(
  t.Object({
    messages: t.Array(LeasedMessage),
    retryAfter: t.Optional(t.Integer({ minimum: 0, description: "seconds until the send-rate cap lets one more leave (only when it held messages back)" })),
  }),
);
export const NextOneAnswer = Envelope(t.Object({ message: LeasedMessage }));
export const StatusAnswer = Envelope(t.Object({ messageId: t.String(), status: MessageStatus, sentAt: NullableTimestamp, updatedAt: Timestamp }, { additionalProperties: true }));
export const BulkAnswer = Envelope(
  t.Object({
    updated: Count,
    errors: t.Array(t.Object({ id: t.String(), code: t.String(), message: t.String() }, { additionalProperties: true })),
  }),
);
export const MessageDeleted = Deleted;

export const MessageAnalyticsAnswer = Envelope(
  t.Object({
    analytics: t.Object(
      {
        period: t.String(),
        timezone: t.String(),
        from: Timestamp,
        to: Timestamp,
        totalMessages: Count,
        deliveryRate: t.Number({ description: "per cent of sent among sent and failed" }),
        averageResponseTime: t.String({ description: "human-readable, or n/a" }),
        averageResponseTimeSeconds: t.Union([t.Number(), t.Null()]),
        statusBreakdown: StatusCounts,
        dailyVolume: t.Array(t.Object({ date: t.String({ format: "date" }), sent: Count, failed: Count, queued: Count, cancelled: Count })),
        topForms: t.Array(t.Object({ formId: t.String(), formName: NullableString, messageCount: Count, deliveryRate: t.Number() }, { additionalProperties: true })),
        failureReasons: t.Record(t.String(), Count),
        replyRate: t.Number({ description: "per cent of the contacts texted in the period that texted back in it, one decimal" }),
      },
      { additionalProperties: true },
    ),
  }),
);
