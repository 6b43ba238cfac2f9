import { Elysia, t } from "elysia";
import type { AppDeps } from "../../../deps";
import { authOf } from "../../context";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

/**
 * SMSGate's devices: the account's phones as a bare array, and removing one (204). Removing a
 * phone is what DELETE /v1/devices/<id> does: its token stops working and the messages it held go
 * back to the queue for the account's other phones (docs/api-decisions.md, "SMSGate third-party
 * API: devices, health, settings").
 */
export function thirdPartyDevicesRoutes(deps: AppDeps) {
  return new Elysia({ name: "thirdparty-devices", prefix: "/devices" })
    .use(routeAccess)
    .get("", ({ request }) => deps.deviceRegistry.smsgateDevices(authOf(request).accountId), {
      permission: "devices.read", rateLimit: "api-key",
      detail: { ...hidden, summary: "List phones (SMSGate)" },
    })
    .delete(
      "/:id",
      ({ request, params }) => {
        deps.deviceRegistry.remove(authOf(request).accountId, params.id);
        return new Response(null, { status: 204 });
      },
      {
        permission: "devices.write", rateLimit: "api-key",
        params: t.Object({ id: t.String({ minLength: 1, maxLength: 200 }) }),
        detail: { ...hidden, summary: "Remove a phone (SMSGate): its messages go back to the queue" },
      },
    );
}
