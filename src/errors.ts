/**
 * THE error catalogue: every code the API answers with (docs/api.md, "Error codes"), with its HTTP status and
 * default message. Code throws `new AppError(code, details)`; one handler renders the envelope.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_ERROR: { status: 400, message: "Validation failed" },
  INVALID_TRANSITION: { status: 400, message: "Invalid status transition" },
  AUTHENTICATION_ERROR: { status: 401, message: "Invalid or missing API key" },
  PERMISSION_ERROR: { status: 403, message: "This API key lacks the permission this endpoint requires" },
  CSRF_TOKEN_INVALID: { status: 403, message: "Missing or wrong X-CSRF-Token: reload the dashboard and try again" },
  ORIGIN_NOT_ALLOWED: { status: 403, message: "This form does not accept submissions from this website" },
  NOT_FOUND: { status: 404, message: "Not found" },
  FORM_NOT_FOUND: { status: 404, message: "Form not found" },
  MESSAGE_NOT_FOUND: { status: 404, message: "Message not found" },
  CONTACT_NOT_FOUND: { status: 404, message: "Contact not found" },
  DEVICE_NOT_FOUND: { status: 404, message: "Device not found" },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 404, message: "Webhook endpoint not found" },
  EVENT_NOT_FOUND: { status: 404, message: "Event not found" },
  WEBHOOK_URL_NOT_ALLOWED: { status: 400, message: "This URL cannot receive events" },
  BROADCAST_NOT_FOUND: { status: 404, message: "Broadcast not found" },
  AUTOMATION_NOT_FOUND: { status: 404, message: "Automation not found" },
  AUTOMATION_RUN_NOT_FOUND: { status: 404, message: "No such run of this automation" },
  SESSION_NOT_FOUND: { status: 404, message: "Session not found" },
  KEY_NOT_FOUND: { status: 404, message: "API key not found" },
  PERSON_NOT_FOUND: { status: 404, message: "No such person in this account" },
  KEYWORD_REPLY_NOT_FOUND: { status: 404, message: "Keyword reply not found" },
  SUBMISSION_NOT_FOUND: { status: 404, message: "Submission not found" },
  METHOD_NOT_ALLOWED: { status: 405, message: "This path does not take that method" },
  DUPLICATE_FORM_NAME: { status: 409, message: "A form with this name already exists" },
  DUPLICATE_PHONE_NUMBER: { status: 409, message: "A contact with this phone number already exists" },
  EMAIL_TAKEN: { status: 409, message: "Someone already signs in with this e-mail" },
  LAST_OWNER: { status: 409, message: "The account needs at least one owner: make someone else owner first" },
  COMMON_WORDS_UNCONFIRMED: { status: 409, message: "Some keywords are everyday words customers text anyway; send confirmCommonWords: true to save them" },
  INVALID_STATE: { status: 409, message: "The resource is not in a state that allows this action" },
  AUTOMATION_INACTIVE: { status: 409, message: "This automation is turned off; turn it on before starting it" },
  LEASE_CONFLICT: { status: 409, message: "The lease on this message has moved to another device" },
  RECIPIENT_OPTED_OUT: { status: 409, message: "This number opted out of texts (replied STOP); nothing was queued" },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: "This Idempotency-Key was already used with a different body" },
  PAYLOAD_TOO_LARGE: { status: 413, message: "Request body is too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "Unsupported Content-Type" },
  CAPTCHA_FAILED: { status: 400, message: "The captcha check failed" },
  RATE_LIMIT_EXCEEDED: { status: 429, message: "Rate limit exceeded" },
  QUOTA_EXCEEDED: { status: 429, message: "Monthly message quota reached; raise it with: textwire accounts update ACCOUNT_ID --monthly-quota N" },
  INTERNAL_ERROR: { status: 500, message: "Internal server error" },
  NOT_IMPLEMENTED: { status: 501, message: "This server does not offer that" },
  FORM_DISABLED: { status: 503, message: "This form is not accepting submissions" },
  SERVICE_UNAVAILABLE: { status: 503, message: "Service temporarily unavailable" },
  CAPTCHA_UNAVAILABLE: { status: 503, message: "The captcha provider could not be reached" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldErrorItem {
  field: string;
  message: string;
}

export interface ErrorBody {
  status: "error";
  message: string;
  code?: string;
  details?: Record<string, unknown>;
  errors?: FieldErrorItem[];
  retryAfter?: number;
  [extra: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly errors?: FieldErrorItem[];
  /** Extra top-level members of the envelope (retryAfter, existingContactId). */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers (Retry-After, X-RateLimit-*). */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    opts: {
      message?: string;
      details?: Record<string, unknown>;
      errors?: FieldErrorItem[];
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(opts.message ?? ERROR_CATALOGUE[code].message);
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.details = opts.details;
    this.errors = opts.errors;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { status: "error", message: this.message };
    body.code = this.code;
    if (this.details) body.details = this.details;
    if (this.errors) body.errors = this.errors;
    if (this.extra) Object.assign(body, this.extra);
    return body;
  }
}

/** A 400 VALIDATION_ERROR from a list of field errors: details name the first, errors list all. */
export function validationError(
  errors: Array<FieldErrorItem & { requirement?: string; provided?: unknown }>,
  message?: string,
): AppError {
  const first = errors[0] ?? { field: "body", message: "Invalid request" };
  return new AppError("VALIDATION_ERROR", {
    message: message ?? (errors.length === 1 ? first.message : `Validation failed for ${errors.length} fields`),
    details: {
      field: first.field,
      requirement: first.requirement ?? first.message,
      provided: first.provided ?? null,
    },
    errors: errors.map((e) => ({ field: e.field, message: e.message })),
  });
}

export function errorResponse(err: AppError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: { "Content-Type": "application/json", ...headers, ...err.headers },
  });
}

/**
 * SQLite's "busy"/"locked" after the connection's busy timeout (another process — a CLI command, a
 * restore — held the write lock too long): the server's state, not the client's mistake, and
 * worth a retry, so 503 with `Retry-After` rather than a 500. A failed disk write or fsync is
 * the server's state too (503, nothing acknowledged). Null for anything else.
 */
export function databaseBusy(err: unknown): AppError | null {
  const code = String((err as { code?: unknown })?.code ?? "");
  // The disk failed a write or its fsync: not acknowledged (the write may be lost).
  if (code === "SQLITE_IOERR_FSYNC" || code === "SQLITE_IOERR_WRITE") return notSavedToDisk();
  if (!code.startsWith("SQLITE_BUSY") && !code.startsWith("SQLITE_LOCKED")) return null;
  return unavailable("The database is busy; retry shortly", 1);
}

/** 503 SERVICE_UNAVAILABLE with `Retry-After` (header, details and body agree): the server's state, worth a retry. */
function unavailable(message: string, retryAfterSeconds: number): AppError {
  return new AppError("SERVICE_UNAVAILABLE", {
    message,
    details: { retryAfter: retryAfterSeconds },
    extra: { retryAfter: retryAfterSeconds },
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
}

/**
 * The disk refused to make a committed write durable (fsync failed): the write may be lost, so it
 * is not acknowledged. 503 with `Retry-After`; the server's log has the cause.
 */
export function notSavedToDisk(retryAfterSeconds = 5): AppError {
  return unavailable("The server could not save this to disk; retry shortly", retryAfterSeconds);
}

/**
 * The read barrier's bound passed: submissions the webhook acknowledged are not applied
 * yet (the applier is stuck or restarting), so an API answer now could miss them. 503 with
 * `Retry-After`; nothing was read or changed.
 */
export function submissionsNotApplied(retryAfterSeconds = 2): AppError {
  return unavailable("Recent form submissions are still being saved; retry in a few seconds", retryAfterSeconds);
}
