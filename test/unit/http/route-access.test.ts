/**
 * The route-access plugin's rule (src/http/plugins/route-access.ts, docs/api-decisions.md,
 * "Permissions declared on each route"), on an app of its own: a route that declares no permission
 * or a limiter that does not fit is named, and the route table refuses to start with it.
 */
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { accessProblem, routeAccessOf } from "../../../src/http/permissions";
import { routeAccess } from "../../../src/http/plugins/route-access";
import { RouteTable } from "../../../src/http/request-guard";

describe("every route declares who may call it", () => {
  test("a route without a declaration is named, and stops the server at start", () => {
    const app = new Elysia()
      .use(routeAccess)
      .get("/v1/declared", () => "", { permission: "forms.read", rateLimit: "api-key" })
      .get("/v1/forgotten", () => "")
      .post("/v1/half", () => "", { permission: "forms.write" })
      .put("/v1/misfit", () => "", { permission: "forms.write", rateLimit: "form" });
    expect(app.routes.map((r) => accessProblem(r))).toEqual([
      null,
      "GET /v1/forgotten declares no permission",
      "POST /v1/half declares no rate limit",
      'PUT /v1/misfit declares rate limit "form"; forms.write takes api-key, device, device-report',
    ]);
    expect(() => new RouteTable(() => app.routes, routeAccessOf).prepare()).toThrow(/GET \/v1\/forgotten declares no permission/);
  });});
