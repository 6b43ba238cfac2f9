import { t } from "elysia";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../domain/query-params";

export const Pagination = {
  page: t.Optional(t.Integer({ minimum: 1, default: 1, description: "page number, from 1" })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: "page size, 1-100" })),
};

export const IdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) });

/** Query booleans arrive as text. */
// (A t.UnionEnum here gets filled with its first member when absent; a pattern does not.)
export const BoolQuery = t.String({ pattern: "^(true|false)$", description: "true or false" });
