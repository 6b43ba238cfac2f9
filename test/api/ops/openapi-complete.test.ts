/**
 * The document is complete for generated clients.
 *
 * Every field the server sends is declared: real answers of the main GET routes, from a
 * server holding one of everything (a form with a submission, an opted-out contact with its
 * consent, a reply, a broadcast, a phone, an outbound endpoint, a session), are validated against
 * their documented schemas with every object CLOSED (additionalProperties: false where the model
 * does not say otherwise). A field the server sends but the document does not name fails here, so
 * a generated client never meets a key its types do not have.
 *
 * Request bodies and boolean query values carry their real types, while the answers to bad input
 * stay the ones clients got before (docs/api-decisions.md, "The API document for generated
 * clients; small truths").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { closed } from "../../helpers/closed-schema";
import { expectStatus, formBody, startTestServer, type TestServer } from "../../helpers/server";

type Json = Record<string, any>;

let s: TestServer;
let doc: Json;
const ids = {} as { formId: string; contactId: string; messageId: string; broadcastId: string; endpointId: string; deviceId: string };

beforeAll(async () => {
  s = await startTestServer({ allowPrivateWebhookUrls: true });
  doc = await expectStatus(await fetch(`${s.base}/openapi.json`), 200);
  const form = await expectStatus(await s.api("/forms", { method: "POST", json: formBody({ name: "Contact us" }) }), 201);
  ids.formId = form.data.form.id;
  const posted = await expectStatus(await fetch(`${s.base}/forms/${ids.formId}/webhook`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ phoneNumber: "+14155550123", firstName: "Ann", company: "Acme" }) }), 200);
  ids.contactId = posted.data.contactId;
  ids.messageId = posted.data.messageId;
  // A contact added by hand (consent), then opted out (optedOutAt), and a reply from the first one.
  const manual = await expectStatus(await s.api("/contacts", { method: "POST", json: { phoneNumber: "+14155550128", firstName: "Cy", tags: ["vip"], consent: { source: "manual" } } }), 201);
  await expectStatus(await s.api(`/contacts/${manual.data.contact.id}`, { method: "PUT", json: { optedOut: true } }), 200);
  // The submission's text sent through a lease, a second one failed, a reply and a STOP.
  const other = await expectStatus(await s.api("/messages", { method: "POST", json: { phoneNumber: "+14155550126", content: "Your order is ready" } }), 201);
  const leased = await expectStatus(await s.api("/messages/next", { method: "POST", json: { limit: 2, deviceId: "phone-1" } }), 200);
  for (const m of leased.data.messages) {
    const report = m.id === other.data.messageId ? { status: "failed", failureReason: "no signal", leaseToken: m.leaseToken } : { status: "sent", sentAt: new Date().toISOString(), leaseToken: m.leaseToken };
    await expectStatus(await s.api(`/messages/${m.id}/status`, { method: "PUT", json: report }), 200);
  }
  await expectStatus(await s.api("/messages/inbound", { method: "POST", json: { from: "+14155550123", body: "Yes please", deviceId: "phone-1", externalId: "sms-1" } }), 201);
  await expectStatus(await s.api("/messages/inbound", { method: "POST", json: { from: "+14155550126", body: "STOP", deviceId: "phone-1", externalId: "sms-2" } }), 201);
  const b = await expectStatus(await s.api("/broadcasts", { method: "POST", json: { name: "Spring", content: "Hi {{firstName}}", segment: { tags: ["vip"] }, scheduledFor: new Date(Date.now() + 86_400_000).toISOString() } }), 202);
  ids.broadcastId = b.data.broadcastId;
  const ep = await expectStatus(await s.api("/webhook-endpoints", { method: "POST", json: { url: "http://127.0.0.1:9/hook", events: ["*"], allowInsecure: true } }), 201);
  ids.endpointId = ep.data.endpoint.id;
  await expectStatus(await s.api(`/webhook-endpoints/${ids.endpointId}/test`, { method: "POST" }), 202);
  const tok = await expectStatus(await s.api("/devices/registration-tokens", { method: "POST", json: {} }), 201);
  const reg = await fetch(`${s.url}/api/mobile/v1/device`, { method: "POST", headers: { Authorization: `Bearer ${tok.data.token}`, "Content-Type": "application/json" }, body: JSON.stringify({ name: "Pixel", simCards: [] }) });
  ids.deviceId = (await expectStatus(reg, 201)).id;
  await expectStatus(await fetch(`${s.base}/session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ apiKey: s.adminKey }) }), 201);
});
afterAll(() => s.stop());

function operationFor(method: string, path: string): Json | undefined {
  const entries = Object.entries<Json>(doc.paths)
    .map(([p, ops]) => ({ p, op: ops[method.toLowerCase()], re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`), n: (p.match(/\{/g) ?? []).length }))
    .filter((e) => e.op)
    .sort((a, b) => a.n - b.n);
  return entries.find((e) => e.re.test(path))?.op;
}

/** The main GET routes, each with the query values that make it send its optional parts. */
const urls = () => [
  "/v1/account",
  "/v1/account/settings",
  "/v1/api-keys",
  "/v1/broadcasts",
  `/v1/broadcasts/${ids.broadcastId}`,
  "/v1/contacts",
  "/v1/contacts?optedOut=true",
  `/v1/contacts/${ids.contactId}`,
  `/v1/contacts/${ids.contactId}/messages`,
  "/v1/contacts/analytics?period=30d",
  "/v1/contacts/export",
  "/v1/conversations",
  `/v1/conversations/${ids.contactId}`,
  "/v1/devices",
  `/v1/devices/${ids.deviceId}`,
  "/v1/forms",
  "/v1/forms?counts=true",
  `/v1/forms/${ids.formId}`,
  `/v1/forms/${ids.formId}/embed`,
  `/v1/forms/${ids.formId}/stats?period=7d`,
  "/v1/inbound",
  "/v1/messages",
  `/v1/messages/${ids.messageId}`,
  "/v1/messages?status=failed",
  "/v1/messages/analytics?period=30d",
  "/v1/sessions",
  "/v1/webhook-endpoints",
  `/v1/webhook-endpoints/${ids.endpointId}`,
  `/v1/webhook-endpoints/${ids.endpointId}/deliveries`,
  "/v1/admin/backups",
  "/health",
];

describe("every field a GET answer carries is declared in the document", () => {
  test("real answers validate against their schemas with additional properties forbidden", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    const components = closed(doc.components) as Json;
    const problems: string[] = [];
    let n = 0;
    for (const url of urls()) {
      const res = await fetch(`${s.url}${url}`, { headers: { Authorization: `Bearer ${s.adminKey}` } });
      const path = url.split("?")[0];
      const op = operationFor("GET", path);
      if (!op) {
        problems.push(`GET ${path}: not in the document`);
        continue;
      }
      const text = await res.text();
      if (res.status !== 200) {
        problems.push(`GET ${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
        continue;
      }
      const schema = op.responses["200"]?.content?.["application/json"]?.schema;
      if (!schema) {
        problems.push(`GET ${path}: no JSON 200 in the document`);
        continue;
      }
      const validate = ajv.compile({ ...(closed(schema) as Json), $id: `urn:textwire:closed:${n++}`, components });
      if (!validate(JSON.parse(text))) {
        for (const e of validate.errors ?? []) {
          problems.push(`GET ${url}: ${e.instancePath || "/"} ${e.message}${e.params && "additionalProperty" in e.params ? ` (${e.params.additionalProperty})` : ""}`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  test("closing a schema leaves declared open maps open and allOf parts alone", () => {
    expect(closed({ type: "object", properties: { a: { type: "string" } } })).toEqual({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false });
    expect(closed({ type: "object", properties: {}, additionalProperties: true })).toEqual({ type: "object", properties: {}, additionalProperties: true });
    expect(closed({ allOf: [{ type: "object", properties: { a: {} } }] })).toEqual({ allOf: [{ type: "object", properties: { a: {} } }] });
  });
});

describe("boolean query parameters are typed boolean", () => {
  const BOOLEAN_QUERIES: Array<[method: string, path: string, name: string]> = [
    ["get", "/v1/forms", "isActive"],
    ["get", "/v1/forms", "counts"],
    ["get", "/v1/contacts", "optedOut"],
    ["get", "/v1/contacts/export", "optedOut"],
    ["get", "/v1/conversations", "unread"],
    ["post", "/v1/broadcasts", "dryRun"],
  ];

  test("the document types each one boolean, and no query parameter is a true/false string any more", () => {
    for (const [method, path, name] of BOOLEAN_QUERIES) {
      const p = doc.paths[path][method].parameters.find((x: Json) => x.name === name && x.in === "query");
      expect(`${path} ${name}: ${JSON.stringify(p.schema)}`).toBe(`${path} ${name}: {"type":"boolean"}`);
    }
    const textual = Object.entries<Json>(doc.paths).flatMap(([path, ops]) =>
      Object.values<Json>(ops).flatMap((op) =>
        (op.parameters ?? [])
          .filter((p: Json) => p.in === "query" && (p.schema?.pattern === "^(true|false)$" || JSON.stringify(p.schema?.enum) === '["true","false"]'))
          .map((p: Json) => `${path} ${p.name}`),
      ),
    );
    expect(textual).toEqual([]);
  });

  test("true and false as a generated client sends them work; anything else is the field-named 400 it was before", async () => {
    for (const [method, path, name] of BOOLEAN_QUERIES) {
      const url = (v: string) => `${s.url}${path}?${name}=${v}`;
      const call = (v: string) =>
        method === "get"
          ? fetch(url(v), { headers: { Authorization: `Bearer ${s.adminKey}` } })
          : fetch(url(v), { method: "POST", headers: { Authorization: `Bearer ${s.adminKey}`, "Content-Type": "application/json" }, body: JSON.stringify({ name: `B ${crypto.randomUUID()}`, content: "Hi", segment: { tags: ["nobody"] } }) });
      for (const v of ["true", "false"]) expect(`${path} ${name}=${v}: ${(await call(v)).status}`).toMatch(/: 20[02]$/);
      for (const v of ["1", "0", "yes", "TRUE"]) {
        const res = await call(v);
        const body = (await res.json()) as Json;
        expect(`${path} ${name}=${v}: ${res.status} ${body.code} ${body.details?.field}`).toBe(`${path} ${name}=${v}: 400 VALIDATION_ERROR ${name}`);
      }
    }
  });
});

describe("the five request bodies once typed unknown carry their types; the answers to bad input are unchanged", () => {
  const body = (method: string, path: string) => doc.paths[path][method].requestBody.content["application/json"].schema;

  test("types, enums and required keys in the document", () => {
    const create = body("post", "/v1/webhook-endpoints");
    expect(create.required).toEqual(["url", "events"]);
    expect(create.properties.url).toMatchObject({ type: "string", maxLength: 2000 });
    expect(create.properties.events.type).toBe("array");
    expect(create.properties.events.items.enum).toContain("*");
    expect(create.properties.events.items.enum).toContain("message.sent");
    expect(create.properties.isActive.type).toBe("boolean");
    expect(create.properties.description.anyOf.map((x: Json) => x.type)).toEqual(["string", "null"]);
    const update = body("put", "/v1/webhook-endpoints/{id}");
    expect(update.required).toBeUndefined();
    expect(update.properties.allowInsecure.type).toBe("boolean");
    expect(body("post", "/v1/api-keys").properties.permission.enum).toEqual(["admin_access", "standard_access"]);
    const settings = body("put", "/v1/account/settings");
    expect(settings.additionalProperties).toBe(false);
    expect(settings.properties.optOutKeywords.anyOf[0]).toMatchObject({ type: "array", items: { type: "string" }, maxItems: 30 });
    expect(settings.properties.helpReply.anyOf[0]).toMatchObject({ type: "string", maxLength: 306 });
    // A person signs in with e-mail and password, a machine (advanced) with an API key: neither is required alone.
    expect(body("post", "/v1/session")).toMatchObject({ properties: { email: { type: "string" }, password: { type: "string" }, apiKey: { type: "string" } } });
    // No property of any request body is left untyped.
    const untyped = Object.entries<Json>(doc.paths).flatMap(([path, ops]) =>
      Object.entries<Json>(ops).flatMap(([m, op]) => {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        return Object.entries<Json>(schema?.properties ?? {})
          .filter(([, p]) => !p.type && !p.anyOf && !p.oneOf && !p.$ref && p.const === undefined && !p.enum)
          .map(([k]) => `${m.toUpperCase()} ${path} ${k}`);
      }),
    );
    expect(untyped).toEqual([]);
  });

  test("bad values still get the service's own field-named answers", async () => {
    const send = async (method: string, path: string, json: unknown, key: string | null = s.adminKey) => {
      const res = await fetch(`${s.url}${path}`, { method, headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), "Content-Type": "application/json" }, body: JSON.stringify(json) });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const ep = await send("POST", "/v1/webhook-endpoints", { url: 5, events: ["nope"] });
    expect(ep.status).toBe(400);
    expect(ep.body.errors.map((e: Json) => e.field).sort()).toEqual(["events", "url"]);
    expect(ep.body.errors.find((e: Json) => e.field === "url").message).toBe("url is required: the https:// address of your receiver");
    const put = await send("PUT", `/v1/webhook-endpoints/${ids.endpointId}`, { isActive: "yes", description: 7 });
    expect(put.status).toBe(400);
    expect(put.body.errors.map((e: Json) => e.message).sort()).toEqual(["description must be text of at most 500 characters", "isActive must be true or false"]);
    const key = await send("POST", "/v1/api-keys", { permission: "operator" });
    expect([key.status, key.body.message]).toEqual([400, "permission must be admin_access or standard_access"]);
    const settings = await send("PUT", "/v1/account/settings", { optOutKeywords: "STOP", colour: "red" });
    expect(settings.status).toBe(400);
    expect(settings.body.errors.map((e: Json) => e.field).sort()).toEqual(["colour", "optOutKeywords"]);
    const signIn = await send("POST", "/v1/session", { apiKey: 42 }, null);
    expect([signIn.status, signIn.body.message]).toEqual([400, "apiKey is required: paste an API key (txwire_sk_…)"]);
  });
});
