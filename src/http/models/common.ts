import { t } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE } from "../../domain/query-params";

/**
 * An integer parameter whose 400 names it and gives the allowed range (as contacts does), e.g.
 * "limit must be an integer from 1 to 100". The errors plugin reads the field from the message.
 */
export function IntParam(name: string, min: number, max: number, opts: { default?: number; description?: string } = {}) {
  return t.Integer({ minimum: min, maximum: max, error: `${name} must be an integer from ${min} to ${max}`, ...opts });
}

export const IdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) });

/**
 * A query boolean: it arrives as text and exactly `true` or `false` is accepted (what generated
 * clients send for a boolean); the document types it boolean (docs/api-decisions.md, "The API
 * document for generated clients; small truths").
 */
// (A t.UnionEnum here gets filled with its first member when absent; a pattern does not.)
export const boolQuery = (description = "true or false") => t.String({ pattern: "^(true|false)$", description, "x-type": t.Boolean() });
export const BoolQuery = boolQuery();

// ---------------------------------------------------------------------------------------------
// Documentation helpers. The OpenAPI generator (src/http/openapi.ts) reads these keys; Elysia and
// TypeBox ignore them at run time.
//   "x-type":     the type a loosely declared value must have (the domain checks it, so that every
//                 failure names its parameter); the document shows this type instead of "any".
//   "x-required": the properties a loosely declared body must carry (create vs update).
//   "x-media":    non-JSON (or JSON array) answers: media type → schema.
//   "x-headers":  response headers (names from RESPONSE_HEADERS in openapi.ts) an answer carries.

/** A value the domain checks; documented as `doc`. */
export const checked = (doc: TSchema, description?: string) => t.Unknown({ ...(description ? { description } : {}), "x-type": doc });

/** The success envelope of every JSON answer: `{status: "success", message?, data}`. */
export const Envelope = <T extends TSchema>(data: T, opts: { description?: string; headers?: string[] } = {}) =>
  t.Object(
    { status: t.Literal("success"), message: t.Optional(t.String()), data },
    { ...(opts.description ? { description: opts.description } : {}), ...(opts.headers ? { "x-headers": opts.headers } : {}) },
  );

/** An answer without a body (204). */
export const NoContent = (description: string, headers?: string[]) => t.Void({ description, ...(headers ? { "x-headers": headers } : {}) });

/** A body that is not the JSON envelope: a file, a text page, a bare JSON array. */
export const Media = (content: Record<string, TSchema>, opts: { description: string; headers?: string[] }) =>
  t.Any({ description: opts.description, "x-media": content, ...(opts.headers ? { "x-headers": opts.headers } : {}) });

/** `{deletedId}` of the DELETE routes. */
export const Deleted = Envelope(t.Object({ deletedId: t.String() }));

/** A person (`user`, with their name) or an API key (`key`, its id) that did something. */
export const Actor = t.Union([
  t.Object({ type: t.Literal("user"), id: t.String(), name: t.String() }),
  t.Object({ type: t.Literal("key"), id: t.String() }),
]);

/** Page figures of the contacts and messages lists. */
export const PageInfo = t.Object({
  total: t.Integer({ minimum: 0 }),
  page: t.Integer({ minimum: 1 }),
  limit: t.Integer({ minimum: 1 }),
  totalPages: t.Integer({ minimum: 0 }),
});

/** An ISO 8601 timestamp as the API writes it (UTC, milliseconds). */
export const Timestamp = t.String({ format: "date-time" });
export const NullableTimestamp = t.Union([Timestamp, t.Null()]);
export const NullableString = t.Union([t.String(), t.Null()]);

/**
 * Page and limit of every list, declared loosely (text) and read by the domain's parsePaging, so
 * every list refuses the same values with the same words (docs/api-decisions.md, "Hostile input,
 * round two"); documented as integers.
 */
export const PageQuery = {
  page: t.Optional(t.String({ description: `page number, 1-${MAX_PAGE} (default 1)`, "x-type": t.Integer({ minimum: 1, maximum: MAX_PAGE }) })),
  limit: t.Optional(t.String({ description: `page size, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`, "x-type": t.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE }) })),
};

/** A string query value checked by the service against `values`; documented as that enum. */
export const EnumQuery = (values: readonly string[], description: string) =>
  t.Optional(t.String({ description, "x-type": t.Union(values.map((v) => t.Literal(v))) }));

/** A closed set of strings (documented as an enum; its static type is the union). */
export const literals = <const T extends readonly string[]>(values: T) => {
  const schema = t.UnionEnum(values as unknown as [T[number], ...T[number][]]);
  delete (schema as { default?: unknown }).default; // UnionEnum defaults to its first member
  return schema;
};
