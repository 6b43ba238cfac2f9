import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { Deleted, IdParam } from "../models/common";
import {
  AutomationAnswer,
  AutomationBody,
  AutomationListAnswer,
  AutomationListQuery,
  AutomationUpdateBody,
  RunListAnswer,
  RunListQuery,
  RunParams,
  RunStopAnswer,
  StartAcceptedAnswer,
  StartBody,
  StartPreviewAnswer,
  StartQuery,
} from "../models/automations";
import { routeAccess } from "../plugins/route-access";

export function automationsRoutes(deps: AppDeps) {
  return new Elysia({ name: "automations-routes", prefix: "/v1/automations" })
    .use(routeAccess)
    .post(
      "/",
      ({ request, body, set }) => {
        set.status = 201;
        return { status: "success", message: "Automation created", data: { automation: deps.automations.create(authOf(request).accountId, body) } };
      },
      {
        permission: "automations.write", rateLimit: "api-key",
        body: AutomationBody,
        response: { 201: AutomationAnswer },
        detail: { summary: "Create an automation: timed texts after a form's submission that stop by themselves (admin)", tags: ["Automations"] },
      },
    )
    .get("/", ({ request, query }) => ({ status: "success", data: deps.automations.list(authOf(request).accountId, query) }), {
      permission: "automations.read", rateLimit: "api-key",
      query: AutomationListQuery,
      response: { 200: AutomationListAnswer },
      detail: { summary: "List automations with their counts of active, completed and stopped runs", tags: ["Automations"] },
    })
    .get("/:id", ({ request, params }) => ({ status: "success", data: { automation: deps.automations.get(authOf(request).accountId, params.id) } }), {
      permission: "automations.read", rateLimit: "api-key",
      params: IdParam,
      response: { 200: AutomationAnswer },
      detail: { summary: "An automation", tags: ["Automations"], "x-errors": ["AUTOMATION_NOT_FOUND"] },
    })
    .put(
      "/:id",
      ({ request, params, body }) => ({ status: "success", message: "Automation updated", data: { automation: deps.automations.update(authOf(request).accountId, params.id, body) } }),
      {
        permission: "automations.write", rateLimit: "api-key",
        params: IdParam,
        body: AutomationUpdateBody,
        response: { 200: AutomationAnswer },
        detail: { summary: "Change an automation (admin); isActive: false stops its active runs. Runs already started keep their scheduled texts", tags: ["Automations"], "x-errors": ["AUTOMATION_NOT_FOUND"] },
      },
    )
    .delete(
      "/:id",
      ({ request, params }) => ({ status: "success", message: "Automation deleted; its active runs are stopped", data: deps.automations.remove(authOf(request).accountId, params.id) }),
      {
        permission: "automations.write", rateLimit: "api-key",
        params: IdParam,
        response: { 200: Deleted },
        detail: { summary: "Delete an automation and stop its active runs (admin)", tags: ["Automations"], "x-errors": ["AUTOMATION_NOT_FOUND"] },
      },
    )
    .get("/:id/runs", ({ request, params, query }) => ({ status: "success", data: deps.automations.runs(authOf(request).accountId, params.id, query) }), {
      permission: "automations.read", rateLimit: "api-key",
      params: IdParam,
      query: RunListQuery,
      response: { 200: RunListAnswer },
      detail: { summary: "An automation's runs, newest first, with each step's time, message and state", tags: ["Automations"], "x-errors": ["AUTOMATION_NOT_FOUND"] },
    })
    .post(
      "/:id/runs/:runId/stop",
      ({ request, params }) => {
        const data = deps.automations.stopByHand(authOf(request).accountId, params.id, params.runId);
        return { status: "success", message: data.changed ? "Run stopped; its texts not sent yet are cancelled" : "The run was not going: nothing changed", data };
      },
      {
        permission: "automations.write", rateLimit: "api-key",
        params: RunParams,
        response: { 200: RunStopAnswer },
        detail: {
          summary: "Stop one contact's run by hand (admin): its texts not sent yet are cancelled (stoppedReason stopped-by-hand); a run no longer going is left as it is (changed: false)",
          tags: ["Automations"],
          "x-errors": ["AUTOMATION_NOT_FOUND", "AUTOMATION_RUN_NOT_FOUND"],
        },
      },
    )
    .post(
      "/:id/start",
      async ({ request, params, body, query, set }) => {
        const r = await deps.automations.start(authOf(request).accountId, params.id, body, { dryRun: query.dryRun === "true" });
        if (r.dryRun) return { status: "success", data: r };
        set.status = 202;
        return { status: "success", message: `Starting the automation for ${r.starting} contact(s)`, data: r };
      },
      {
        permission: "automations.write", rateLimit: "api-key",
        params: IdParam,
        body: StartBody,
        query: StartQuery,
        response: { 200: StartPreviewAnswer, 202: StartAcceptedAnswer },
        detail: {
          summary: "Start the automation for existing contacts (a broadcast's segment); dryRun counts who would start and who is skipped and why (admin)",
          tags: ["Automations"],
          "x-errors": ["AUTOMATION_NOT_FOUND", "AUTOMATION_INACTIVE", "FORM_NOT_FOUND"],
        },
      },
    );
}
