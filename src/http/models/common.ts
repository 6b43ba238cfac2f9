import { t } from "elysia";
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE } from "../../domain/query-params";

/**
 * An integer parameter whose 400 names it and gives the allowed range (as contacts does), e.g.
 * "limit must be an integer from 1 to 100". The errors plugin reads the field from the message.
 */
export function IntParam(name: string, min: number, max: number, opts: { default?: number; description?: string } = {}) {
  return t.Integer({ minimum: min, maximum: max, error: `${name} must be an integer from ${min} to ${max}`, ...opts });
}

export const Pagination = {
  page: t.Optional(IntParam("page", 1, MAX_PAGE, { default: 1, description: `page number, 1-${MAX_PAGE}` })),
  limit: t.Optional(IntParam("limit", 1, MAX_PAGE_SIZE, { default: DEFAULT_PAGE_SIZE, description: "page size, 1-100" })),
};

export const IdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) });

/** Query booleans arrive as text. */
// (A t.UnionEnum here gets filled with its first member when absent; a pattern does not.)
export const BoolQuery = t.String({ pattern: "^(true|false)$", description: "true or false" });
