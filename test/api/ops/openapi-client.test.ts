/**
 * The published API document is true: a client generated from it (openapi-typescript types in
 * web/api-schema.gen.ts, shared with the dashboard and compiled by `tsc --strict` as part of `npm test`, + openapi-fetch)
 * calls every operation of the live document against a real server, and every answer is checked
 * against the schema, status and headers the document gives for it (ajv). The live document is
 * also linted with @redocly/cli (0 errors).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import createClient, { type Client, type Middleware } from "openapi-fetch";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { paths } from "../../../web/api-schema.gen";
import { expectStatus, startTestServer, type TestServer } from "../../helpers/server";
import { updateAccount } from "../../helpers/accounts";

type Json = Record<string, any>;
type Api = Client<paths>;

let s: TestServer;
let doc: Json;
let dir: string;
let api: Api;
let anon: Api;
let lint: Promise<{ code: number; out: string }>;

/** Every answer the clients received, cloned, with the request that produced it. */
const seen: Array<{ method: string; url: string; response: Response }> = [];

const REDOCLY = join(import.meta.dir, "../../../node_modules/@redocly/cli/bin/cli.js");

beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true }); // the webhook-endpoint cases point at this machine
  // One call of every operation, some of them several times, within a minute: more than a plan's burst.
  updateAccount(s, s.accountId, { apiLimitPerHour: 100_000, apiBurstPerMinute: 10_000 });
  doc = await expectStatus(await fetch(`${s.base}/openapi.json`), 200);
  dir = mkdtempSync(join(tmpdir(), "textwire-openapi-"));
  writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
  // Lint runs in its own process while the calls below are made.
  const proc = Bun.spawn([Bun.which("node") ?? process.execPath, REDOCLY, "lint", join(dir, "openapi.json"), "--format=json"], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1", CI: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  lint = (async () => {
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    return { code: await proc.exited, out: out + err };
  })();
  const record: Middleware = {
    onResponse({ request, response }) {
      seen.push({ method: request.method, url: request.url, response: response.clone() as unknown as Response });
      return undefined;
    },
  };
  api = createClient<paths>({ baseUrl: s.url, headers: { Authorization: `Bearer ${s.adminKey}` } });
  anon = createClient<paths>({ baseUrl: s.url });
  api.use(record);
  anon.use(record);
});
afterAll(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// One case per operation of the document, run in this order; each makes its calls through the
// generated client and states the statuses it expects. Ids made by one case serve the next.

const ctx = {} as {
  formId: string;
  messageId: string;
  manualMessageId: string;
  leaseToken: string;
  contactId: string;
  broadcastId: string;
  automationId: string;
  endpointId: string;
  sessionCookie: string;
  csrfToken: string;
  sessionId: string;
  keyId: string;
  deviceId: string;
  keywordReplyId: string;
};

function expectHttp(r: { response: Response }, status: number) {
  if (r.response.status !== status) throw new Error(`expected HTTP ${status}, got ${r.response.status}`);
}

const CASES: Record<string, () => Promise<void>> = {
  "POST /v1/forms": async () => {
    const r = await api.POST("/v1/forms", {
      body: {
        name: "Contact us",
        messageTemplate: "Hi {{firstName}}, thanks for contacting {{formName}}!",
        fields: [
          { name: "firstName", type: "text", label: "First name" },
          { name: "company", type: "text", validation: { maxLength: 100 } },
        ],
        settings: { delayMinutes: 0, timezone: "UTC" },
      },
    });
    expectHttp(r, 201);
    ctx.formId = r.data!.data.form.id;
    expectHttp(await api.POST("/v1/forms", { body: { name: "Contact us", messageTemplate: "x", fields: [{ name: "a", type: "text" }] } }), 409);
  },
  "GET /v1/forms": async () => {
    const r = await api.GET("/v1/forms", { params: { query: { page: 1, limit: 10, isActive: true } } });
    expectHttp(r, 200);
    expect(r.data!.data.forms.map((f) => f.id)).toContain(ctx.formId);
    const c = await api.GET("/v1/forms", { params: { query: { counts: true } } });
    expectHttp(c, 200);
    expect(c.data!.data.forms.find((f) => f.id === ctx.formId)?.counts?.messages).toBeGreaterThanOrEqual(0);
  },
  "GET /v1/forms/{id}": async () => {
    const r = await api.GET("/v1/forms/{id}", { params: { path: { id: ctx.formId } } });
    expectHttp(r, 200);
    expect(r.data!.data.form.webhookUrl).toEndWith(`/v1/forms/${ctx.formId}/webhook`);
    expectHttp(await api.GET("/v1/forms/{id}", { params: { path: { id: crypto.randomUUID() } } }), 404);
  },
  "GET /v1/forms/{id}/stats": async () => {
    expectHttp(await api.GET("/v1/forms/{id}/stats", { params: { path: { id: ctx.formId }, query: { period: "7d" } } }), 200);
  },
  "PUT /v1/forms/{id}": async () => {
    const r = await api.PUT("/v1/forms/{id}", { params: { path: { id: ctx.formId } }, body: { description: "Website form" } });
    expectHttp(r, 200);
    expect(r.data!.data.form.description).toBe("Website form");
  },
  "OPTIONS /v1/forms/{id}/webhook": async () => {
    expectHttp(await anon.OPTIONS("/v1/forms/{id}/webhook", { params: { path: { id: ctx.formId } } }), 204);
  },
  "POST /v1/forms/{id}/webhook": async () => {
    const post = () =>
      anon.POST("/v1/forms/{id}/webhook", {
        params: { path: { id: ctx.formId }, header: { "Idempotency-Key": "order-1" } },
        body: { phoneNumber: "+14155550123", firstName: "Ann", company: "Acme" },
      });
    const r = await post();
    expectHttp(r, 200);
    ctx.messageId = r.data!.data.messageId!;
    ctx.contactId = r.data!.data.contactId;
    const again = await post();
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    const form = await anon.POST("/v1/forms/{id}/webhook", {
      params: { path: { id: ctx.formId } },
      body: { phoneNumber: "+14155550124", firstName: "Bo" },
      bodySerializer: (b) => new URLSearchParams(b as Record<string, string>).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectHttp(form, 200);
    expectHttp(await anon.POST("/v1/forms/{id}/webhook", { params: { path: { id: crypto.randomUUID() } }, body: { phoneNumber: "+14155550125" } }), 404);
  },
  "GET /v1/messages": async () => {
    const r = await api.GET("/v1/messages", { params: { query: { status: "queued", sortBy: "createdAt", order: "asc" } } });
    expectHttp(r, 200);
    expect(r.data!.data.summary.queued).toBeGreaterThanOrEqual(1);
  },
  "GET /v1/messages/{id}": async () => {
    const r = await api.GET("/v1/messages/{id}", { params: { path: { id: ctx.messageId } } });
    expectHttp(r, 200);
    expect(r.data!.data.message.status).toBe("queued");
  },
  "POST /v1/messages": async () => {
    const r = await api.POST("/v1/messages", { body: { phoneNumber: "+14155550126", content: "Your order is ready", priority: "low" } });
    expectHttp(r, 201);
    ctx.manualMessageId = r.data!.data.messageId;
  },
  "GET /v1/messages/analytics": async () => {
    expectHttp(await api.GET("/v1/messages/analytics", { params: { query: { period: "30d" } } }), 200);
  },
  "POST /v1/messages/next": async () => {
    const r = await api.POST("/v1/messages/next", { body: { limit: 1, deviceId: "phone-1" } });
    expectHttp(r, 200);
    const [leased] = r.data!.data.messages;
    expect(leased.id).toBe(ctx.messageId);
    ctx.leaseToken = leased.leaseToken;
  },
  "GET /v1/messages/next": async () => {
    // Two messages are still due (the form post and the manual one), then none: 200, 200, 204.
    for (const status of [200, 200, 204]) expectHttp(await api.GET("/v1/messages/next", { params: { query: { wait: 0, deviceId: "phone-2" } } }), status);
  },
  "PUT /v1/messages/{id}/status": async () => {
    const r = await api.PUT("/v1/messages/{id}/status", {
      params: { path: { id: ctx.messageId } },
      body: { status: "sent", sentAt: new Date().toISOString(), leaseToken: ctx.leaseToken },
    });
    expectHttp(r, 200);
    expect(r.data!.data.status).toBe("sent");
    expectHttp(await api.PUT("/v1/messages/{id}/status", { params: { path: { id: ctx.messageId } }, body: { status: "queued" } }), 400);
  },
  "PUT /v1/messages/bulk": async () => {
    const r = await api.PUT("/v1/messages/bulk", { body: { messageIds: [ctx.manualMessageId, ctx.messageId], status: "cancelled" } });
    expectHttp(r, 200);
    expect(r.data!.data.errors.map((e) => e.id)).toEqual([ctx.messageId]);
  },
  "DELETE /v1/messages/{id}": async () => {
    const q = await api.POST("/v1/messages", { body: { phoneNumber: "+14155550127", content: "Later", scheduledFor: new Date(Date.now() + 86_400_000).toISOString() } });
    expectHttp(await api.DELETE("/v1/messages/{id}", { params: { path: { id: q.data!.data.messageId } } }), 200);
    expectHttp(await api.DELETE("/v1/messages/{id}", { params: { path: { id: ctx.messageId } } }), 409);
  },
  "POST /v1/contacts": async () => {
    const r = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550128", firstName: "Cy", tags: ["vip"], customFields: { plan: "gold" } } });
    expectHttp(r, 201);
    expect(r.data!.data.contact.tags).toEqual(["vip"]);
  },
  "GET /v1/contacts": async () => {
    const r = await api.GET("/v1/contacts", { params: { query: { status: "new", sortBy: "firstName", order: "asc", limit: 10 } } });
    expectHttp(r, 200);
  },
  "GET /v1/contacts/{id}": async () => {
    expectHttp(await api.GET("/v1/contacts/{id}", { params: { path: { id: ctx.contactId } } }), 200);
  },
  "GET /v1/contacts/{id}/messages": async () => {
    const r = await api.GET("/v1/contacts/{id}/messages", { params: { path: { id: ctx.contactId } } });
    expectHttp(r, 200);
    expect(r.data!.data.total).toBeGreaterThanOrEqual(1);
  },
  "PUT /v1/contacts/{id}": async () => {
    expectHttp(await api.PUT("/v1/contacts/{id}", { params: { path: { id: ctx.contactId } }, body: { status: "responded", notes: "called back" } }), 200);
  },
  "PUT /v1/contacts/bulk": async () => {
    const r = await api.PUT("/v1/contacts/bulk", { body: { contactIds: [ctx.contactId], updates: { status: "converted" } } });
    expectHttp(r, 200);
    expect(r.data!.data.updated).toBe(1);
  },
  "POST /v1/contacts/search": async () => {
    expectHttp(await api.POST("/v1/contacts/search", { body: { customFields: { plan: "gold" } } }), 200);
  },
  "POST /v1/contacts/{id}/opt-out": async () => {
    const c = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550171" } });
    const r = await api.POST("/v1/contacts/{id}/opt-out", { params: { path: { id: c.data!.data.contact.id } }, body: { reason: "Phoned to say stop" } });
    expectHttp(r, 200);
    expect(r.data!.data.contact.optedOut).toBe(true);
  },
  "POST /v1/contacts/{id}/opt-in": async () => {
    const c = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550172", optedOut: true } });
    const id = c.data!.data.contact.id;
    expectHttp(await api.POST("/v1/contacts/{id}/opt-in", { params: { path: { id } }, body: {} }), 400);
    const r = await api.POST("/v1/contacts/{id}/opt-in", { params: { path: { id } }, body: { reason: "Asked in the shop" } });
    expectHttp(r, 200);
    expect(r.data!.data.changed).toBe(true);
  },
  "GET /v1/contacts/{id}/consent-history": async () => {
    const c = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550173", optedOut: true } });
    const r = await api.GET("/v1/contacts/{id}/consent-history", { params: { path: { id: c.data!.data.contact.id } } });
    expectHttp(r, 200);
    expect(r.data!.data.entries[0]!.action).toBe("opted_out");
  },
  "POST /v1/contacts/bulk/opt-out": async () => {
    const c = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550174" } });
    const r = await api.POST("/v1/contacts/bulk/opt-out", { body: { contactIds: [c.data!.data.contact.id], reason: "Moved away" } });
    expectHttp(r, 200);
    expect(r.data!.data.optedOut).toBe(1);
  },
  "POST /v1/contacts/bulk/delete": async () => {
    const c = await api.POST("/v1/contacts", { body: { phoneNumber: "+14155550175" } });
    const r = await api.POST("/v1/contacts/bulk/delete", { body: { contactIds: [c.data!.data.contact.id] } });
    expectHttp(r, 200);
    expect(r.data!.data.deleted).toBe(1);
  },
  "POST /v1/messages/inbound": async () => {
    const text = { from: "+14155550123", body: "Yes please", deviceId: "phone-1", externalId: "sms-1" };
    const r = await api.POST("/v1/messages/inbound", { body: text });
    expectHttp(r, 201);
    expect(r.data!.data.message.contactId).toBe(ctx.contactId);
    expectHttp(await api.POST("/v1/messages/inbound", { body: text }), 200); // the phone's retry: stored once
  },
  "GET /v1/inbound": async () => {
    const r = await api.GET("/v1/inbound", { params: { query: { contactId: ctx.contactId } } });
    expectHttp(r, 200);
    expect(r.data!.data.messages.length).toBe(1);
  },
  "POST /v1/broadcasts": async () => {
    const body = { name: "Spring offer", content: "Hi {{firstName}}, 10% off this week", segment: { tags: ["vip"] } };
    const dry = await api.POST("/v1/broadcasts", { params: { query: { dryRun: true } }, body });
    expectHttp(dry, 200);
    const r = await api.POST("/v1/broadcasts", { body: { ...body, scheduledFor: new Date(Date.now() + 86_400_000).toISOString() } });
    expectHttp(r, 202);
    const accepted = r.data!.data;
    if (!("broadcastId" in accepted)) throw new Error("202 without broadcastId");
    ctx.broadcastId = accepted.broadcastId;
  },
  "GET /v1/broadcasts": async () => {
    expectHttp(await api.GET("/v1/broadcasts", {}), 200);
  },
  "GET /v1/broadcasts/{id}": async () => {
    expectHttp(await api.GET("/v1/broadcasts/{id}", { params: { path: { id: ctx.broadcastId } } }), 200);
  },
  "POST /v1/broadcasts/{id}/cancel": async () => {
    expectHttp(await api.POST("/v1/broadcasts/{id}/cancel", { params: { path: { id: ctx.broadcastId } } }), 200);
  },
  "POST /v1/automations": async () => {
    const r = await api.POST("/v1/automations", {
      body: { name: "Thanks and review", formId: ctx.formId, steps: [{ template: "Thanks {{firstName}}! How did we do?", delay: "2d", sendAt: "10:00" }], stopOnStatus: ["converted"] },
    });
    expectHttp(r, 201);
    ctx.automationId = r.data!.data.automation.id;
    expectHttp(await api.POST("/v1/automations", { body: { name: "x", formId: ctx.formId, steps: [{ template: "x", relativeTo: "firstName" }] } }), 400);
  },
  "GET /v1/automations": async () => {
    expectHttp(await api.GET("/v1/automations", {}), 200);
  },
  "GET /v1/automations/{id}": async () => {
    expectHttp(await api.GET("/v1/automations/{id}", { params: { path: { id: ctx.automationId } } }), 200);
  },
  "PUT /v1/automations/{id}": async () => {
    expectHttp(await api.PUT("/v1/automations/{id}", { params: { path: { id: ctx.automationId } }, body: { name: "Thanks, then a review" } }), 200);
  },
  "POST /v1/automations/{id}/start": async () => {
    const dry = await api.POST("/v1/automations/{id}/start", { params: { path: { id: ctx.automationId }, query: { dryRun: true } }, body: { segment: { status: "new" } } });
    expectHttp(dry, 200);
    expectHttp(await api.POST("/v1/automations/{id}/start", { params: { path: { id: ctx.automationId } }, body: {} }), 202);
  },
  "GET /v1/automations/{id}/runs": async () => {
    expectHttp(await api.GET("/v1/automations/{id}/runs", { params: { path: { id: ctx.automationId }, query: { status: "active" } } }), 200);
  },
  "POST /v1/automations/{id}/runs/{runId}/stop": async () => {
    await s.running.deps.automations.idle(); // arrange: the automation engine's background pass has run (no request says when it has)
    const runs = await api.GET("/v1/automations/{id}/runs", { params: { path: { id: ctx.automationId }, query: { status: "active" } } });
    expectHttp(runs, 200);
    const runId = runs.data!.data.runs[0].id;
    const r = await api.POST("/v1/automations/{id}/runs/{runId}/stop", { params: { path: { id: ctx.automationId, runId } } });
    expectHttp(r, 200);
  },
  "DELETE /v1/automations/{id}": async () => {
    expectHttp(await api.DELETE("/v1/automations/{id}", { params: { path: { id: ctx.automationId } } }), 200);
    expectHttp(await api.GET("/v1/automations/{id}", { params: { path: { id: ctx.automationId } } }), 404);
  },
  "GET /v1/conversations": async () => {
    expectHttp(await api.GET("/v1/conversations", {}), 200);
  },
  "GET /v1/conversations/{contactId}": async () => {
    expectHttp(await api.GET("/v1/conversations/{contactId}", { params: { path: { contactId: ctx.contactId } } }), 200);
  },
  "GET /v1/submissions": async () => {
    const r = await api.GET("/v1/submissions", { params: { query: { limit: 5 } } });
    expectHttp(r, 200);
    expect(Array.isArray(r.data!.data.submissions)).toBe(true);
  },
  "GET /v1/submissions/export": async () => {
    expectHttp(await api.GET("/v1/submissions/export", { parseAs: "text" }), 200);
  },
  "GET /v1/submissions/{id}": async () => {
    const first = (await api.GET("/v1/submissions", {})).data!.data.submissions[0];
    if (first) expectHttp(await api.GET("/v1/submissions/{id}", { params: { path: { id: first.id } } }), 200);
    expectHttp(await api.GET("/v1/submissions/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } }), 404);
  },
  "POST /v1/submissions/{id}/read": async () => {
    const first = (await api.GET("/v1/submissions", {})).data!.data.submissions[0];
    if (first) expectHttp(await api.POST("/v1/submissions/{id}/read", { params: { path: { id: first.id } } }), 200);
    expectHttp(await api.POST("/v1/submissions/{id}/read", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } }), 404);
  },
  "GET /v1/people/me": async () => {
    // A key has no profile: a person's session does.
    expectHttp(await api.GET("/v1/people/me", {}), 404);
  },
  "PATCH /v1/people/me": async () => {
    expectHttp(await api.PATCH("/v1/people/me", { body: { phoneNumber: "+14155550199" } }), 404);
  },
  "POST /v1/conversations/{contactId}/read": async () => {
    expectHttp(await api.POST("/v1/conversations/{contactId}/read", { params: { path: { contactId: ctx.contactId } } }), 200);
  },
  "GET /v1/account/settings": async () => {
    expectHttp(await api.GET("/v1/account/settings", {}), 200);
  },
  "GET /v1/account/smsgate-clients": async () => {
    expectHttp(await api.GET("/v1/account/smsgate-clients", {}), 200);
  },
  "PUT /v1/account/smsgate-clients": async () => {
    expectHttp(await api.PUT("/v1/account/smsgate-clients", { body: { recipientLimitPerDay: 5, quietHours: { start: "21:00", end: "08:00" } } }), 200);
  },
  "GET /v1/account/profile": async () => {
    expectHttp(await api.GET("/v1/account/profile", {}), 200);
  },
  "PUT /v1/account/profile": async () => {
    expectHttp(await api.PUT("/v1/account/profile", { body: { name: "Rosa's Bakery", country: "US", timeZone: "America/New_York" } }), 200);
  },
  "GET /v1/forms-over-http": async () => {
    expectHttp(await api.GET("/v1/forms-over-http", {}), 200);
  },
  "GET /v1/admin/server-address": async () => {
    expectHttp(await api.GET("/v1/admin/server-address", {}), 200);
  },
  "PUT /v1/admin/server-address": async () => {
    expectHttp(await api.PUT("/v1/admin/server-address", { body: { url: "https://x.example/with/a/path" } }), 400);
  },
  "GET /v1/admin/certificate": async () => {
    expectHttp(await api.GET("/v1/admin/certificate", {}), 200);
  },
  "PUT /v1/admin/certificate": async () => {
    // A name Let's Encrypt would be asked for is not sent from a test: the refusal is checked.
    expectHttp(await api.PUT("/v1/admin/certificate", { body: { domains: "10.0.0.1" } }), 400);
  },
  "GET /v1/admin/settings": async () => {
    expectHttp(await api.GET("/v1/admin/settings", {}), 200);
  },
  "GET /v1/setup": async () => {
    expectHttp(await api.GET("/v1/setup", {}), 200);
  },
  "POST /v1/setup": async () => {
    const body = { token: "not-the-printed-one", businessName: "Ann's Bakery", name: "Ann", email: "ann@example.com", password: "a long enough password" };
    expectHttp(await api.POST("/v1/setup", { body }), 401);
  },
  "GET /v1/people": async () => {
    expectHttp(await api.GET("/v1/people", {}), 200);
  },
  "POST /v1/invitations": async () => {
    expectHttp(await api.POST("/v1/invitations", { body: { role: "staff", email: "sam@example.com" } }), 201);
  },
  "POST /v1/invitations/accept": async () => {
    const body = { token: "not-an-invitation", name: "Bo", password: "a long enough password" };
    expectHttp(await api.POST("/v1/invitations/accept", { body }), 401);
  },
  "POST /v1/invitations/state": async () => {
    expectHttp(await api.POST("/v1/invitations/state", { body: { token: "not-an-invitation" } }), 200);
  },
  "POST /v1/setup/state": async () => {
    expectHttp(await api.POST("/v1/setup/state", { body: { token: "not-the-printed-one" } }), 200);
  },
  "PATCH /v1/people/{id}": async () => {
    expectHttp(await api.PATCH("/v1/people/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } }, body: { role: "staff" } }), 404);
  },
  "DELETE /v1/people/{id}": async () => {
    expectHttp(await api.DELETE("/v1/people/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } }), 404);
  },
  "PUT /v1/session/password": async () => {
    // A key has no password of its own to change.
    expectHttp(await api.PUT("/v1/session/password", { body: { currentPassword: "whatever it is", newPassword: "a long enough password" } }), 404);
  },
  "POST /v1/session/sign-out-everywhere": async () => {
    expectHttp(await api.POST("/v1/session/sign-out-everywhere", {}), 404);
  },
  "GET /v1/admin/https": async () => {
    expectHttp(await api.GET("/v1/admin/https", {}), 200);
  },
  "PUT /v1/admin/backups": async () => {
    expectHttp(await api.PUT("/v1/admin/backups", { body: { directory: "relative/folder" } }), 400);
  },
  "PUT /v1/account/settings": async () => {
    expectHttp(await api.PUT("/v1/account/settings", { body: { helpReply: "Call us on 555 0100" } }), 200);
  },
  "POST /v1/keyword-replies": async () => {
    const r = await api.POST("/v1/keyword-replies", { body: { keywords: ["HOURS"], reply: "We're open 9-5.", addTags: ["asked-hours"], setStatus: null, isActive: true } });
    expectHttp(r, 201);
    ctx.keywordReplyId = r.data!.data.keywordReply.id;
    expectHttp(await api.POST("/v1/keyword-replies", { body: { keywords: ["OK"], reply: "Thanks!" } }), 409);
  },
  "GET /v1/keyword-replies": async () => {
    expectHttp(await api.GET("/v1/keyword-replies", {}), 200);
  },
  "GET /v1/keyword-replies/{id}": async () => {
    expectHttp(await api.GET("/v1/keyword-replies/{id}", { params: { path: { id: ctx.keywordReplyId } } }), 200);
  },
  "PUT /v1/keyword-replies/{id}": async () => {
    expectHttp(await api.PUT("/v1/keyword-replies/{id}", { params: { path: { id: ctx.keywordReplyId } }, body: { isActive: false } }), 200);
  },
  "DELETE /v1/keyword-replies/{id}": async () => {
    expectHttp(await api.DELETE("/v1/keyword-replies/{id}", { params: { path: { id: ctx.keywordReplyId } } }), 200);
  },
  "GET /v1/contacts/analytics": async () => {
    expectHttp(await api.GET("/v1/contacts/analytics", { params: { query: { period: "30d" } } }), 200);
  },
  "GET /v1/contacts/export": async () => {
    expectHttp(await api.GET("/v1/contacts/export", {}), 200);
    expectHttp(await api.GET("/v1/contacts/export", { params: { query: { format: "csv" } }, parseAs: "text" }), 200);
    expectHttp(await api.GET("/v1/contacts/export", { params: { query: { format: "xlsx" } }, parseAs: "arrayBuffer" }), 200);
  },
  "POST /v1/contacts/import": async () => {
    const r = await api.POST("/v1/contacts/import", {
      body: "phoneNumber,firstName\n+14155550129,Di\nnot-a-phone,Ed\n",
      bodySerializer: (b) => b,
      headers: { "Content-Type": "text/csv" },
    });
    expectHttp(r, 200);
    expect(r.data!.data.created).toBe(1);
  },
  "DELETE /v1/contacts/{id}": async () => {
    expectHttp(await api.DELETE("/v1/contacts/{id}", { params: { path: { id: ctx.contactId } } }), 200);
  },
  "GET /v1/forms/{id}/embed": async () => {
    const r = await api.GET("/v1/forms/{id}/embed", { params: { path: { id: ctx.formId } } });
    expectHttp(r, 200);
    expect(r.data!.data.html).toContain("<form");
  },
  "POST /v1/forms/{id}/test": async () => {
    const r = await api.POST("/v1/forms/{id}/test", { params: { path: { id: ctx.formId } }, body: { values: { phoneNumber: "+14155550188" } } });
    expectHttp(r, 200);
    expect(r.data!.data.sent).toBeNull();
  },
  "POST /v1/forms/{id}/rotate-webhook": async () => {
    const r = await api.POST("/v1/forms/{id}/rotate-webhook", { params: { path: { id: ctx.formId } } });
    expectHttp(r, 200);
    expect(r.data!.data.formId).toBe(ctx.formId);
  },
  "POST /v1/session": async () => {
    const r = await anon.POST("/v1/session", { body: { apiKey: s.adminKey } });
    expectHttp(r, 201);
    ctx.sessionCookie = r.response.headers.get("set-cookie")!.split(";")[0];
    ctx.csrfToken = r.data!.data.csrfToken;
    ctx.sessionId = r.data!.data.id;
    expectHttp(await anon.POST("/v1/session", { body: { apiKey: "txwire_sk_" + "0".repeat(40) } }), 401);
  },
  "GET /v1/session": async () => {
    const r = await anon.GET("/v1/session", { headers: { Cookie: ctx.sessionCookie } });
    expectHttp(r, 200);
    expect(r.data!.data.csrfToken).toBe(ctx.csrfToken);
    expectHttp(await api.GET("/v1/session", {}), 404); // a key is not a session
  },
  "GET /v1/sessions": async () => {
    const r = await api.GET("/v1/sessions", {});
    expectHttp(r, 200);
    expect(r.data!.data.sessions.map((x) => x.id)).toContain(ctx.sessionId);
  },
  "GET /v1/live/messages": async () => {
    // The stream never ends: its 200 is read here (first bytes, then closed), its refusal through the client.
    const ctl = new AbortController();
    const res = await fetch(`${s.base}/live/messages`, { headers: { Cookie: ctx.sessionCookie }, signal: ctl.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const first = await res.body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toContain(": connected");
    ctl.abort();
    expectHttp(await anon.GET("/v1/live/messages", { parseAs: "text" }), 401);
  },
  "DELETE /v1/session": async () => {
    expectHttp(await anon.DELETE("/v1/session", { headers: { Cookie: ctx.sessionCookie } }), 403); // no CSRF token
    expectHttp(await anon.DELETE("/v1/session", { headers: { Cookie: ctx.sessionCookie, "X-CSRF-Token": ctx.csrfToken } }), 200);
  },
  "DELETE /v1/sessions/{id}": async () => {
    const r = await anon.POST("/v1/session", { body: { apiKey: s.adminKey } });
    expectHttp(await api.DELETE("/v1/sessions/{id}", { params: { path: { id: r.data!.data.id } } }), 200);
    expectHttp(await api.DELETE("/v1/sessions/{id}", { params: { path: { id: r.data!.data.id } } }), 404);
  },
  "POST /v1/api-keys": async () => {
    const r = await api.POST("/v1/api-keys", { body: { permission: "standard_access" } });
    expectHttp(r, 201);
    ctx.keyId = r.data!.data.keyId;
    // A value the document's type refuses, sent anyway: the service's own 400 names the allowed ones.
    expectHttp(await api.POST("/v1/api-keys", { body: { permission: "operator" } as never }), 400);
  },
  "GET /v1/api-keys": async () => {
    const r = await api.GET("/v1/api-keys", {});
    expectHttp(r, 200);
    expect(r.data!.data.keys.map((k) => k.keyId)).toContain(ctx.keyId);
  },
  "DELETE /v1/api-keys/{id}": async () => {
    expectHttp(await api.DELETE("/v1/api-keys/{id}", { params: { path: { id: ctx.keyId } } }), 200);
    expectHttp(await api.DELETE("/v1/api-keys/{id}", { params: { path: { id: ctx.keyId } } }), 404);
  },
  "DELETE /v1/forms/{id}": async () => {
    expectHttp(await api.DELETE("/v1/forms/{id}", { params: { path: { id: ctx.formId } } }), 200);
  },
  "POST /v1/webhook-endpoints": async () => {
    const r = await api.POST("/v1/webhook-endpoints", { body: { url: "http://127.0.0.1:9/hook", events: ["*"], allowInsecure: true } });
    expectHttp(r, 201);
    ctx.endpointId = r.data!.data.endpoint.id;
  },
  "GET /v1/webhook-endpoints": async () => {
    expectHttp(await api.GET("/v1/webhook-endpoints", {}), 200);
  },
  "GET /v1/webhook-endpoints/{id}": async () => {
    expectHttp(await api.GET("/v1/webhook-endpoints/{id}", { params: { path: { id: ctx.endpointId } } }), 200);
  },
  "PUT /v1/webhook-endpoints/{id}": async () => {
    expectHttp(await api.PUT("/v1/webhook-endpoints/{id}", { params: { path: { id: ctx.endpointId } }, body: { description: "CRM" } }), 200);
  },
  "POST /v1/webhook-endpoints/{id}/rotate-secret": async () => {
    expectHttp(await api.POST("/v1/webhook-endpoints/{id}/rotate-secret", { params: { path: { id: ctx.endpointId } } }), 200);
  },
  "POST /v1/webhook-endpoints/{id}/test": async () => {
    expectHttp(await api.POST("/v1/webhook-endpoints/{id}/test", { params: { path: { id: ctx.endpointId } } }), 202);
  },
  "GET /v1/webhook-endpoints/{id}/deliveries": async () => {
    expectHttp(await api.GET("/v1/webhook-endpoints/{id}/deliveries", { params: { path: { id: ctx.endpointId } } }), 200);
  },
  "POST /v1/events/{id}/redeliver": async () => {
    expectHttp(await api.POST("/v1/events/{id}/redeliver", { params: { path: { id: crypto.randomUUID() } } }), 404);
  },
  "DELETE /v1/webhook-endpoints/{id}": async () => {
    expectHttp(await api.DELETE("/v1/webhook-endpoints/{id}", { params: { path: { id: ctx.endpointId } } }), 200);
  },
  "POST /v1/devices/registration-tokens": async () => {
    const r = await api.POST("/v1/devices/registration-tokens", { body: { reusable: false, expiresInHours: 2 } });
    expectHttp(r, 201);
    expect(r.data!.data.reusable).toBe(false);
    expect(Array.isArray(r.data!.data.mobileApiUrls)).toBe(true);
    expectHttp(await api.POST("/v1/devices/registration-tokens", { body: { expiresInHours: -1 } }), 400);
    // The phone registers with it over the SMSGate app's own protocol (not part of this document).
    const reg = await fetch(`${s.url}/api/mobile/v1/device`, {
      method: "POST",
      headers: { Authorization: `Bearer ${r.data!.data.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Pixel/7", simCards: [] }),
    });
    ctx.deviceId = (await expectStatus(reg, 201)).id;
  },
  "GET /v1/devices": async () => {
    const r = await api.GET("/v1/devices", {});
    expectHttp(r, 200);
    expect(r.data!.data.devices.map((d) => d.id)).toContain(ctx.deviceId);
  },
  "GET /v1/devices/{id}": async () => {
    const r = await api.GET("/v1/devices/{id}", { params: { path: { id: ctx.deviceId } } });
    expectHttp(r, 200);
    expect(r.data!.data.device.kind).toBe("smsgate");
    expectHttp(await api.GET("/v1/devices/{id}", { params: { path: { id: crypto.randomUUID() } } }), 404);
  },
  "PATCH /v1/devices/{id}": async () => {
    const r = await api.PATCH("/v1/devices/{id}", { params: { path: { id: ctx.deviceId } }, body: { name: "Shop phone", sendRatePerMinute: 20 } });
    expectHttp(r, 200);
    expect(r.data!.data.device).toMatchObject({ name: "Shop phone", sendRatePerMinute: 20 });
    expectHttp(await api.PATCH("/v1/devices/{id}", { params: { path: { id: ctx.deviceId } }, body: { name: "" } }), 400);
  },
  "DELETE /v1/devices/{id}": async () => {
    expectHttp(await api.DELETE("/v1/devices/{id}", { params: { path: { id: ctx.deviceId } } }), 200);
    expectHttp(await api.DELETE("/v1/devices/{id}", { params: { path: { id: ctx.deviceId } } }), 404);
  },
  "GET /health": async () => {
    const r = await anon.GET("/health");
    expectHttp(r, 200);
    expect(r.data!.database).toBe("ok");
  },
  "GET /ca.crt": async () => {
    // No local CA on a test server: the documented 404 that says how to make one.
    expectHttp(await anon.GET("/ca.crt", { parseAs: "text" }), 404);
  },
  "GET /metrics": async () => {
    expectHttp(await api.GET("/metrics", { parseAs: "text" }), 200);
  },
  "GET /v1/openapi.json": async () => {
    expectHttp(await anon.GET("/v1/openapi.json"), 200);
  },
  "GET /v1/docs": async () => {
    expectHttp(await anon.GET("/v1/docs", { parseAs: "text" }), 200);
  },
  "POST /v1/admin/backup": async () => {
    expectHttp(await api.POST("/v1/admin/backup", { parseAs: "arrayBuffer" }), 200);
  },
  "GET /v1/admin/backups": async () => {
    expectHttp(await api.GET("/v1/admin/backups", {}), 200);
  },
  "GET /v1/admin/replication": async () => {
    expectHttp(await api.GET("/v1/admin/replication", {}), 200);
  },
  "PUT /v1/admin/replication": async () => {
    expectHttp(await api.PUT("/v1/admin/replication", { body: { url: "ftp://nowhere/x" } }), 400);
    expectHttp(await api.PUT("/v1/admin/replication", { body: { url: null } }), 200);
  },
  "GET /v1/account": async () => {
    expectHttp(await api.GET("/v1/account", {}), 200);
    expectHttp(await anon.GET("/v1/account", {}), 401);
  },
  "GET /v1/overview": async () => {
    expectHttp(await api.GET("/v1/overview", { params: { query: { timezone: "Europe/Paris" } } }), 200);
    expectHttp(await api.GET("/v1/overview", { params: { query: { timezone: "Nowhere/Else" } } }), 400);
    expectHttp(await anon.GET("/v1/overview", {}), 401);
  },
};

// ---------------------------------------------------------------------------------------------
// Checking an answer against the document

const HEADERS_WE_SEND = /^(x-request-id|x-ratelimit-.*|retry-after|content-disposition|idempotent-replayed|access-control-.*)$/i;

function operations(d: Json): Array<{ key: string; method: string; path: string; re: RegExp; params: number; op: Json }> {
  return Object.entries<Json>(d.paths)
    .flatMap(([path, ops]) =>
      Object.entries<Json>(ops).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        re: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
        params: (path.match(/\{/g) ?? []).length,
        op,
      })),
    )
    .sort((a, b) => a.params - b.params); // /v1/messages/next before /v1/messages/{id}
}

const resolveRef = (s: Json) => (s?.$ref ? s.$ref.slice(2).split("/").reduce((o: any, k: string) => o[k], doc) : s);

describe("GET /v1/openapi.json is true", () => {
  test("@redocly/cli lint finds 0 errors", async () => {
    const { code, out } = await lint;
    const json = out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1);
    const report = JSON.parse(json);
    const errors = (report.problems ?? []).filter((p: Json) => p.severity === "error");
    expect(errors.map((p: Json) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(code).toBe(0);
  }, 60_000);

  test("every operation of the document has a case in CASES", () => {
    const ops = operations(doc).map((o) => o.key);
    const missing = ops.filter((k) => !(k in CASES));
    if (missing.length) throw new Error(`add a case to CASES in test/api/ops/openapi-client.test.ts for: ${missing.join(", ")}`);
    const extra = Object.keys(CASES).filter((k) => !ops.includes(k));
    if (extra.length) throw new Error(`CASES has operations the document does not: ${extra.join(", ")}`);
  });

  test("the generated client types are those of the live document (scripts/api-docs.ts)", async () => {
    const { clientTypes, CLIENT_TYPES } = await import("../../../scripts/api-docs");
    const want = await clientTypes(doc);
    const have = await Bun.file(CLIENT_TYPES).text();
    if (have !== want) throw new Error("web/api-schema.gen.ts is stale: run `npx bun scripts/api-docs.ts`");
  }, 30_000);

  test("docs/api.md is the reference of the live document (scripts/api-docs.ts)", async () => {
    const { apiMarkdown, API_MD } = await import("../../../scripts/api-docs");
    if ((await Bun.file(API_MD).text()) !== apiMarkdown(doc)) throw new Error("docs/api.md is stale: run `npx bun scripts/api-docs.ts`");
  });

  test("one call of every operation through the generated client; each answer matches its documented status, body and headers", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    const ops = operations(doc);
    const covered = new Set<string>();
    const problems: string[] = [];
    let n = 0;
    for (const [key, run] of Object.entries(CASES)) {
      const from = seen.length;
      try {
        await run();
      } catch (err) {
        problems.push(`${key}: ${(err as Error).message}`);
      }
      for (const { method, url, response } of seen.slice(from)) {
        const path = new URL(url).pathname;
        const o = ops.find((x) => x.method === method && x.re.test(path));
        const where = `${method} ${path} → ${response.status}`;
        if (!o) {
          problems.push(`${where}: no operation in the document`);
          continue;
        }
        covered.add(o.key);
        const documented = resolveRef(o.op.responses?.[String(response.status)]);
        if (!documented) {
          problems.push(`${where}: status not documented for ${o.key} (has ${Object.keys(o.op.responses).join(", ")})`);
          continue;
        }
        const headerNames = new Set(Object.keys(documented.headers ?? {}).map((h) => h.toLowerCase()));
        if (!response.headers.get("x-request-id")) problems.push(`${where}: no X-Request-Id`);
        for (const [h] of response.headers) {
          if (HEADERS_WE_SEND.test(h) && !headerNames.has(h.toLowerCase())) problems.push(`${where}: header ${h} not documented`);
        }
        const text = await response.text();
        const content: Json | undefined = documented.content;
        if (!content) {
          if (text !== "") problems.push(`${where}: documented without a body, got ${text.slice(0, 100)}`);
          continue;
        }
        const type = (response.headers.get("content-type") ?? "").split(";")[0].trim();
        const media = content[type];
        if (!media) {
          problems.push(`${where}: content type ${type} not documented (${Object.keys(content).join(", ")})`);
          continue;
        }
        if (type !== "application/json") continue; // files and text pages: the type is the contract
        const validate = ajv.compile({ ...media.schema, $id: `urn:textwire:check:${n++}`, components: doc.components });
        if (!validate(JSON.parse(text))) problems.push(`${where}: ${ajv.errorsText(validate.errors, { separator: "; " })}`);
      }
    }
    expect(problems).toEqual([]);
    expect(ops.map((o) => o.key).filter((k) => !covered.has(k))).toEqual([]);
  }, 60_000);
});
