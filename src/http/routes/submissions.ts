import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { SubmissionAnswer, SubmissionExportFile, SubmissionExportQuery, SubmissionIdParam, SubmissionListAnswer, SubmissionListQuery } from "../models/submissions";
import { routeAccess } from "../plugins/route-access";

/**
 * Submissions as the team reads them: what each visitor sent, newest first (docs/api.md,
 * "Submissions"). The fixed path (export) is declared before `/:id`.
 */
export function submissionsRoutes(deps: AppDeps) {
  return new Elysia({ name: "submissions-routes", prefix: "/v1/submissions" })
    .use(routeAccess)
    .get(
      "/",
      ({ request, query }) => ({ status: "success" as const, data: deps.submissionInbox.list(authOf(request).accountId, query) }),
      {
        permission: "submissions.read", rateLimit: "api-key", query: SubmissionListQuery, response: SubmissionListAnswer,
        detail: { summary: "List submissions (what visitors sent), newest first", tags: ["Submissions"], "x-errors": ["FORM_NOT_FOUND", "CONTACT_NOT_FOUND"] },
      },
    )
    .get(
      "/export",
      ({ request, query }) => {
        const x = deps.submissionInbox.exportCsv(authOf(request).accountId, query);
        return new Response(x.body, {
          headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename=${x.filename}`, "Cache-Control": "no-store" },
        });
      },
      {
        permission: "contacts.export", rateLimit: "api-key", query: SubmissionExportQuery, response: { 200: SubmissionExportFile },
        detail: { summary: "Export submissions as CSV, streamed (admin)", tags: ["Submissions"], "x-errors": ["FORM_NOT_FOUND", "CONTACT_NOT_FOUND"] },
      },
    )
    .get(
      "/:id",
      ({ request, params }) => ({ status: "success" as const, data: { submission: deps.submissionInbox.get(authOf(request).accountId, params.id) } }),
      {
        permission: "submissions.read", rateLimit: "api-key", params: SubmissionIdParam, response: SubmissionAnswer,
        detail: { summary: "One submission", tags: ["Submissions"], "x-errors": ["SUBMISSION_NOT_FOUND"] },
      },
    )
    .post(
      "/:id/read",
      ({ request, params }) => ({ status: "success" as const, data: { submission: deps.submissionInbox.markRead(authOf(request).accountId, params.id) } }),
      {
        permission: "submissions.read", rateLimit: "api-key", params: SubmissionIdParam, response: SubmissionAnswer,
        detail: { summary: "Mark a submission read (the inbox's unread mark; the first time stays)", tags: ["Submissions"], "x-errors": ["SUBMISSION_NOT_FOUND"] },
      },
    );
}
