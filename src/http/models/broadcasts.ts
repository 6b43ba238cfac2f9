import { t } from "elysia";
import { boolQuery, checked, Envelope, PageInfo, PageQuery, Timestamp, literals } from "./common";
import { MESSAGE_STATUSES } from "../../domain/message-transitions";
import { PRIORITIES } from "../../domain/form-definition";

/** Checked by domain/broadcast.ts (every problem at once, in the spec's error shape). */
export const BroadcastSegment = t.Object(
  {
    status: t.Optional(literals(["new", "contacted", "responded", "converted"])),
    tags: t.Optional(t.Array(t.String(), { description: "contacts having all of them" })),
    formId: t.Optional(t.String()),
    createdAfter: t.Optional(t.String({ description: "ISO 8601 date or date-time" })),
    createdBefore: t.Optional(t.String({ description: "ISO 8601 date or date-time" })),
    search: t.Optional(t.String()),
  },
  { description: "which contacts; none = every contact" },
);

export const BroadcastBody = t.Object(
  {
    name: checked(t.String({ minLength: 1, maxLength: 200 }), "what the owner calls it, 1-200 characters"),
    content: checked(
      t.String({ minLength: 1, maxLength: 1600 }),
      "the text, 1-1600 characters; may use {{firstName}}, {{lastName}}, {{fullName}}, {{phoneNumber}}, {{email}}, {{customFields.<name>}}",
    ),
    segment: t.Optional(checked(BroadcastSegment, "which contacts: {status?, tags? (all of them), formId?, createdAfter?, createdBefore?, search?}; none = every contact")),
    priority: t.Optional(checked(literals(PRIORITIES), "low | normal (default) | high | urgent")),
    scheduledFor: t.Optional(checked(t.String({ format: "date-time" }), "ISO 8601 timestamp of the first message; default now")),
    sendRatePerMinute: t.Optional(checked(t.Integer({ minimum: 1, maximum: 10_000 }), "spread the messages at this many a minute (1-10000); default: as fast as the phone sends")),
    maxAttempts: t.Optional(checked(t.Integer({ minimum: 1, maximum: 10 }), "attempts before a transient failure is final, 1-10 (default 2)")),
    quietHours: t.Optional(
      checked(
        t.Union([t.Object({ start: t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" }), end: t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" }) }), t.Null()]),
        'in timezone: texts due inside wait for the end; null = none; default: the segment form\'s',
      ),
    ),
    timezone: t.Optional(checked(t.String(), "IANA zone for quietHours; default: the segment form's, else UTC")),
    recipientLimitPerDay: t.Optional(checked(t.Union([t.Integer({ minimum: 1 }), t.Null()]), "skip contacts already sent or queued this many texts in the last 24 h; default: the segment form's")),
  },
  { "x-required": ["name", "content"] },
);

export const BroadcastCreateQuery = t.Object({
  dryRun: t.Optional(boolQuery("true: count and render 3 samples, queue nothing")),
});

export const BroadcastListQuery = t.Object(PageQuery);

// ---------------------------------------------------------------------------------------------
// Answers

const Count = t.Integer({ minimum: 0 });

export const Broadcast = t.Object(
  {
    id: t.String(),
    name: t.String(),
    content: t.String(),
    segment: t.Record(t.String(), t.Unknown(), { description: "the segment as given" }),
    priority: literals(PRIORITIES),
    scheduledFor: Timestamp,
    sendRatePerMinute: t.Union([t.Integer({ minimum: 1 }), t.Null()]),
    maxAttempts: t.Union([t.Integer({ minimum: 1 }), t.Null()]),
    quietHours: t.Union([t.Object({ start: t.String(), end: t.String() }, { description: "HH:MM in `timezone`: texts due inside wait until the end" }), t.Null()]),
    timezone: t.String({ description: "IANA zone of quietHours" }),
    recipientLimitPerDay: t.Union([t.Integer({ minimum: 1 }), t.Null()], { description: "contacts already sent or queued this many texts in the last 24 h were skipped" }),
    // scheduled: starts later (cancelling stops every text); queuing: its texts are being
    // created; queued: sending; completed: none left queued; cancelled.
    status: literals(["scheduled", "queuing", "queued", "completed", "cancelled"]),
    recipients: Count,
    suppressed: Count,
    skipped: t.Integer({ minimum: 0, description: "recipients passed over because the monthly quota ran out" }),
    messages: t.Object({ ...Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, Count])), total: Count }, { additionalProperties: true }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
);

export const BroadcastPreviewAnswer = Envelope(
  t.Object({
    recipients: t.Integer({ minimum: 0, description: "contacts of the segment who are not opted out nor at the per-recipient limit" }),
    suppressed: t.Integer({ minimum: 0, description: "contacts of the segment left out: skipped.optedOut + skipped.recipientLimit" }),
    samples: t.Array(
      t.Object(
        { contactId: t.String(), phoneNumber: t.String(), content: t.String(), characters: Count, encoding: t.String(), segments: Count },
        { additionalProperties: true },
      ),
    ),
    sending: t.Integer({ minimum: 0, description: "texts that will be queued: recipients less those over the monthly quota" }),
    skipped: t.Object(
      {
        optedOut: t.Integer({ minimum: 0, description: "opted out" }),
        recipientLimit: t.Integer({ minimum: 0, description: "already sent or queued recipientLimitPerDay texts in the last 24 h" }),
        monthlyQuota: t.Integer({ minimum: 0, description: "recipients past what is left of the account's monthly quota" }),
      },
      { description: "who gets nothing, by reason (each contact counted once, in this order)" },
    ),
    segments: t.Object(
      { min: Count, max: Count, total: Count },
      { description: "SMS segments per text (fewest, most) and in all, over the `sending` texts as each recipient's is filled in" },
    ),
    quietHours: t.Object(
      {
        hours: t.Union([t.Object({ start: t.String(), end: t.String() }), t.Null()]),
        timezone: t.String(),
        delayed: t.Integer({ minimum: 0, description: "texts whose time falls inside the quiet hours and waits for their end" }),
      },
      { description: "the quiet hours that will apply (the request's, else the segment form's)" },
    ),
    estimate: t.Object(
      {
        phonesConnected: Count,
        phones: t.Optional(t.Integer({ minimum: 0, description: "the account's phones the estimate counts on" })),
        basis: t.Optional(t.Union([t.Literal("connected-phones"), t.Literal("no-phone-connected")], { description: "no-phone-connected: the time is as if the account's phones were connected" })),
        ratePerMinute: t.Integer({ minimum: 0, description: "what the phones keep up a minute together in the long run, within their budgets (docs/phones.md)" }),
        startsAt: Timestamp,
        finishesAt: t.Union([Timestamp, t.Null()], { description: "when the last text is handed to a phone, from the phones' budgets (as if connected when none is)" }),
        minutes: t.Union([Count, t.Null()], { description: "from startsAt to finishesAt, rounded up" }),
      },
      { description: "from the phones' budgets, spacing and pauses, with the texts already waiting counted (docs/phones.md)" },
    ),
    scheduledFor: t.Union([Timestamp, t.Null()], { description: "the start asked for when it is later than now; null = now" }),
    accountTimeZone: t.String({ description: "the business's time zone (Settings → Business), UTC when none was chosen: the dashboard's zone for dates" }),
  }),
  { description: "Dry run: who would get it, who is skipped and why, texts and the time to send; nothing queued" },
);

export const BroadcastAcceptedAnswer = Envelope(
  t.Object({ broadcastId: t.String(), recipients: Count, suppressed: Count, broadcast: Broadcast }),
  { description: "Accepted; its messages are being queued" },
);

export const BroadcastAnswer = Envelope(t.Object({ broadcast: Broadcast }));
export const BroadcastListAnswer = Envelope(t.Object({ broadcasts: t.Array(Broadcast), pagination: PageInfo }));
export const BroadcastCancelAnswer = Envelope(t.Object({ broadcast: Broadcast, cancelled: Count }, { additionalProperties: true }));
