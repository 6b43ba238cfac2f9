import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { IdParam } from "../models/common";
import {
  DeliveryListAnswer,
  DeliveryListQuery,
  EndpointAnswer,
  EndpointCreateBody,
  EndpointDeletedAnswer,
  EndpointListAnswer,
  EndpointSecretAnswer,
  EndpointUpdateBody,
  RedeliverAnswer,
  RedeliverBody,
  TestAnswer,
} from "../models/events";
import { routeAccess } from "../plugins/route-access";

const TAGS = ["Events"];

/** Webhook endpoints, the delivery log, redelivery and the test ping (admin only: endpoints hold signing secrets). */
export function eventsRoutes(deps: AppDeps) {
  const svc = deps.eventEndpoints;
  return new Elysia({ name: "events-routes" })
    .use(routeAccess)
    .get("/v1/webhook-endpoints", ({ request }) => ({ status: "success" as const, data: { endpoints: svc.list(authOf(request).accountId) } }), {
      permission: "event-endpoints.read", rateLimit: "api-key",
      response: { 200: EndpointListAnswer },
      detail: { summary: "List webhook endpoints (admin)", tags: TAGS },
    })
    .post(
      "/v1/webhook-endpoints",
      async ({ request, body, set }) => {
        const endpoint = await svc.create(authOf(request).accountId, body);
        set.status = 201;
        return { status: "success" as const, message: "Webhook endpoint created; store its secret now, it is not shown again", data: { endpoint } };
      },
      { permission: "event-endpoints.write", rateLimit: "api-key", body: EndpointCreateBody, response: { 201: EndpointSecretAnswer }, detail: { summary: "Create a webhook endpoint; answers its signing secret once (admin)", tags: TAGS } },
    )
    .get("/v1/webhook-endpoints/:id", ({ request, params }) => ({ status: "success" as const, data: { endpoint: svc.get(authOf(request).accountId, params.id) } }), {
      permission: "event-endpoints.read", rateLimit: "api-key",
      params: IdParam,
      response: { 200: EndpointAnswer },
      detail: { summary: "Get a webhook endpoint (admin)", tags: TAGS },
    })
    .put(
      "/v1/webhook-endpoints/:id",
      async ({ request, params, body }) => ({
        status: "success" as const,
        message: "Webhook endpoint updated",
        data: { endpoint: await svc.update(authOf(request).accountId, params.id, body) },
      }),
      { permission: "event-endpoints.write", rateLimit: "api-key", params: IdParam, body: EndpointUpdateBody, response: { 200: EndpointAnswer }, detail: { summary: "Change a webhook endpoint (fields given are changed) (admin)", tags: TAGS } },
    )
    .delete(
      "/v1/webhook-endpoints/:id",
      ({ request, params }) => ({ status: "success" as const, message: "Webhook endpoint deleted", data: svc.delete(authOf(request).accountId, params.id) }),
      { permission: "event-endpoints.write", rateLimit: "api-key", params: IdParam, response: { 200: EndpointDeletedAnswer }, detail: { summary: "Delete a webhook endpoint and its delivery log (admin)", tags: TAGS } },
    )
    .post(
      "/v1/webhook-endpoints/:id/rotate-secret",
      ({ request, params }) => ({
        status: "success" as const,
        message: "New secret made; the old one keeps signing beside it for 24 hours",
        data: { endpoint: svc.rotateSecret(authOf(request).accountId, params.id) },
      }),
      { permission: "event-endpoints.write", rateLimit: "api-key", params: IdParam, response: { 200: EndpointSecretAnswer }, detail: { summary: "Rotate the signing secret; answers the new secret once (admin)", tags: TAGS } },
    )
    .get(
      "/v1/webhook-endpoints/:id/deliveries",
      ({ request, params, query }) => ({ status: "success" as const, data: svc.deliveries(authOf(request).accountId, params.id, query) }),
      { permission: "event-endpoints.read", rateLimit: "api-key", params: IdParam, query: DeliveryListQuery, response: { 200: DeliveryListAnswer }, detail: { summary: "The endpoint's delivery log, newest first (admin)", tags: TAGS } },
    )
    .post(
      "/v1/webhook-endpoints/:id/test",
      ({ request, params, set }) => {
        set.status = 202;
        return { status: "success" as const, message: "Test event queued", data: svc.test(authOf(request).accountId, params.id) };
      },
      { permission: "event-endpoints.write", rateLimit: "api-key", params: IdParam, response: { 202: TestAnswer }, detail: { summary: "Send a ping event to this endpoint (admin)", tags: TAGS } },
    )
    .post(
      "/v1/events/:id/redeliver",
      ({ request, params, body, set }) => {
        set.status = 202;
        return { status: "success" as const, message: "Event queued for delivery", data: svc.redeliver(authOf(request).accountId, params.id, body ?? undefined) };
      },
      { permission: "event-endpoints.write", rateLimit: "api-key", params: IdParam, body: RedeliverBody, response: { 202: RedeliverAnswer }, detail: { summary: "Deliver an event again (admin)", tags: TAGS } },
    );
}
