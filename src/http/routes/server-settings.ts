import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authOf, stateOf } from "../context";
import { HttpsStatusAnswer, PlainHttpFormsAnswer, PublicCertificateAnswer, PublicCertificateBody, ServerAddressAnswer, ServerAddressBody, ServerSettingsAnswer } from "../models/server-settings";
import { backupsView } from "../../services/backup-schedule";
import { routeAccess } from "../plugins/route-access";

/**
 * Server-wide settings (operator): `GET/PUT /v1/admin/server-address` (the address forms and
 * phones are given), `GET /v1/admin/https`; and for an account, `GET /v1/forms-over-http` (its
 * forms still posted to at the old http:// address).
 */
export function serverSettingsRoutes(deps: AppDeps) {
  return new Elysia({ name: "server-settings-routes" })
    .use(routeAccess)
    .get("/v1/admin/server-address", ({ request }) => ({ status: "success" as const, data: deps.serverAddress.get(stateOf(request).origin) }), {
      permission: "operator", rateLimit: "api-key",
      response: { 200: ServerAddressAnswer },
      detail: {
        summary: "The address forms and phones are given (operator)",
        description: "--public-url wins over the saved address; with neither, the address each request came in on is used (`effective.source` = request).",
        tags: ["Operations"],
      },
    })
    .put(
      "/v1/admin/server-address",
      ({ request, body }) => ({
        status: "success" as const,
        message: body.url ? "Server address saved" : "Server address cleared",
        data: deps.serverAddress.set(body.url, stateOf(request).origin),
      }),
      {
        permission: "operator", rateLimit: "api-key",
        body: ServerAddressBody,
        response: { 200: ServerAddressAnswer },
        detail: {
          "x-errors": ["VALIDATION_ERROR", "INVALID_STATE"],
          summary: "Set (or with null clear) the address forms and phones are given (operator)",
          description: "Webhook addresses, embed snippets, QR codes and the phone wizard use it from now on. Refused with INVALID_STATE while the server runs with --public-url (the flag wins).",
          tags: ["Operations"],
        },
      },
    )
    .get(
      "/v1/admin/settings",
      ({ request }) => ({
        status: "success" as const,
        data: {
          serverAddress: deps.serverAddress.get(stateOf(request).origin),
          https: deps.httpsStatus.get(),
          replication: deps.replicationSettings.get(),
          backups: backupsView(deps.backupSchedule, deps.config.backupKeep),
        },
      }),
      {
        permission: "operator", rateLimit: "api-key",
        response: { 200: ServerSettingsAnswer },
        detail: {
          summary: "Every server-wide setting in one answer: server address, HTTPS, replication, backups (operator)",
          description: "What the dashboard's Settings page shows an operator, read in one request; each part is also its own route.",
          tags: ["Operations"],
        },
      },
    )
    .get("/v1/admin/https", () => ({ status: "success" as const, data: deps.httpsStatus.get() }), {
      permission: "operator", rateLimit: "api-key",
      response: { 200: HttpsStatusAnswer },
      detail: { summary: "HTTPS on or off, its ports and the certificate's expiry (operator)", tags: ["Operations"] },
    })
    .get("/v1/admin/certificate", () => ({ status: "success" as const, data: deps.publicCertificate.view() }), {
      permission: "operator", rateLimit: "api-key",
      response: { 200: PublicCertificateAnswer },
      detail: {
        summary: "The public certificate: names, state, expiry, last failure (operator)",
        description: "A certificate every browser trusts, from an ACME CA (Let's Encrypt), for --domain or the names saved here. Renewed 30 days before expiry without a restart.",
        tags: ["Operations"],
      },
    })
    .put(
      "/v1/admin/certificate",
      ({ body }) => ({
        status: "success" as const,
        message: body.domains ? "Getting a certificate" : "Public certificate turned off",
        data: deps.publicCertificate.set({ domains: body.domains, email: body.email }),
      }),
      {
        permission: "operator", rateLimit: "api-key",
        body: PublicCertificateBody,
        response: { 200: PublicCertificateAnswer },
        detail: {
          "x-errors": ["VALIDATION_ERROR", "INVALID_STATE"],
          summary: "Get a certificate for these names (operator)",
          description:
            "Saves the names and asks the CA at once (watch `state` and `lastError` with GET). The CA checks http://<name>/ on port 80 from the internet: the name must point to this server and port 80 reach its plain-HTTP port. Once issued, HTTPS starts on `httpsPort` and plain HTTP answers 308 to it. Refused with INVALID_STATE while the server runs with --domain.",
          tags: ["Operations"],
        },
      },
    )
    .get("/v1/forms-over-http", ({ request }) => ({ status: "success" as const, data: deps.plainHttpPosts.list(authOf(request).accountId) }), {
      permission: "forms.read", rateLimit: "api-key",
      response: { 200: PlainHttpFormsAnswer },
      detail: {
        summary: "Forms posted to at their old http:// address in the last 30 days",
        description: "With HTTPS on, the old plain-HTTP port answers such posts with 308 to HTTPS; the website should be given the new address (the form's webhookUrl or embed code).",
        tags: ["Forms"],
      },
    });
}
