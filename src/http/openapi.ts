/**
 * The OpenAPI 3.1 document, GENERATED from the Elysia app's registered routes (`app.routes`):
 * method, path, the TypeBox params/query/body/response schemas and `detail`. A route added by any
 * module appears here without anyone touching this file, so the docs cannot drift from behaviour.
 * Error responses come from the one catalogue (src/errors.ts) and each route's declared permission
 * (permissions.ts).
 */
import { ERROR_CATALOGUE, type ErrorCode } from "../errors";
import { VERSION } from "../version";
import { SCHEMA_VERSION } from "../db/migrate";
import { classify } from "./access";
import { routeAccessOf } from "./permissions";
import { KEY_FORMAT } from "../services/accounts";
import { EVENT_BODIES, EVENT_DELIVERY_TEXT } from "./models/event-bodies";

export interface RouteInfo {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

type Json = Record<string, any>;

/** Elysia coerces query/path values and adds a string twin (format integer/boolean/…) to schemas. */
const COERCION_FORMATS = new Set(["integer", "numeric", "boolean", "ObjectString", "ArrayString", "ArrayQuery", "date-time-string"]);

/** The documentation keys of src/http/models/common.ts, read here and never copied out. */
const DOC_KEYS = ["x-type", "x-required", "x-media", "x-headers"];

/**
 * A plain JSON Schema copy: no TypeBox symbols, no coercion twins; a loosely declared value shows
 * the type the domain checks ("x-type"), a loose body its required keys ("x-required"), and
 * TypeBox's catch-all pattern of t.Record becomes additionalProperties.
 */
export function cleanSchema(schema: unknown): Json | undefined {
  if (schema === undefined || schema === null) return undefined;
  const plain = JSON.parse(JSON.stringify(schema));
  const walk = (s: any): any => {
    if (Array.isArray(s)) return s.map(walk);
    if (!s || typeof s !== "object") return s;
    if (s["x-type"] && typeof s["x-type"] === "object") {
      const { "x-type": doc, description, ...rest } = s;
      const typed = walk(doc);
      return { ...typed, ...(description ?? typed.description ? { description: description ?? typed.description } : {}), ...(rest.default !== undefined ? { default: rest.default } : {}) };
    }
    const out: Json = {};
    // `error` is the schema's own 400 message (IntParam), not a JSON Schema keyword.
    for (const [k, v] of Object.entries(s)) if (!DOC_KEYS.includes(k) && !(k === "error" && typeof v !== "object")) out[k] = walk(v);
    if (Array.isArray(s["x-required"])) out.required = s["x-required"];
    const pp = out.patternProperties;
    if (pp && Object.keys(pp).length === 1 && (Object.keys(pp)[0] === "^(.*)$" || Object.keys(pp)[0] === "^.*$")) {
      out.additionalProperties = Object.values(pp)[0];
      delete out.patternProperties;
    }
    for (const key of ["anyOf", "oneOf"]) {
      const alts = out[key];
      if (Array.isArray(alts) && alts.length > 1) {
        const kept = alts.filter((a: any) => !(a && a.type === "string" && COERCION_FORMATS.has(a.format)));
        if (kept.length === 1 && kept.length < alts.length) {
          delete out[key];
          Object.assign(out, kept[0], Object.fromEntries(Object.entries(out).filter(([k]) => k !== "type")));
          if (kept[0].type) out.type = kept[0].type;
        } else if (kept.length < alts.length) out[key] = kept;
      }
    }
    return out;
  };
  return walk(plain);
}

/** "/v1/forms/:id/" → "/v1/forms/{id}" */
export function openApiPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return trimmed.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

const codesByStatus = (() => {
  const m = new Map<number, ErrorCode[]>();
  for (const [code, v] of Object.entries(ERROR_CATALOGUE) as Array<[ErrorCode, { status: number }]>) {
    m.set(v.status, [...(m.get(v.status) ?? []), code]);
  }
  return m;
})();

const STATUS_TEXT: Record<number, string> = {
  400: "Validation failed",
  401: "Missing or invalid API key",
  403: "The key lacks the permission this endpoint requires",
  404: "Not found",
  409: "Conflict with the current state",
  413: "Request body too large",
  415: "Body is not JSON",
  429: "Rate limit or quota exceeded",
  500: "Unexpected error (the response carries a request id)",
  503: "Unavailable",
};

/**
 * Codes only some routes can give: a route lists the ones it can in `detail["x-errors"]` (the
 * webhook's come with its kind), so no operation documents a 409 or 503 it never answers.
 */
const ROUTE_SPECIFIC_ERRORS = new Set<ErrorCode>([
  "DUPLICATE_FORM_NAME",
  "DUPLICATE_PHONE_NUMBER",
  "INVALID_STATE",
  "LEASE_CONFLICT",
  "INVALID_TRANSITION",
  "QUOTA_EXCEEDED",
  "FORM_DISABLED",
  "SERVICE_UNAVAILABLE",
  "ORIGIN_NOT_ALLOWED",
  "IDEMPOTENCY_KEY_REUSED",
  "CAPTCHA_FAILED",
  "CAPTCHA_UNAVAILABLE",
  "RECIPIENT_OPTED_OUT",
  "EMAIL_TAKEN",
  "LAST_OWNER",
  "PERSON_NOT_FOUND",
  "KEYWORD_REPLY_NOT_FOUND",
  "SUBMISSION_NOT_FOUND",
  "AUTOMATION_RUN_NOT_FOUND",
  "COMMON_WORDS_UNCONFIRMED",

  "AUTOMATION_INACTIVE",
]);

/** Every response header the server sends, by name; answers refer to them from components. */
const RESPONSE_HEADERS: Record<string, Json> = {
  "X-Request-Id": { description: "this request's id, also in the server log (quote it when reporting a problem)", schema: { type: "string" } },
  "X-RateLimit-Limit": { description: "requests allowed per window (per hour for a key, per minute for a form's webhook)", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "requests left in the window", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Unix time (seconds) when the window resets", schema: { type: "integer" } },
  "X-RateLimit-Burst-Limit": { description: "requests allowed per minute (burst)", schema: { type: "integer" } },
  "X-RateLimit-Burst-Remaining": { description: "burst requests left this minute", schema: { type: "integer" } },
  "Retry-After": { description: "seconds to wait before retrying", schema: { type: "integer" } },
  "Content-Disposition": { description: "attachment; filename=… (the file's suggested name)", schema: { type: "string" } },
  "Idempotent-Replayed": { description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } },
  "Access-Control-Allow-Origin": { description: "`*`: any web page may post to the webhook", schema: { type: "string" } },
  "Access-Control-Allow-Methods": { description: "POST, OPTIONS", schema: { type: "string" } },
  "Access-Control-Allow-Headers": { description: "Content-Type, Idempotency-Key, Accept, X-API-Version", schema: { type: "string" } },
  "Access-Control-Max-Age": { description: "seconds a browser may cache this answer", schema: { type: "integer" } },
  "Access-Control-Expose-Headers": { description: "the headers above a web page's script may read", schema: { type: "string" } },
};
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The 403s every state-changing route a dashboard session may call shares (components.responses):
 * a session's change without its X-CSRF-Token is refused before the rate limit is counted; an
 * admin route's PERMISSION_ERROR comes after it (so that answer carries the rate-limit headers).
 */
function sharedResponses(): Json {
  const csrfText = "A request made with a dashboard session cookie (no Authorization header) must carry the session's `X-CSRF-Token` header (GET /v1/session answers it)";
  return {
    CsrfTokenInvalid: { ...errorResponse(403, ["CSRF_TOKEN_INVALID"]), description: `${csrfText}. Codes: CSRF_TOKEN_INVALID`, headers: headersObject(["X-Request-Id"]) },
    PermissionOrCsrf: {
      ...errorResponse(403, ["PERMISSION_ERROR", "CSRF_TOKEN_INVALID"]),
      description: `The key lacks the permission this endpoint requires (PERMISSION_ERROR), or: ${csrfText} (CSRF_TOKEN_INVALID). Codes: PERMISSION_ERROR, CSRF_TOKEN_INVALID`,
      headers: headersObject(["X-Request-Id", ...RATE_LIMIT_HEADERS]),
    },
  };
}

const RATE_LIMIT_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Burst-Limit", "X-RateLimit-Burst-Remaining"];
const headerComponentName = (h: string) => h.replace(/-/g, "");

function headersObject(names: Iterable<string>): Json | undefined {
  const out: Json = {};
  for (const n of names) {
    if (!RESPONSE_HEADERS[n]) throw new Error(`openapi: unknown response header ${n}; add it to RESPONSE_HEADERS`);
    out[n] = { $ref: `#/components/headers/${headerComponentName(n)}` };
  }
  return Object.keys(out).length ? out : undefined;
}

function errorResponse(status: number, only?: ErrorCode[]): Json {
  const codes = only ?? codesByStatus.get(status) ?? [];
  return {
    description: `${STATUS_TEXT[status] ?? "Error"}. Codes: ${codes.join(", ")}`,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
    "x-error-codes": codes,
  };
}

/** A declared answer (TypeBox, see models/common.ts) → an OpenAPI response object. */
function successResponse(status: number, declared: any): Json {
  const headers: string[] = Array.isArray(declared?.["x-headers"]) ? declared["x-headers"] : [];
  const description: string = declared?.description ?? (status === 204 ? "No content" : "Success");
  const out: Json = { description, "x-headers": headers };
  if (declared?.["x-media"]) {
    out.content = Object.fromEntries(Object.entries<any>(declared["x-media"]).map(([type, schema]) => [type, { schema: cleanSchema(schema) }]));
  } else if (status !== 204 && declared?.type !== "void" && declared?.type !== "undefined") {
    const schema = cleanSchema(declared)!;
    delete schema.description;
    out.content = { "application/json": { schema } };
  }
  return out;
}

function isSchema(x: any): boolean {
  return x && typeof x === "object" && ("type" in x || "anyOf" in x || "oneOf" in x || "allOf" in x || "$ref" in x || "properties" in x || "const" in x || "x-media" in x);
}

const OPTIONAL = Symbol.for("TypeBox.Optional");

/** Schemas inside a route's `detail` (requestBody, parameters) may be TypeBox models too. */
function cleanDetailParameters(list: any[] | undefined): Json[] {
  return (list ?? []).map((p) => ({ ...p, ...(p.schema ? { schema: cleanSchema(p.schema) } : {}) }));
}

function operationFor(r: RouteInfo): Json {
  const hooks = r.hooks ?? {};
  const { "x-errors": extraErrors = [], ...detail }: Json = hooks.detail ?? {};
  const method = r.method.toUpperCase();
  const oaPath = openApiPath(r.path);
  const concrete = oaPath.replace(/\{[^}]+\}/g, "x");
  const kind = classify(concrete);
  // What the route declares (permissions.ts): a key kind for the routes a key calls (and sign-in,
  // whose body carries one), "none" for the others.
  const need = routeAccessOf(r).key ?? "none";
  const authed = need !== "none";
  const admin = need === "admin_access" || need === "operator";
  // A signed-in dashboard may call it with its session cookie, so it needs the X-CSRF-Token.
  const csrf = authed && STATE_CHANGING.has(method) && !(method === "POST" && oaPath === "/v1/session");

  const parameters: Json[] = [];
  const params = cleanSchema(hooks.params);
  const declaredPath = new Set<string>();
  if (params?.properties) {
    for (const [name, s] of Object.entries<Json>(params.properties)) {
      declaredPath.add(name);
      const { description, ...schema } = s;
      parameters.push({ name, in: "path", required: true, ...(description ? { description } : {}), schema });
    }
  }
  for (const m of oaPath.matchAll(/\{([^}]+)\}/g)) {
    if (!declaredPath.has(m[1])) parameters.push({ name: m[1], in: "path", required: true, schema: { type: "string" } });
  }
  for (const [where, model] of [["query", hooks.query], ["header", hooks.headers]] as const) {
    const s = cleanSchema(model);
    if (!s?.properties) continue;
    const required = new Set<string>(s.required ?? []);
    for (const [name, p] of Object.entries<Json>(s.properties)) {
      const { description, ...schema } = p;
      parameters.push({ name, in: where, required: required.has(name), ...(description ? { description } : {}), schema });
    }
  }
  parameters.push(...cleanDetailParameters(detail.parameters));

  const keyInPath = kind === "messages" ? `/v1/messages/{apiKey}${oaPath.slice("/v1/messages".length)}` : undefined;
  const description = [
    detail.description,
    admin ? (need === "operator" ? "Requires an **operator** key (`textwire keys create --operator`): it covers every account." : "Requires an **admin_access** key.") : undefined,
    keyInPath ? `Also reachable as \`${method} ${keyInPath}\` with the key as the first path segment instead of the Authorization header (the spec's form; see x-key-in-path).` : undefined,
  ].filter(Boolean);

  const op: Json = {
    operationId: `${method.toLowerCase()}${oaPath.replace(/\{([^}]+)\}/g, "By_$1").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    summary: detail.summary ?? `${method} ${oaPath}`,
    ...(description.length ? { description: description.join("\n\n") } : {}),
    tags: detail.tags ?? [oaPath.split("/")[2] ?? "Other"],
    "x-required-permission": need,
    ...(keyInPath ? { "x-key-in-path": keyInPath } : {}),
    parameters,
  };
  if (detail.deprecated) op.deprecated = true;
  if (!authed) op.security = [];

  if (hooks.body) {
    const body = cleanSchema(hooks.body)!;
    op.requestBody = { required: !(OPTIONAL in hooks.body), content: { "application/json": { schema: body } } };
  } else if (detail.requestBody) {
    const rb = detail.requestBody;
    op.requestBody = { ...rb, content: Object.fromEntries(Object.entries<any>(rb.content ?? {}).map(([type, m]) => [type, { ...m, schema: cleanSchema(m.schema) }])) };
  }

  const responses: Json = {};
  const declared = hooks.response;
  if (declared && isSchema(declared)) responses["200"] = successResponse(200, declared);
  else if (declared && typeof declared === "object") {
    for (const [status, s] of Object.entries(declared)) responses[status] = successResponse(Number(status), s);
  }
  if (!Object.keys(responses).some((s) => s.startsWith("2"))) {
    // A route without a `response` model still gets a usable entry; test/api/ops/openapi.test.ts fails
    // until the route declares its model.
    responses[method === "POST" ? "201" : "200"] = {
      description: "Success (this route declares no response model yet)",
      "x-undeclared-response": true,
      content: { "application/json": { schema: { type: "object", properties: { status: { const: "success" }, message: { type: "string" }, data: { type: "object", additionalProperties: true } }, required: ["status"] } } },
    };
  }

  // The errors each kind of route can give, from the one catalogue.
  const errors = new Set<number>();
  if (method !== "OPTIONS") {
    errors.add(500);
    if (hooks.body || hooks.query || hooks.params || op.requestBody) errors.add(400);
    if (authed) errors.add(401).add(429);
    if (admin) errors.add(403);
    if (oaPath.includes("{")) errors.add(404);
    if (op.requestBody) errors.add(413).add(415);
    if (kind === "webhook") errors.add(400).add(404).add(413).add(415).add(429);
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of extraErrors as ErrorCode[]) {
    const st = ERROR_CATALOGUE[code].status;
    errors.add(st);
    byStatus.set(st, [...(byStatus.get(st) ?? []), code]);
  }
  if (kind === "webhook" && method === "POST") {
    for (const code of ["FORM_DISABLED", "SERVICE_UNAVAILABLE", "QUOTA_EXCEEDED"] as ErrorCode[]) {
      const st = ERROR_CATALOGUE[code].status;
      errors.add(st);
      byStatus.set(st, [...(byStatus.get(st) ?? []), code]);
    }
  }
  for (const s of [...errors].sort()) {
    if (responses[String(s)]) continue;
    let general = (codesByStatus.get(s) ?? []).filter((c) => !ROUTE_SPECIFIC_ERRORS.has(c));
    if (s === 403) general = general.filter((c) => c !== "CSRF_TOKEN_INVALID"); // the shared entries below
    if (s === 404 && !oaPath.includes("{")) general = [];
    else if (s === 404) {
      general = kind === "webhook" ? ["NOT_FOUND"] : oaPath.startsWith("/v1/forms") ? ["FORM_NOT_FOUND", "NOT_FOUND"] : oaPath.startsWith("/v1/messages") ? ["MESSAGE_NOT_FOUND", "NOT_FOUND"] : oaPath.startsWith("/v1/contacts") || oaPath.startsWith("/v1/conversations") ? ["CONTACT_NOT_FOUND", "NOT_FOUND"] : oaPath.startsWith("/v1/broadcasts") ? ["BROADCAST_NOT_FOUND", "NOT_FOUND"] : ["NOT_FOUND"];
    }
    const codes = [...new Set([...general, ...(byStatus.get(s) ?? [])])];
    if (codes.length) responses[String(s)] = errorResponse(s, codes);
  }

  if (csrf) responses["403"] = { $ref: `#/components/responses/${admin ? "PermissionOrCsrf" : "CsrfTokenInvalid"}` };

  // A route may describe an answer itself (detail.responses); the headers below still apply.
  for (const [status, resp] of Object.entries<Json>(detail.responses ?? {})) responses[status] = { ...responses[status], ...resp };
  // Headers: every answer has a request id; keyed and webhook answers show the caller's limit.
  for (const [status, resp] of Object.entries<Json>(responses)) {
    if (resp.$ref) continue; // a shared entry carries its own headers
    const names = new Set<string>(["X-Request-Id", ...(resp["x-headers"] ?? [])]);
    const st = Number(status);
    if ((authed && st !== 401) || kind === "webhook") RATE_LIMIT_HEADERS.forEach((h) => names.add(h));
    if (st === 429) names.add("Retry-After");
    // Any web page may post to a webhook and read the answer (CORS).
    if (kind === "webhook" && method === "POST") names.add("Access-Control-Allow-Origin").add("Access-Control-Expose-Headers");
    delete resp["x-headers"];
    const h = headersObject(names);
    if (h) resp.headers = h;
  }
  op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return op;
}

/** "message.sent" → "MessageSentEvent" (a component name openapi-typescript keeps as written). */
export const eventSchemaName = (type: string) => `${type.replace(/(^|[._])([a-z])/g, (_, __, c: string) => c.toUpperCase())}Event`;

/**
 * The `webhooks` section (OpenAPI 3.1): one operation per outbound event type, its body a named
 * component schema, so a generated client has a typed body for each event a receiver may get.
 */
function webhooksSection(): { webhooks: Json; schemas: Json } {
  const webhooks: Json = {};
  const schemas: Json = {};
  const header = (name: string, description: string) => ({ name, in: "header", required: true, description, schema: { type: "string" } });
  for (const [type, e] of Object.entries(EVENT_BODIES)) {
    const name = eventSchemaName(type);
    schemas[name] = cleanSchema(e.schema);
    webhooks[type] = {
      post: {
        operationId: `event${name.slice(0, -"Event".length)}`,
        summary: e.summary,
        description: [e.description, EVENT_DELIVERY_TEXT].filter(Boolean).join("\n\n"),
        tags: ["Events"],
        security: [],
        parameters: [
          header("webhook-id", "the event's id: the same on every retry and redelivery (dedupe on it)"),
          header("webhook-timestamp", "Unix time (seconds) of this attempt"),
          header("webhook-signature", "`v1,<base64 signature>`, space-separated when two secrets sign (after a rotation)"),
        ],
        requestBody: { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } } },
        responses: { "2XX": { description: "Received: any 2xx answer acknowledges the event" } },
      },
    };
  }
  return { webhooks, schemas };
}

/** Builds the document from the registered routes. */
export function buildOpenApi(routes: RouteInfo[]): Json {
  const paths: Json = {};
  const add = (path: string, method: string, op: Json) => {
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = op;
  };
  for (const r of routes) {
    if (r.path === "*" || r.method === "ALL" || r.hooks?.detail?.hide) continue;
    const method = r.method.toUpperCase();
    if (!["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].includes(method)) continue;
    // The key-in-path form of the messages routes (/v1/messages/{apiKey}/…) is not a path of its
    // own: as a template it collides with /v1/messages/{id}. Each messages operation names it in
    // x-key-in-path and its description instead (docs/api-decisions.md, "The API document: one source, typed inputs").
    add(openApiPath(r.path), method, operationFor(r));
  }
  const sorted: Json = {};
  for (const k of Object.keys(paths).sort()) sorted[k] = paths[k];

  const events = webhooksSection();
  const errorCodes = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([c, v]) => [c, v.status]));
  const table = Object.entries(ERROR_CATALOGUE)
    .map(([c, v]) => `| ${c} | ${v.status} | ${v.message} |`)
    .join("\n");
  return {
    openapi: "3.1.0",
    info: {
      title: "Textwire API",
      version: VERSION,
      description:
        "Self-hosted form-to-text-message service, API v1. Authenticate with `Authorization: Bearer <API key>`; " +
        "messages routes also accept the key as the first path segment (`/v1/messages/{apiKey}/…`, see each operation's x-key-in-path). " +
        "The form webhook needs no key. Every JSON success answer is `{status: \"success\", message?, data}`.\n\n" +
        "Every error uses one envelope (`ErrorEnvelope`). Error codes:\n\n| code | HTTP status | meaning |\n|---|---|---|\n" +
        table,
      "x-schema-version": SCHEMA_VERSION,
    },
    servers: [{ url: "/", description: "this server" }],
    tags: [...new Set(Object.values(sorted).flatMap((ops: Json) => Object.values<Json>(ops).flatMap((o) => o.tags ?? [])))].map((name) => ({ name })),
    security: [{ bearerAuth: [] }],
    paths: sorted,
    webhooks: events.webhooks,
    components: {
      headers: Object.fromEntries(Object.entries(RESPONSE_HEADERS).map(([n, h]) => [headerComponentName(n), h])),
      responses: sharedResponses(),
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: KEY_FORMAT },
      },
      schemas: {
        ...events.schemas,
        ErrorCode: { type: "string", enum: Object.keys(ERROR_CATALOGUE) },
        ErrorEnvelope: {
          type: "object",
          required: ["status", "message"],
          properties: {
            status: { const: "error" },
            message: { type: "string" },
            code: { $ref: "#/components/schemas/ErrorCode" },
            details: { type: "object", additionalProperties: true, description: "depends on the code, e.g. {field, requirement, provided} for VALIDATION_ERROR, {limit, window, retryAfter} for RATE_LIMIT_EXCEEDED" },
            errors: { type: "array", items: { type: "object", required: ["field", "message"], properties: { field: { type: "string" }, message: { type: "string" } } } },
            retryAfter: { type: "integer", description: "seconds (rate limits)" },
          },
        },
      },
    },
    "x-error-codes": errorCodes,
  };
}
