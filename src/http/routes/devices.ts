import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf } from "../context";
import { IdParam } from "../models/common";
import { DevicePatchBody, DeviceView, RegistrationTokenBody } from "../models/devices";

const tags = ["Devices"];

/** The device registry and registration tokens (admin; see ADMIN_RULES in access.ts). */
export function devicesRoutes(deps: AppDeps) {
  return new Elysia({ name: "devices-routes", prefix: "/v1/devices" })
    .post(
      "/registration-tokens",
      ({ request, body, set }) => {
        set.status = 201;
        return { status: "success", data: deps.devices.createRegistrationToken(authOf(request).accountId, (body ?? {}) as Record<string, unknown>) };
      },
      {
        body: RegistrationTokenBody,
        response: { 201: t.Object({ status: t.Literal("success"), data: t.Object({ token: t.String(), reusable: t.Boolean(), expiresAt: t.String() }) }) },
        detail: { summary: "Create a registration token for the SMSGate app (shown once)", tags },
      },
    )
    .get("/", ({ request }) => ({ status: "success", data: deps.devices.list(authOf(request).accountId) }), {
      response: { 200: t.Object({ status: t.Literal("success"), data: t.Object({ devices: t.Array(DeviceView) }) }) },
      detail: { summary: "Phones that poll: SMSGate apps and key-polling recipes (X-Device-Id)", tags },
    })
    .get("/:id", ({ request, params }) => ({ status: "success", data: { device: deps.devices.get(authOf(request).accountId, params.id) } }), {
      params: IdParam,
      response: { 200: t.Object({ status: t.Literal("success"), data: t.Object({ device: DeviceView }) }) },
      detail: { summary: "One phone", tags },
    })
    .patch(
      "/:id",
      ({ request, params, body }) => ({ status: "success", data: { device: deps.devices.update(authOf(request).accountId, params.id, body) } }),
      {
        params: IdParam,
        body: DevicePatchBody,
        response: { 200: t.Object({ status: t.Literal("success"), data: t.Object({ device: DeviceView }) }) },
        detail: { summary: "Rename a phone or set its send rate", tags },
      },
    )
    .delete("/:id", ({ request, params }) => ({ status: "success", data: deps.devices.remove(authOf(request).accountId, params.id) }), {
      params: IdParam,
      response: { 200: t.Object({ status: t.Literal("success"), data: t.Object({ deletedId: t.String() }) }) },
      detail: { summary: "Remove a phone: its token stops working and its leases return to the queue", tags },
    });
}
