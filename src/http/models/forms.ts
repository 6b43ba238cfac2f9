import { t } from "elysia";
import { Pagination, BoolQuery } from "./common";

export const FieldType = t.UnionEnum(["text", "email", "phone", "number", "url", "date"]);

export const FormField = t.Object(
  {
    name: t.String({ description: "template variable name, case-sensitive; ^[A-Za-z_][A-Za-z0-9_]*$" }),
    type: t.String({ description: "text | email | phone | number | url | date" }),
    required: t.Optional(t.Boolean()),
    label: t.Optional(t.String()),
    placeholder: t.Optional(t.String()),
    validation: t.Optional(t.Record(t.String(), t.Unknown(), { description: "keys depend on type; `message` is custom error text" })),
  },
  { additionalProperties: true },
);

export const FormSettings = t.Object(
  {
    autoSend: t.Optional(t.Boolean()),
    delayMinutes: t.Optional(t.Number()),
    timezone: t.Optional(t.String()),
    rateLimitPerDay: t.Optional(t.Union([t.Number(), t.Null()])),
    defaultPriority: t.Optional(t.UnionEnum(["low", "normal", "high", "urgent"])),
  },
  { additionalProperties: true },
);

/** Required-ness and limits are checked by the domain so every failure is listed at once. */
export const FormBody = t.Object({
  name: t.Optional(t.Unknown({ description: "1-100 characters, unique per account (case-insensitive)" })),
  description: t.Optional(t.Union([t.String(), t.Null()])),
  messageTemplate: t.Optional(t.Unknown({ description: "required on create; at most 1600 characters; {{variable}} placeholders" })),
  isActive: t.Optional(t.Unknown({ description: "boolean" })),
  fields: t.Optional(t.Unknown({ description: "array of form fields, at least one" })),
  settings: t.Optional(t.Unknown({ description: "form settings object" })),
});

export const FormListQuery = t.Object({
  ...Pagination,
  isActive: t.Optional(BoolQuery),
  search: t.Optional(t.String({ maxLength: 200 })),
});

export const StatsQuery = t.Object({
  period: t.Optional(t.UnionEnum(["1d", "7d", "30d", "90d", "1y"])),
  timezone: t.Optional(t.String()),
});
