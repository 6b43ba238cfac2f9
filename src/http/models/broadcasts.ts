import { t } from "elysia";

/** Checked by domain/broadcast.ts (every problem at once, in the spec's error shape). */
export const BroadcastBody = t.Object({
  name: t.Unknown({ description: "what the owner calls it, 1-200 characters" }),
  content: t.Unknown({
    description: "the text, 1-1600 characters; may use {{firstName}}, {{lastName}}, {{fullName}}, {{phoneNumber}}, {{email}}, {{customFields.<name>}}",
  }),
  segment: t.Optional(
    t.Unknown({ description: "which contacts: {status?, tags? (all of them), formId?, createdAfter?, createdBefore?, search?}; none = every contact" }),
  ),
  priority: t.Optional(t.Unknown({ description: "low | normal (default) | high | urgent" })),
  scheduledFor: t.Optional(t.Unknown({ description: "ISO 8601 timestamp of the first message; default now" })),
  sendRatePerMinute: t.Optional(t.Unknown({ description: "spread the messages at this many a minute (1-10000); default: as fast as the phone sends" })),
  maxAttempts: t.Optional(t.Unknown({ description: "attempts before a transient failure is final, 1-10 (default 2)" })),
  quietHours: t.Optional(t.Unknown({ description: '{start: "HH:MM", end: "HH:MM"} in timezone: texts due inside wait for the end; null = none; default: the segment form\'s' })),
  timezone: t.Optional(t.Unknown({ description: "IANA zone for quietHours; default: the segment form's, else UTC" })),
  recipientLimitPerDay: t.Optional(t.Unknown({ description: "skip contacts already sent or queued this many texts in the last 24 h; default: the segment form's" })),
});

export const BroadcastCreateQuery = t.Object({
  dryRun: t.Optional(t.String({ pattern: "^(true|false)$", description: "true: count and render 3 samples, queue nothing" })),
});

export const BroadcastListQuery = t.Object({
  page: t.Optional(t.String({ description: "page number, from 1" })),
  limit: t.Optional(t.String({ description: "page size, 1-100" })),
});
