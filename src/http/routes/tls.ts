import { Elysia } from "elysia";
import { existsSync, readFileSync } from "node:fs";
import type { AppDeps } from "../../deps";
import { AppError, errorResponse } from "../../errors";
import { tlsPathsFor } from "../../tls/local-ca";
import { t } from "elysia";
import { Media } from "../models/common";
import { routeAccess } from "../plugins/route-access";

export const CA_CONTENT_TYPE = "application/x-x509-ca-cert";

/**
 * GET /ca.crt: the local CA's certificate (PEM) for phones to install, or a 404 saying how to make
 * one. No key: a CA certificate is public. Also answered by the plain-HTTP redirect listener, so a
 * phone can fetch it before it trusts the HTTPS one.
 */
export function caCertificateResponse(dbPath: string): Response {
  const path = dbPath === ":memory:" ? undefined : tlsPathsFor(dbPath).caCert;
  if (!path || !existsSync(path)) {
    return errorResponse(
      new AppError("NOT_FOUND", { message: "This server has no local certificate authority; create one with: textwire tls init", details: { resource: "ca.crt" } }),
    );
  }
  return new Response(readFileSync(path), {
    headers: { "Content-Type": CA_CONTENT_TYPE, "Content-Disposition": 'attachment; filename="textwire-ca.crt"', "Cache-Control": "no-cache" },
  });
}

export function tlsRoutes(deps: AppDeps) {
  return new Elysia({ name: "tls-routes" })
    .use(routeAccess).get("/ca.crt", () => caCertificateResponse(deps.config.db), {
    permission: "public", rateLimit: "none",
    response: { 200: Media({ [CA_CONTENT_TYPE]: t.String({ description: "PEM certificate" }) }, { description: "The local CA certificate", headers: ["Content-Disposition"] }) },
    detail: {
      summary: "The local CA certificate to install on phones (no key)",
      description: "Exists after `textwire tls init`. PEM, `application/x-x509-ca-cert`; 404 `NOT_FOUND` when there is no local CA.",
      tags: ["Operations"],
      responses: {
        200: { description: "The CA certificate (PEM)", content: { [CA_CONTENT_TYPE]: { schema: { type: "string" } } } },
        404: { description: "No local CA on this server", content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } },
      },
    },
  });
}
