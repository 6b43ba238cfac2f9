import { Elysia } from "elysia";
import { AppError, databaseBusy, validationError, errorResponse } from "../../errors";
import { redactKeys, type Logger } from "../../lib/log";
import { maybeStateOf } from "../context";

/** "/fields/0/name" → "fields[0].name" */
export function jsonPointerToField(path: string | undefined, fallback: string): string {
  if (!path || path === "/") return fallback;
  return path
    .split("/")
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "");
}

interface SchemaError {
  path?: string;
  message?: string;
  summary?: string;
  value?: unknown;
  schema?: { description?: string; error?: unknown };
}

/** One onError: every failure leaves in the spec's envelope; unknown errors are a logged, safe 500. */
export function errorsPlugin(logger: Logger) {
  return new Elysia({ name: "errors" }).onError({ as: "global" }, ({ code, error, request }) => {
    if (error instanceof AppError) return errorResponse(error);
    // An answer that does not match its documented model is the server's fault: a logged 500.
    const responseMismatch = code === "VALIDATION" && (error as unknown as { type?: string }).type === "response";
    switch (responseMismatch ? "UNKNOWN" : code) {
      case "VALIDATION": {
        const ve = error as unknown as { type: string; all: SchemaError[] };
        const where = ve.type === "query" || ve.type === "property" ? "query" : ve.type === "params" ? "path" : "body";
        const seen = new Set<string>();
        const items: Array<{ field: string; message: string; requirement?: string; provided?: unknown }> = [];
        for (const e of ve.all ?? []) {
          // A schema with its own message (IntParam) names its parameter and range: use them.
          const custom = typeof e.schema?.error === "string" ? e.schema.error : undefined;
          const field = custom && (!e.path || e.path === "/") ? custom.split(" ")[0] : jsonPointerToField(e.path, where);
          const message = custom ?? `${field}: ${e.message ?? "is invalid"}`;
          if (seen.has(message)) continue;
          seen.add(message);
          const range = custom ? /from (-?\d+) to (-?\d+)$/.exec(custom) : null;
          items.push({ field, message, requirement: range ? `integer ${range[1]}-${range[2]}` : e.message, provided: e.value === undefined ? null : e.value });
        }
        return errorResponse(validationError(items.length ? items : [{ field: where, message: `invalid ${where}` }]));
      }
      case "PARSE":
        return errorResponse(
          validationError([{ field: "body", message: "Malformed JSON in request body", requirement: "a valid JSON object", provided: null }], "Malformed JSON in request body"),
        );
      case "NOT_FOUND":
        return errorResponse(new AppError("NOT_FOUND", { message: `No route for ${request.method} ${redactKeys(new URL(request.url).pathname)}` }));
      default: {
        const busy = databaseBusy(error);
        if (busy) return errorResponse(busy);
        const rid = maybeStateOf(request)?.requestId;
        logger.error("unhandled error", { requestId: rid, error: String((error as Error)?.stack ?? error) });
        return errorResponse(new AppError("INTERNAL_ERROR", { details: { requestId: rid } }));
      }
    }
  });
}
