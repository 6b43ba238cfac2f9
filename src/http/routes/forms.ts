import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import {
  EmbedResponse,
  FormAnswer,
  FormBody,
  FormCreateBody,
  FormDeleted,
  FormListAnswer,
  FormListQuery,
  FormStatsAnswer,
  FormStatsQuery,
  FormTestAnswer,
  FormTestBody,
  RotateWebhookResponse,
} from "../models/forms";
import { actorOf } from "../../domain/permissions";
import { IdParam } from "../models/common";
import { parsePaging } from "../../domain/query-params";
import type { FieldError } from "../../domain/submission";
import { validationError } from "../../errors";
import type { Form } from "../../services/forms";
import { maskSecrets, resolveProtection } from "../../domain/protection";
import { embedSnippet } from "../../domain/embed";
import { prefersHtml } from "../pages";
import { formCounts } from "../../services/form-counts";
import { routeAccess } from "../plugins/route-access";

/** The webhook address of a form, from its token (the id until the address is rotated). */
export function webhookUrlFor(deps: AppDeps, req: Request, webhookToken: string): string {
  // Never the browser's address alone: docs/api-decisions.md, "The business's name, the server address and HTTPS without breaking forms".
  const origin = deps.serverAddress.publicAddress(stateOf(req).origin).url;
  return `${origin}/v1/forms/${webhookToken}/webhook`;
}

export function presentForm(deps: AppDeps, req: Request, f: Form) {
  const { accountId: _account, webhookToken, ...rest } = f;
  return { ...rest, settings: maskSecrets(rest.settings), webhookUrl: webhookUrlFor(deps, req, webhookToken) };
}

export function formsRoutes(deps: AppDeps) {
  return new Elysia({ prefix: "/v1/forms" })
    .use(routeAccess)
    .get(
      "/",
      ({ request, query }) => {
        const { accountId } = authOf(request);
        const errors: FieldError[] = [];
        const { page, limit } = parsePaging(query, errors);
        if (errors.length) throw validationError(errors);
        const data = deps.forms.list(accountId, {
          page,
          limit,
          isActive: query.isActive === undefined ? undefined : query.isActive === "true",
          search: query.search,
        });
        const counts = query.counts === "true" ? formCounts(deps.db, accountId, data.forms.map((f) => f.id)) : null;
        const list = data.forms.map(({ webhookToken, ...f }) => ({
          ...f,
          webhookUrl: webhookUrlFor(deps, request, webhookToken),
          ...(counts ? { counts: counts.get(f.id)! } : {}),
        }));
        return { status: "success", data: { ...data, forms: list } };
      },
      { permission: "forms.read", rateLimit: "api-key", query: FormListQuery, response: { 200: FormListAnswer }, detail: { summary: "List forms", tags: ["Forms"] } },
    )
    .post(
      "/",
      ({ request, body, set }) => {
        const form = deps.forms.create(authOf(request).accountId, body);
        set.status = 201;
        return { status: "success", message: "Form created", data: { form: presentForm(deps, request, form) } };
      },
      { permission: "forms.write", rateLimit: "api-key", body: FormCreateBody, response: { 201: FormAnswer }, detail: { summary: "Create a form (admin)", tags: ["Forms"], "x-errors": ["DUPLICATE_FORM_NAME"] } },
    )
    .get(
      "/:id",
      ({ request, params }) => {
        const form = deps.forms.get(authOf(request).accountId, params.id);
        return { status: "success", data: { form: presentForm(deps, request, form) } };
      },
      { permission: "forms.read", rateLimit: "api-key", params: IdParam, response: { 200: FormAnswer }, detail: { summary: "Get a form", tags: ["Forms"] } },
    )
    .get(
      "/:id/stats",
      ({ request, params, query }) => {
        const stats = deps.analytics.formStats(authOf(request).accountId, params.id, query, deps.clock());
        return { status: "success", data: { stats: { ...stats, spamBlocked: deps.spam.blocked(stats.formId) } } };
      },
      { permission: "forms.read", rateLimit: "api-key", params: IdParam, query: FormStatsQuery, response: { 200: FormStatsAnswer }, detail: { summary: "Form usage statistics", tags: ["Forms"] } },
    )
    .post(
      "/:id/test",
      ({ request, params, body }) => {
        const auth = authOf(request);
        const r = deps.testSubmissions.run(auth.accountId, params.id, body, { monthlyQuota: auth.account.monthlyQuota, actor: actorOf(auth) });
        const { message, ...data } = r;
        return { status: "success", message, data: { test: true, ...data } };
      },
      {
        // It may send a text (to the number the caller gives), so it needs what sending needs.
        permission: "messages.send", rateLimit: "api-key",
        params: IdParam,
        body: FormTestBody,
        response: { 200: FormTestAnswer },
        detail: {
          summary: "Try a form with sample values: the text a visitor would get, nothing saved; sendTo also texts it to your own number",
          tags: ["Forms"],
          "x-errors": ["RECIPIENT_OPTED_OUT"],
        },
      },
    )
    .post(
      "/:id/rotate-webhook",
      ({ request, params }) => {
        const form = deps.forms.rotateWebhook(authOf(request).accountId, params.id);
        const presented = presentForm(deps, request, form);
        return {
          status: "success",
          message: "The form has a new webhook address; the old one no longer accepts submissions",
          data: { formId: form.id, webhookUrl: presented.webhookUrl, form: presented },
        };
      },
      {
        permission: "forms.write", rateLimit: "api-key",
        params: IdParam,
        response: { 200: RotateWebhookResponse },
        detail: { summary: "Give the form a new webhook address; the old one answers 404 (admin)", tags: ["Forms"] },
      },
    )
    .get(
      "/:id/embed",
      ({ request, params }) => {
        const form = deps.forms.get(authOf(request).accountId, params.id);
        const p = resolveProtection(form.settings);
        const webhookUrl = webhookUrlFor(deps, request, form.webhookToken);
        const html = embedSnippet({ formName: form.name, webhookUrl, fields: form.fields, honeypotField: p.honeypotField, captcha: p.captcha, consentField: typeof form.settings.consentField === "string" ? form.settings.consentField : null });
        if (prefersHtml(request.headers.get("accept"))) {
          return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff" } });
        }
        return { status: "success", data: { formId: form.id, webhookUrl, html, addressSource: deps.serverAddress.publicAddress(stateOf(request).origin).source } };
      },
      {
        permission: "forms.embed", rateLimit: "api-key",
        params: IdParam,
        response: { 200: EmbedResponse },
        detail: {
          summary: "A ready-to-paste HTML <form> for the form's fields, honeypot and captcha (admin; Accept: text/html for the raw snippet)",
          tags: ["Forms"],
        },
      },
    )
    .put(
      "/:id",
      ({ request, params, body }) => {
        const form = deps.forms.update(authOf(request).accountId, params.id, body);
        return { status: "success", message: "Form updated", data: { form: presentForm(deps, request, form) } };
      },
      { permission: "forms.write", rateLimit: "api-key", params: IdParam, body: FormBody, response: { 200: FormAnswer }, detail: { summary: "Update a form (admin)", tags: ["Forms"], "x-errors": ["DUPLICATE_FORM_NAME"] } },
    )
    .delete(
      "/:id",
      ({ request, params }) => {
        const { deletedId } = deps.forms.delete(authOf(request).accountId, params.id);
        return { status: "success", message: "Form and all its messages, contacts and data deleted", data: { deletedId } };
      },
      { permission: "forms.write", rateLimit: "api-key", params: IdParam, response: { 200: FormDeleted }, detail: { summary: "Delete a form and everything it created (admin)", tags: ["Forms"] } },
    );
}
