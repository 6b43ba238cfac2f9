import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import { Deleted, IdParam } from "../models/common";
import { DeviceAnswer, DeviceListAnswer, DevicePatchBody, RegistrationTokenAnswer, RegistrationTokenBody } from "../models/devices";
import { routeAccess } from "../plugins/route-access";

const tags = ["Devices"];
const notFound = ["DEVICE_NOT_FOUND"];

/** The device registry and registration tokens (changes need an admin key: each route declares its permission). */
export function devicesRoutes(deps: AppDeps) {
  return new Elysia({ name: "devices-routes", prefix: "/v1/devices" })
    .use(routeAccess)
    .post(
      "/registration-tokens",
      ({ request, body, set }) => {
        set.status = 201;
        return { status: "success", data: deps.devices.createRegistrationToken(authOf(request).accountId, (body ?? {}) as Record<string, unknown>, stateOf(request).origin) };
      },
      {
        permission: "devices.write", rateLimit: "api-key",
        body: RegistrationTokenBody,
        response: { 201: RegistrationTokenAnswer },
        detail: { summary: "Create a registration token for the SMSGate app (shown once)", tags },
      },
    )
    .get("/", ({ request }) => ({ status: "success", data: deps.deviceRegistry.list(authOf(request).accountId) }), {
      permission: "devices.read", rateLimit: "api-key",
      response: { 200: DeviceListAnswer },
      detail: { summary: "Phones that poll: SMSGate apps and key-polling recipes (X-Device-Id)", tags },
    })
    .get("/:id", ({ request, params }) => ({ status: "success", data: { device: deps.deviceRegistry.get(authOf(request).accountId, params.id) } }), {
      permission: "devices.read", rateLimit: "api-key",
      params: IdParam,
      response: { 200: DeviceAnswer },
      detail: { summary: "One phone", tags, "x-errors": notFound },
    })
    .patch(
      "/:id",
      ({ request, params, body }) => ({ status: "success", data: { device: deps.deviceRegistry.update(authOf(request).accountId, params.id, body) } }),
      {
        permission: "devices.write", rateLimit: "api-key",
        params: IdParam,
        body: DevicePatchBody,
        response: { 200: DeviceAnswer },
        detail: { summary: "Rename a phone, set its send rate, or its and its SIMs' sending limits", tags, "x-errors": notFound },
      },
    )
    .delete("/:id", ({ request, params }) => ({ status: "success", data: deps.deviceRegistry.remove(authOf(request).accountId, params.id) }), {
      permission: "devices.write", rateLimit: "api-key",
      params: IdParam,
      response: { 200: Deleted },
      detail: { summary: "Remove a phone: its token stops working and its leases return to the queue", tags, "x-errors": notFound },
    });
}
