import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import { FormAnswer, FormBody, FormCreateBody, FormDeleted, FormListAnswer, FormListQuery, FormStatsAnswer, FormStatsQuery } from "../models/forms";
import { IdParam } from "../models/common";
import { DEFAULT_PAGE_SIZE } from "../../domain/query-params";
import type { Form } from "../../services/forms";

export function webhookUrlFor(deps: AppDeps, req: Request, formId: string): string {
  const origin = deps.config.publicUrl ?? stateOf(req).origin;
  return `${origin}/v1/forms/${formId}/webhook`;
}

export function presentForm(deps: AppDeps, req: Request, f: Form) {
  const { accountId: _account, ...rest } = f;
  return { ...rest, webhookUrl: webhookUrlFor(deps, req, f.id) };
}

export function formsRoutes(deps: AppDeps) {
  return new Elysia({ prefix: "/v1/forms" })
    .get(
      "/",
      ({ request, query }) => {
        const { accountId } = authOf(request);
        const data = deps.forms.list(accountId, {
          page: query.page ?? 1,
          limit: query.limit ?? DEFAULT_PAGE_SIZE,
          isActive: query.isActive === undefined ? undefined : query.isActive === "true",
          search: query.search,
        });
        return { status: "success", data };
      },
      { query: FormListQuery, response: { 200: FormListAnswer }, detail: { summary: "List forms", tags: ["Forms"] } },
    )
    .post(
      "/",
      ({ request, body, set }) => {
        const form = deps.forms.create(authOf(request).accountId, body);
        set.status = 201;
        return { status: "success", message: "Form created", data: { form: presentForm(deps, request, form) } };
      },
      { body: FormCreateBody, response: { 201: FormAnswer }, detail: { summary: "Create a form (admin)", tags: ["Forms"], "x-errors": ["DUPLICATE_FORM_NAME"] } },
    )
    .get(
      "/:id",
      ({ request, params }) => {
        const form = deps.forms.get(authOf(request).accountId, params.id);
        return { status: "success", data: { form: presentForm(deps, request, form) } };
      },
      { params: IdParam, response: { 200: FormAnswer }, detail: { summary: "Get a form", tags: ["Forms"] } },
    )
    .get(
      "/:id/stats",
      ({ request, params, query }) => ({
        status: "success",
        data: { stats: deps.analytics.formStats(authOf(request).accountId, params.id, query, deps.clock()) },
      }),
      { params: IdParam, query: FormStatsQuery, response: { 200: FormStatsAnswer }, detail: { summary: "Form usage statistics", tags: ["Forms"] } },
    )
    .put(
      "/:id",
      ({ request, params, body }) => {
        const form = deps.forms.update(authOf(request).accountId, params.id, body);
        return { status: "success", message: "Form updated", data: { form: presentForm(deps, request, form) } };
      },
      { params: IdParam, body: FormBody, response: { 200: FormAnswer }, detail: { summary: "Update a form (admin)", tags: ["Forms"], "x-errors": ["DUPLICATE_FORM_NAME"] } },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        const { deletedId, removedQueued } = deps.forms.delete(authOf(request).accountId, params.id);
        deps.leases.withdraw(removedQueued);
        return { status: "success", message: "Form and all its messages, contacts and data deleted", data: { deletedId } };
      },
      { params: IdParam, response: { 200: FormDeleted }, detail: { summary: "Delete a form and everything it created (admin)", tags: ["Forms"] } },
    );
}
