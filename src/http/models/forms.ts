import { t } from "elysia";
import type { TLiteral } from "@sinclair/typebox";
import type { Priority } from "../../domain/statuses";
import { PageQuery, BoolQuery, boolQuery, checked, Envelope, Timestamp, NullableString, Deleted, literals } from "./common";
import { FIELD_TYPES, PRIORITIES, DATE_FORMATS, MAX_DELAY_MINUTES, MAX_FIELD_NAME_LENGTH, MAX_FIELDS_PER_FORM, MAX_LABEL_LENGTH, MAX_TEMPLATE_LENGTH } from "../../domain/form-definition";
import { FORM_NAME_MAX, FORM_DESCRIPTION_MAX } from "../../services/forms";


/** One field of a form's definition (docs/api.md lists the validation keys per type). */
export const FormField = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: MAX_FIELD_NAME_LENGTH }),
    type: literals(FIELD_TYPES),
    required: t.Optional(t.Boolean()),
    label: t.Optional(t.String({ maxLength: MAX_LABEL_LENGTH })),
    placeholder: t.Optional(t.String({ maxLength: MAX_LABEL_LENGTH })),
    validation: t.Optional(
      t.Object(
        {
          minLength: t.Optional(t.Integer({ minimum: 0 })),
          maxLength: t.Optional(t.Integer({ minimum: 0 })),
          pattern: t.Optional(t.String()),
          min: t.Optional(t.Union([t.Number(), t.String()])),
          max: t.Optional(t.Union([t.Number(), t.String()])),
          integer: t.Optional(t.Boolean()),
          format: t.Optional(t.String({ description: `date: ${DATE_FORMATS.join(" | ")}; phone: e164 | national | any` })),
          domains: t.Optional(t.Array(t.String())),
          protocols: t.Optional(t.Array(t.String())),
          regions: t.Optional(t.Array(t.String())),
          message: t.Optional(t.String({ description: "custom error message" })),
        },
        { additionalProperties: true, description: "keys depend on the field type" },
      ),
    ),
  },
  { additionalProperties: true },
);


const HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

/**
 * Form settings, for the OpenAPI document (the domain validates them so every problem is listed
 * at once). Public-form protections: docs/forms.md, "Protecting a public form".
 */
export const FormSettings = t.Object(
  {
    autoSend: t.Optional(t.Boolean()),
    delayMinutes: t.Optional(t.Integer({ minimum: 0, maximum: 525600 })),
    timezone: t.Optional(t.String({ description: "IANA zone, default UTC" })),
    rateLimitPerDay: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
    defaultPriority: t.Optional(t.Union(PRIORITIES.map((p) => t.Literal(p)) as [TLiteral<Priority>])),
    maxAttempts: t.Optional(t.Integer({ minimum: 1, description: "automatic retries: send attempts per message" })),
    protection: t.Optional(t.Literal("recommended", { description: "fills in the recommended protections; explicit values win; not stored" })),
    successUrl: t.Optional(t.Union([t.String({ format: "uri", description: "browser posts: 303 here on success" }), t.Null()])),
    errorUrl: t.Optional(t.Union([t.String({ format: "uri", description: "browser posts: 303 here on refusal, with ?error=<CODE>&field=<name>" }), t.Null()])),
    duplicateWindowMinutes: t.Optional(t.Integer({ minimum: 0, maximum: 1440, description: "recommended 10; 0 = off (default)" })),
    ipLimitPerMinute: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 10000, description: "recommended 10" }), t.Null()])),
    recipientLimitPerDay: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 1000, description: "recommended 5" }), t.Null()])),
    allowedCountries: t.Optional(t.Union([t.Array(t.String({ pattern: "^[A-Za-z]{2}$" }), { minItems: 1 }), t.Null()])),
    allowedOrigins: t.Optional(t.Union([t.Array(t.String({ description: "origin such as https://shop.example" }), { minItems: 1, maxItems: 50 }), t.Null()])),
    honeypotField: t.Optional(t.Union([t.String({ default: "_gotcha" }), t.Null()])),
    captcha: t.Optional(
      t.Union([
        t.Object({
          provider: t.Union([t.Literal("turnstile"), t.Literal("hcaptcha"), t.Literal("recaptcha")]),
          secret: t.String({ description: "write-only: answered as ••••; post •••• (or leave out) to keep it" }),
          siteKey: t.Optional(t.String({ description: "public site key, used by the embed snippet" })),
        }),
        t.Null(),
      ]),
    ),
    allowLinksInValues: t.Optional(t.Boolean({ default: false })),
    quietHours: t.Optional(
      t.Union([t.Object({ start: t.String({ pattern: HHMM }), end: t.String({ pattern: HHMM }) }, { description: "in the form's time zone" }), t.Null()]),
    ),
    consentField: t.Optional(t.Union([t.String({ description: "the name of the consent checkbox: no text unless it is ticked (the request is kept all the same)" }), t.Null()])),
    language: t.Optional(t.String({ description: 'the language of its texts (a tag such as en-US, en-GB, fr), default en-US: a date field reads "Thu, Dec 10" in it' })),
  },
  { description: "Form settings" },
);

/** Required-ness and limits are checked by the domain so every failure is listed at once. */
const formFields = {
  name: t.Optional(checked(t.String({ minLength: 1, maxLength: FORM_NAME_MAX }), `1-${FORM_NAME_MAX} characters, unique per account (case-insensitive)`)),
  description: t.Optional(t.Union([t.String({ maxLength: FORM_DESCRIPTION_MAX }), t.Null()])),
  messageTemplate: t.Optional(checked(t.String({ minLength: 1, maxLength: MAX_TEMPLATE_LENGTH }), `at most ${MAX_TEMPLATE_LENGTH} characters; {{variable}} placeholders, {{name | fallback}}`)),
  isActive: t.Optional(checked(t.Boolean())),
  fields: t.Optional(checked(t.Array(FormField, { minItems: 1, maxItems: MAX_FIELDS_PER_FORM }), "the form's fields, at least one")),
  settings: t.Optional(checked(t.Union([FormSettings, t.Null()]), "form settings; absent keys take their defaults")),
};
export const FormCreateBody = t.Object(formFields, { "x-required": ["name", "messageTemplate", "fields"] });
export const FormBody = t.Object(formFields);

export const RotateWebhookResponse = t.Object({
  status: t.Literal("success"),
  message: t.String(),
  data: t.Object({ formId: t.String(), webhookUrl: t.String(), form: t.Any() }),
});

export const EmbedResponse = t.Object({
  status: t.Literal("success"),
  data: t.Object({
    formId: t.String(),
    webhookUrl: t.String(),
    html: t.String({ description: "the <form> snippet to paste into a web page" }),
    addressSource: t.UnionEnum(["flag", "setting", "request"], {
      description: "where the address in webhookUrl comes from: --public-url, the server address set in Settings, or (none set) the address this request came in on — then the page warns before it is published",
    }),
  }),
});

export const FormListQuery = t.Object({
  ...PageQuery,
  isActive: t.Optional(BoolQuery),
  search: t.Optional(t.String({ maxLength: 200 })),
  counts: t.Optional(boolQuery("true: each form carries `counts` (texts queued and sent, contacts, converted)")),
});

export const FormStatsQuery = t.Object({
  period: t.Optional(t.String({ description: "1d | 7d | 30d (default) | 90d | 1y", "x-type": literals(["1d", "7d", "30d", "90d", "1y"]) })),
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone; default the form's settings.timezone, else UTC" })),
});

// ---------------------------------------------------------------------------------------------
// Answers

export const Form = t.Object(
  {
    id: t.String(),
    name: t.String(),
    description: NullableString,
    messageTemplate: t.String(),
    isActive: t.Boolean(),
    fields: t.Array(FormField),
    // Stored settings are answered as saved; keys added by later features pass through.
    settings: t.Object(FormSettings.properties, { additionalProperties: true }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    webhookUrl: t.String({ description: "where the form posts submissions" }),
  },
  { additionalProperties: true },
);

export const FormSummary = t.Object(
  {
    id: t.String(),
    name: t.String(),
    description: NullableString,
    isActive: t.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    webhookUrl: t.String({ description: "where the form posts submissions" }),
    counts: t.Optional(
      t.Object(
        {
          messages: t.Integer({ minimum: 0 }),
          messagesSent: t.Integer({ minimum: 0 }),
          contacts: t.Integer({ minimum: 0 }),
          converted: t.Integer({ minimum: 0 }),
          conversionRate: t.Number({ description: "per cent of the form's contacts with status converted, one decimal" }),
        },
        { description: "with ?counts=true: all-time figures of the form" },
      ),
    ),
  },
  { additionalProperties: true },
);

export const FormAnswer = Envelope(t.Object({ form: Form }));
export const FormListAnswer = Envelope(
  t.Object({ forms: t.Array(FormSummary), total: t.Integer({ minimum: 0 }), page: t.Integer({ minimum: 1 }), limit: t.Integer({ minimum: 1 }) }),
);

const Count = t.Integer({ minimum: 0 });
export const FormStatsAnswer = Envelope(
  t.Object({
    stats: t.Object(
      {
        formId: t.String(),
        totalSubmissions: Count,
        totalMessages: Count,
        totalContacts: Count,
        deliveryRate: t.Number({ description: "per cent of messages sent" }),
        averageResponseTime: t.Number({ description: "seconds" }),
        spamBlocked: t.Integer({ minimum: 0, description: "all-time posts caught by the honeypot field (refused as spam, no text queued)" }),
        periodStats: t.Object(
          { period: t.String(), timezone: t.String(), submissions: Count, messages: Count, newContacts: Count },
          { additionalProperties: true },
        ),
        dailyBreakdown: t.Array(t.Object({ date: t.String({ format: "date" }), submissions: Count, messages: Count, contacts: Count }, { additionalProperties: true })),
      },
      { additionalProperties: true },
    ),
  }),
);

export const FormDeleted = Deleted;

/** POST /v1/forms/:id/test: the dashboard's test submission (docs/forms.md, "Testing a form"). */
export const FormTestBody = t.Object({
  values: t.Record(t.String(), t.Unknown(), { description: "the form's fields as a visitor fills them in, phoneNumber included; nothing is saved" }),
  sendTo: t.Optional(t.Union([t.String({ maxLength: 100 }), t.Null()], { description: "also send the text to this number (your own): a test message linked to no contact; absent or blank sends nothing" })),
});

export const FormTestAnswer = Envelope(
  t.Object({
    test: t.Literal(true),
    text: t.String({ description: "the text a visitor would get" }),
    characters: t.Integer({ minimum: 0 }),
    segments: t.Integer({ minimum: 0, description: "how many texts it takes" }),
    notes: t.Array(t.String(), { description: "what a post from the website meets that the test does not (switched off, allowed websites, captcha, consent box, delay, quiet hours)" }),
    sent: t.Union([
      t.Null(),
      t.Object({ messageId: t.String(), to: t.String(), queuePosition: t.Integer({ minimum: 1 }), estimatedDelivery: Timestamp }),
    ], { description: "the test text, when sendTo was given" }),
  }),
);
