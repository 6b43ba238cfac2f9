import { t } from "elysia";
import { Pagination, BoolQuery } from "./common";

const HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

/**
 * Form settings, for the OpenAPI document (the domain validates them so every problem is listed
 * at once). Public-form protections: README "Protecting a public form".
 */
export const FormSettings = t.Object(
  {
    autoSend: t.Optional(t.Boolean()),
    delayMinutes: t.Optional(t.Integer({ minimum: 0, maximum: 525600 })),
    timezone: t.Optional(t.String({ description: "IANA zone, default UTC" })),
    rateLimitPerDay: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
    defaultPriority: t.Optional(t.Union([t.Literal("low"), t.Literal("normal"), t.Literal("high"), t.Literal("urgent")])),
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
  },
  { description: "Form settings" },
);

/** Required-ness and limits are checked by the domain so every failure is listed at once. */
export const FormBody = t.Object({
  name: t.Optional(t.Unknown({ description: "1-100 characters, unique per account (case-insensitive)" })),
  description: t.Optional(t.Union([t.String(), t.Null()])),
  messageTemplate: t.Optional(t.Unknown({ description: "required on create; at most 1600 characters; {{variable}} placeholders" })),
  isActive: t.Optional(t.Unknown({ description: "boolean" })),
  fields: t.Optional(t.Unknown({ description: "array of form fields, at least one" })),
  // Documented with FormSettings' shape; still Unknown to the validator, so the domain lists every problem at once.
  // The shape is documented under x-schema only: a `properties` here would let Elysia's body
  // normalisation reshape or drop keys before the domain lists every problem.
  settings: t.Optional(t.Unknown({ description: "form settings object; its keys are in x-schema (README: Protecting a public form)", "x-schema": FormSettings })),
});

export const RotateWebhookResponse = t.Object({
  status: t.Literal("success"),
  message: t.String(),
  data: t.Object({ formId: t.String(), webhookUrl: t.String(), form: t.Any() }),
});

export const EmbedResponse = t.Object({
  status: t.Literal("success"),
  data: t.Object({ formId: t.String(), webhookUrl: t.String(), html: t.String({ description: "the <form> snippet to paste into a web page" }) }),
});

export const FormListQuery = t.Object({
  ...Pagination,
  isActive: t.Optional(BoolQuery),
  search: t.Optional(t.String({ maxLength: 200 })),
});

export const FormStatsQuery = t.Object({
  period: t.Optional(t.String({ description: "1d | 7d | 30d (default) | 90d | 1y" })),
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone; default the form's settings.timezone, else UTC" })),
});
