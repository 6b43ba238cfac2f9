import { t } from "elysia";
import { Pagination, BoolQuery } from "./common";

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

export const FormStatsQuery = t.Object({
  period: t.Optional(t.String({ description: "1d | 7d | 30d (default) | 90d | 1y" })),
  timezone: t.Optional(t.String({ maxLength: 64, description: "IANA zone; default the form's settings.timezone, else UTC" })),
});
