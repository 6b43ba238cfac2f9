import { t } from "elysia";
import { IntParam, Pagination } from "./common";

/**
 * Enum-like query parameters are plain strings here and checked by the service, so an absent
 * filter stays absent (a t.UnionEnum would be filled with its first member) and a bad value gets
 * a 400 naming the parameter and the allowed values.
 */
export const MessageListQuery = t.Object({
  ...Pagination,
  status: t.Optional(t.String({ description: "queued | sent | failed | cancelled" })),
  priority: t.Optional(t.String({ description: "low | normal | high | urgent" })),
  createdAfter: t.Optional(t.String({ description: "ISO 8601 date or date-time (inclusive)" })),
  createdBefore: t.Optional(t.String({ description: "ISO 8601 date or date-time (inclusive)" })),
  formId: t.Optional(t.String({ maxLength: 200 })),
  contactId: t.Optional(t.String({ maxLength: 200 })),
  sortBy: t.Optional(t.String({ description: "createdAt (default) | scheduledFor | sentAt | priority" })),
  order: t.Optional(t.String({ description: "asc | desc (default)" })),
});

export const StatusBody = t.Object({
  status: t.Unknown({ description: "queued | sent | failed | cancelled" }),
  sentAt: t.Optional(t.Unknown({ description: "ISO 8601 timestamp; required when status is sent" })),
  failureReason: t.Optional(t.Unknown({ description: "required when status is failed, e.g. invalid-phone, rate-limit, network-error" })),
  leaseToken: t.Optional(t.Unknown({ description: "the leaseToken from next; a stale one is refused with 409 LEASE_CONFLICT" })),
});

export const BulkBody = t.Object({
  messageIds: t.Unknown({ description: "array of 1-1000 message ids" }),
  status: t.Unknown({ description: "queued | sent | failed | cancelled" }),
  sentAt: t.Optional(t.Unknown()),
  failureReason: t.Optional(t.Unknown()),
});

export const ManualMessageBody = t.Object({
  phoneNumber: t.Optional(t.Unknown({ description: "recipient; give this or contactId" })),
  contactId: t.Optional(t.Unknown({ description: "a contact of the account; give this or phoneNumber" })),
  content: t.Unknown({ description: "the text, 1-1600 characters" }),
  priority: t.Optional(t.Unknown({ description: "low | normal (default) | high | urgent" })),
  scheduledFor: t.Optional(t.Unknown({ description: "ISO 8601 timestamp; default now" })),
  maxAttempts: t.Optional(t.Unknown({ description: "attempts before a transient failure is final, 1-10 (default 2)" })),
});

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
  period: t.Optional(t.String({ description: "1d | 7d | 30d (default) | 90d | 1y" })),
  formId: t.Optional(t.String({ maxLength: 200 })),
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone, default UTC" })),
});
