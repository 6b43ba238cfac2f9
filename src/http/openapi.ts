/**
 * The OpenAPI 3.1 document, GENERATED from the Elysia app's registered routes (`app.routes`):
 * method, path, the TypeBox params/query/body/response schemas and `detail`. A route added by any
 * module appears here without anyone touching this file, so the docs cannot drift from behaviour.
 * Error responses come from the one catalogue (src/errors.ts) and the access rules (access.ts).
 */
import { ERROR_CATALOGUE, type ErrorCode } from "../errors";
import { VERSION } from "../version";
import { SCHEMA_VERSION } from "../db/migrate";
import { classify, requiredPermission } from "./access";
import { KEY_FORMAT } from "../services/accounts";

export interface RouteInfo {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

type Json = Record<string, any>;

/** Elysia coerces query/path values and adds a string twin (format integer/boolean/…) to schemas. */
const COERCION_FORMATS = new Set(["integer", "numeric", "boolean", "ObjectString", "ArrayString", "ArrayQuery", "date-time-string"]);

/** A plain JSON Schema copy: no TypeBox symbols, no coercion twins. */
export function cleanSchema(schema: unknown): Json | undefined {
  if (schema === undefined || schema === null) return undefined;
  const plain = JSON.parse(JSON.stringify(schema));
  const walk = (s: any): any => {
    if (Array.isArray(s)) return s.map(walk);
    if (!s || typeof s !== "object") return s;
    const out: Json = {};
    // `error` is the schema's own 400 message (IntParam), not a JSON Schema keyword.
    for (const [k, v] of Object.entries(s)) if (k !== "error") out[k] = walk(v);
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

function errorResponse(status: number, only?: ErrorCode[]): Json {
  const codes = only ?? codesByStatus.get(status) ?? [];
  return {
    description: `${STATUS_TEXT[status] ?? "Error"}. Codes: ${codes.join(", ")}`,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
    "x-error-codes": codes,
  };
}

function successSchema(): Json {
  return {
    type: "object",
    properties: { status: { const: "success" }, message: { type: "string" }, data: { type: "object" } },
    required: ["status"],
  };
}

function isSchema(x: any): boolean {
  return x && typeof x === "object" && ("type" in x || "anyOf" in x || "oneOf" in x || "allOf" in x || "$ref" in x || "properties" in x || "const" in x);
}

function operationFor(r: RouteInfo, pathKey = false): Json {
  const hooks = r.hooks ?? {};
  const detail: Json = hooks.detail ?? {};
  const oaPath = openApiPath(r.path);
  const concrete = oaPath.replace(/\{[^}]+\}/g, "x");
  const kind = classify(concrete);
  const authed = kind === "api" || kind === "messages";
  const need = authed ? requiredPermission(r.method, concrete).permission : "none";
  const admin = need === "admin_access" || need === "operator";

  const parameters: Json[] = [];
  if (pathKey) {
    parameters.push({ name: "apiKey", in: "path", required: true, description: `the API key (${KEY_FORMAT.replace(/^Authorization: Bearer /, "")}); or leave this segment out and send Authorization: Bearer`, schema: { type: "string" } });
  }
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
  const query = cleanSchema(hooks.query);
  if (query?.properties) {
    const required = new Set<string>(query.required ?? []);
    for (const [name, s] of Object.entries<Json>(query.properties)) {
      const { description, ...schema } = s;
      parameters.push({ name, in: "query", required: required.has(name), ...(description ? { description } : {}), schema });
    }
  }

  const op: Json = {
    operationId: `${r.method.toLowerCase()}${oaPath.replace(/\{([^}]+)\}/g, "By_$1").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}${pathKey ? "WithPathKey" : ""}`,
    summary: detail.summary ?? `${r.method} ${oaPath}`,
    ...(detail.description || admin
      ? { description: [detail.description, admin ? (need === "operator" ? "Requires an **operator** key (`textwire keys create --operator`): it covers every account." : "Requires an **admin_access** key.") : undefined].filter(Boolean).join("\n\n") }
      : {}),
    tags: detail.tags ?? [oaPath.split("/")[2] ?? "Other"],
    "x-required-permission": need,
    parameters,
  };
  if (detail.deprecated) op.deprecated = true;
  if (!authed || pathKey) op.security = [];

  const body = cleanSchema(hooks.body);
  if (body) {
    // The webhook also takes plain HTML form posts (CONTRACT §5).
    const types = kind === "webhook" ? ["application/json", "application/x-www-form-urlencoded"] : ["application/json"];
    op.requestBody = { required: true, content: Object.fromEntries(types.map((t) => [t, { schema: body }])) };
  } else if (r.method === "POST" && oaPath === "/v1/contacts/import") {
    op.requestBody = { required: true, content: { "text/csv": { schema: { type: "string", description: "CSV with the export's own columns" } } } };
  }

  const responses: Json = {};
  const declared = hooks.response;
  if (declared && isSchema(declared)) responses["200"] = { description: "Success", content: { "application/json": { schema: cleanSchema(declared) } } };
  else if (declared && typeof declared === "object") {
    for (const [status, s] of Object.entries(declared)) {
      responses[status] = { description: Number(status) < 300 ? "Success" : STATUS_TEXT[Number(status)] ?? "Response", content: { "application/json": { schema: cleanSchema(s) } } };
    }
  }
  if (!Object.keys(responses).some((s) => s.startsWith("2"))) {
    const status = r.method === "POST" && /^\/v1\/(forms|contacts)$/.test(oaPath) ? "201" : "200";
    responses[status] = { description: "Success", content: { "application/json": { schema: successSchema() } } };
  }
  const errors = new Set<number>([500]);
  if (body || query || params || r.method !== "GET") errors.add(400);
  if (authed) errors.add(401).add(429);
  if (admin) errors.add(403);
  if (oaPath.includes("{")) errors.add(404);
  if (op.requestBody) errors.add(400).add(413).add(415);
  if (kind === "webhook") errors.add(400).add(404).add(413).add(415).add(429).add(503);
  for (const s of [...errors].sort()) {
    if (responses[String(s)]) continue;
    let only: ErrorCode[] | undefined;
    if (s === 404) {
      only = kind === "webhook" ? ["NOT_FOUND"] : oaPath.startsWith("/v1/forms") ? ["FORM_NOT_FOUND", "NOT_FOUND"] : oaPath.startsWith("/v1/messages") ? ["MESSAGE_NOT_FOUND", "NOT_FOUND"] : oaPath.startsWith("/v1/contacts") ? ["CONTACT_NOT_FOUND", "NOT_FOUND"] : ["NOT_FOUND"];
    }
    if (s === 503 && kind === "webhook") only = ["FORM_DISABLED", "SERVICE_UNAVAILABLE"];
    responses[String(s)] = errorResponse(s, only);
  }
  // Conflicts the catalogue knows for these resources.
  if (r.method !== "GET" && (oaPath.startsWith("/v1/forms") || oaPath.startsWith("/v1/contacts") || oaPath.startsWith("/v1/messages")) && kind !== "webhook") {
    responses["409"] ??= errorResponse(409);
  }
  for (const [status, resp] of Object.entries<Json>(detail.responses ?? {})) responses[status] = { ...responses[status], ...resp };
  op.responses = responses;
  return op;
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
    if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(method)) continue;
    const oaPath = openApiPath(r.path);
    add(oaPath, method, operationFor(r));
    // Messages routes also take the key as the first path segment (the spec's form).
    if (oaPath === "/v1/messages" || oaPath.startsWith("/v1/messages/")) {
      add("/v1/messages/{apiKey}" + oaPath.slice("/v1/messages".length), method, operationFor(r, true));
    }
  }
  const sorted: Json = {};
  for (const k of Object.keys(paths).sort()) sorted[k] = paths[k];

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
        "messages routes also accept the key as the first path segment. The form webhook needs no key.\n\n" +
        "Every error uses one envelope (`ErrorEnvelope`). Error codes:\n\n| code | HTTP status | meaning |\n|---|---|---|\n" +
        table,
      "x-schema-version": SCHEMA_VERSION,
    },
    servers: [{ url: "/", description: "this server" }],
    tags: [...new Set(Object.values(sorted).flatMap((ops: Json) => Object.values<Json>(ops).flatMap((o) => o.tags ?? [])))].map((name) => ({ name })),
    security: [{ bearerAuth: [] }],
    paths: sorted,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: KEY_FORMAT },
      },
      schemas: {
        ErrorCode: { type: "string", enum: Object.keys(ERROR_CATALOGUE) },
        ErrorEnvelope: {
          type: "object",
          required: ["status", "message"],
          properties: {
            status: { const: "error" },
            message: { type: "string" },
            code: { $ref: "#/components/schemas/ErrorCode" },
            details: { type: "object", description: "depends on the code, e.g. {field, requirement, provided} for VALIDATION_ERROR, {limit, window, retryAfter} for RATE_LIMIT_EXCEEDED" },
            errors: { type: "array", items: { type: "object", required: ["field", "message"], properties: { field: { type: "string" }, message: { type: "string" } } } },
            retryAfter: { type: "integer", description: "seconds (rate limits)" },
          },
        },
      },
    },
    "x-error-codes": errorCodes,
  };
}
