/**
 * Accepting a webhook submission, in one place: `accept` takes what the request carried and
 * answers it or throws the AppError that refuses it. In order: the form by its address, active,
 * allowed origin, the Idempotency-Key (a replay answers at once), the per-IP and per-form rate
 * limits, the body, the honeypot, the captcha, then the write (services/submissions/write.ts:
 * fields and protections, the monthly quota, suppression, the duplicate window, the
 * per-recipient and daily limits, scheduling, the intake row). The route only translates HTTP to
 * `AcceptInput` and the answer (or AppError) to a response (docs/api-decisions.md, "One home per
 * rule: accepting a submission").
 *
 * Hot path (docs/api-decisions.md, "The request path outside the write (lean path)"): prepared statements only, no query
 * builder, nothing allocated per request beyond the input and the answer.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { AppError, validationError } from "../errors";
import { refusalFor } from "../domain/visitor-words";
import type { GroupCommitWriter } from "../db/group-commit";
import type { MessageQueue } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import type { StageTiming } from "../lib/stage-timing";
import { rateLimitDetails, rateLimitHeaders, type WebhookLimiter } from "../limits/api-limiter";
import { CAPTCHA_TOKEN_FIELDS, honeypotFilled, normalizeOrigin } from "../domain/protection";
import type { MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";
import type { SubmissionIntake } from "./intake/intake";
import type { CaptchaVerifier } from "./captcha";
import type { SpamCounter } from "./spam";
import type { Metrics } from "./metrics";
import type { IntakeStore } from "../db/stores/intake";
import type { IntakeEntry } from "./intake/applier";
import type { SubmissionStore } from "../db/stores/submissions";
import type { IdempotencyStore } from "../db/stores/idempotency";
import { WebhookFormLookup, type WebhookForm } from "./submissions/form-lookup";
import { SubmissionWrite, type SubmissionAnswer, type SubmissionInput } from "./submissions/write";
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_TTL_MS, keyReused } from "./submissions/idempotency";

export type { WebhookForm } from "./submissions/form-lookup";
export type { SubmissionAnswer, SubmissionInput } from "./submissions/write";
export { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_SWEEP_MS, IDEMPOTENCY_TTL_MS } from "./submissions/idempotency";

const MINUTE_MS = 60_000;

/** What a submission request carries, in HTTP-free terms (the route fills it in). */
export interface AcceptInput {
  /** The address's token (the form id of a never-rotated form, else its webhook token). */
  token: string;
  /** The Origin and Referer headers (allowedOrigins). */
  origin: string | null;
  referer: string | null;
  /** The Idempotency-Key header. */
  idempotencyKey: string | null;
  contentType: string | null;
  userAgent: string | null;
  clientIp: string;
  /** The answer's headers: the rate-limit figures are added here, refusals included. */
  headers: Record<string, string>;
  /** Reads the body (within the webhook's size bound); called once — first with an Idempotency-Key, else after the limits. */
  readBody: () => Promise<Uint8Array>;
  /** Decodes the body by its content type: the posted object and the text stored as webhookData. */
  decode: (contentType: string | null, bytes: Uint8Array) => { body: Record<string, unknown>; rawJson: string };
  /** Set by `accept` once the form is found: the route's CORS and a browser's pages need it, refusals included. */
  form: WebhookForm | null;
}

/** The answer, as sent. */
export interface AcceptResult {
  status: number;
  body: string;
  /** An Idempotency-Key replay (or a retried key answered from the first write): nothing new was created. */
  replayed: boolean;
}

/** What `accept` guards with besides the database: the rate limiters, the captcha, the honeypot's counter. */
export interface AcceptGuards {
  /** Per form (the server's --webhook-limit), and per form and IP (the form's ipLimitPerMinute). */
  formLimiter: WebhookLimiter;
  ipLimiter: WebhookLimiter;
  formLimitPerMinute: number;
  captcha: CaptchaVerifier;
  spam: SpamCounter;
  /** Read when a honeypot catch is counted (the metrics are built after the services). */
  metrics: () => Metrics;
  /** --stage-timing: the lookup and validation stages are timed here. */
  timing: StageTiming | null;
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

export class SubmissionService {
  private readonly lookup: WebhookFormLookup;
  private readonly idempotency: IdempotencyStore;
  private readonly write: SubmissionWrite;

  constructor(
    sqlite: Database,
    private readonly clock: Clock,
    private readonly writer: GroupCommitWriter,
    private readonly queue: MessageQueue,
    seq: Sequence,
    quota: MonthlyQuota,
    private readonly sendRatePerMinute: number,
    leases: Pick<LeaseService, "notify">,
    intake: SubmissionIntake,
    private readonly guards: AcceptGuards,
    stores: { submissions: SubmissionStore; idempotency: IdempotencyStore; intake: IntakeStore<IntakeEntry> },
  ) {
    this.lookup = new WebhookFormLookup(sqlite, stores.submissions);
    this.idempotency = stores.idempotency;
    this.write = new SubmissionWrite(clock, writer, queue, seq, quota, sendRatePerMinute, leases, intake, stores.intake, stores.submissions, this.idempotency);
  }

  /**
   * The whole acceptance of a submission. Resolves with the answer once it is on disk (a replay
   * once the batch it was read from is); throws AppError for every refusal, with the form's
   * limit figures in `input.headers`.
   */
  async accept(input: AcceptInput): Promise<AcceptResult> {
    try {
      return await this.acceptOrRefuse(input);
    } catch (err) {
      throw inVisitorWords(err);
    }
  }

  private async acceptOrRefuse(input: AcceptInput): Promise<AcceptResult> {
    const timing = this.guards.timing;
    const l0 = timing ? performance.now() : 0;
    const form = this.lookup.find(input.token);
    if (timing) timing.add("lookup", performance.now() - l0);
    if (!form) {
      throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: input.token.slice(0, 100) } });
    }
    input.form = form;
    const p = form.protection;
    if (!form.isActive) {
      this.showLimit(form.id, input.headers);
      throw new AppError("FORM_DISABLED", {
        message: "This form is not accepting submissions",
        details: { formId: form.id, action: "Activate the form (PUT /v1/forms/<id> with isActive: true) to accept submissions" },
      });
    }
    if (p.allowedOrigins !== null) {
      const origin = postingOrigin(input.origin, input.referer);
      if (origin === null || !p.allowedOrigins.includes(origin)) {
        this.showLimit(form.id, input.headers);
        throw new AppError("ORIGIN_NOT_ALLOWED", {
          message: "This form only accepts submissions from the websites listed in its allowedOrigins setting",
          details: { provided: origin ?? "none", allowed: p.allowedOrigins },
        });
      }
    }
    const key = input.idempotencyKey ?? undefined;
    if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
      this.showLimit(form.id, input.headers);
      throw validationError([
        {
          field: "Idempotency-Key",
          message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
          requirement: `1-${IDEMPOTENCY_KEY_MAX} characters`,
          provided: key.length,
        },
      ]);
    }
    // With a key the body is read first: a replay must be the same request (else 422).
    let bytes: Uint8Array | undefined;
    let bodyHash: string | undefined;
    if (key !== undefined) {
      bytes = await input.readBody();
      bodyHash = sha256(bytes);
      let prior;
      try {
        prior = this.replay(form.id, key, bodyHash);
      } catch (err) {
        this.showLimit(form.id, input.headers);
        throw err;
      }
      if (prior) {
        this.showLimit(form.id, input.headers);
        await this.durable();
        return { status: prior.status, body: prior.body, replayed: true };
      }
    }
    const { formLimiter, ipLimiter } = this.guards;
    const ipKey = p.ipLimitPerMinute !== null ? `${form.id} ${input.clientIp}` : "";
    if (p.ipLimitPerMinute !== null) {
      const ip = ipLimiter.peek(ipKey, p.ipLimitPerMinute);
      if (!ip.allowed) {
        Object.assign(input.headers, rateLimitHeaders(ip));
        throw new AppError("RATE_LIMIT_EXCEEDED", {
          message: `More than ${ip.limit} submissions per minute from your address to this form; retry in ${ip.retryAfterSeconds} seconds`,
          details: { ...rateLimitDetails(ip), scope: "ip" },
          extra: { retryAfter: ip.retryAfterSeconds },
        });
      }
    }
    const rl = formLimiter.check(form.id, this.guards.formLimitPerMinute);
    Object.assign(input.headers, rateLimitHeaders(rl));
    if (!rl.allowed) {
      throw new AppError("RATE_LIMIT_EXCEEDED", {
        message: `More than ${rl.limit} submissions per minute for this form; retry in ${rl.retryAfterSeconds} seconds`,
        details: { ...rateLimitDetails(rl), scope: "form" },
        extra: { retryAfter: rl.retryAfterSeconds },
      });
    }
    if (p.ipLimitPerMinute !== null) ipLimiter.check(ipKey, p.ipLimitPerMinute);
    bytes ??= await input.readBody();
    const { body, rawJson } = input.decode(input.contentType, bytes);
    if (honeypotFilled(body, p.honeypotField)) {
      this.guards.spam.record(form.id);
      this.guards.metrics().count("textwire_webhook_spam_total");
      const fake = this.spamAnswer(form);
      return { status: fake.status, body: fake.body, replayed: false };
    }
    let captchaToken: unknown;
    if (p.captcha !== null) {
      const field = CAPTCHA_TOKEN_FIELDS[p.captcha.provider];
      captchaToken = body[field];
      // The widget's token is not a form value: it is neither stored nor validated as one.
      delete body[field];
    }
    if (p.honeypotField !== null) delete body[p.honeypotField];
    if (p.captcha !== null) await this.guards.captcha.verify(p.captcha, captchaToken, input.clientIp);
    const v0 = timing ? performance.now() : 0;
    const submitted = this.write.submit(form, {
      body,
      rawJson,
      ipAddress: input.clientIp,
      userAgent: input.userAgent,
      idempotencyKey: key,
      bodyHash,
    });
    // submit() runs synchronously up to handing its job to the writer.
    if (timing) timing.add("validation", performance.now() - v0);
    const answer = await submitted;
    return { status: answer.status, body: answer.body, replayed: !answer.created };
  }

  /** Answers that spend no token (disabled form, bad key, replay) still show the form's limit. */
  private showLimit(formId: string, headers: Record<string, string>): void {
    Object.assign(headers, rateLimitHeaders(this.guards.formLimiter.peek(formId, this.guards.formLimitPerMinute)));
  }

  /** The form behind an address token (also the CORS preflight's); null when unknown or malformed. */
  findForm(token: string): WebhookForm | null {
    return this.lookup.find(token);
  }

  /**
   * The stored first answer for (form, key), if it is younger than 24 hours; a key first used
   * with another body is refused (422 IDEMPOTENCY_KEY_REUSED).
   */
  replay(formId: string, key: string, bodyHash?: string): SubmissionAnswer | null {
    const row = this.idempotency.find(formId, key);
    if (!row || row.createdAt < new Date(this.clock() - IDEMPOTENCY_TTL_MS).toISOString()) return null;
    if (bodyHash !== undefined && row.bodyHash !== null && row.bodyHash !== bodyHash) throw keyReused(key);
    return { status: row.status, body: row.body, created: false };
  }

  /**
   * Resolves once every commit so far is on disk: a replayed answer read from a batch whose
   * flush has not returned yet (src/db/group-commit.ts) waits for it, as its first answer did.
   */
  durable(): Promise<void> {
    return this.writer.durable();
  }

  /** Purges idempotency keys older than 24 hours. */
  sweepIdempotencyKeys(): number {
    return this.idempotency.sweep(new Date(this.clock() - IDEMPOTENCY_TTL_MS).toISOString());
  }

  /**
   * The write alone, for a form already looked up and a body already checked (`accept` calls it
   * last; the service tests and the applier bench call it directly).
   */
  submit(form: WebhookForm, input: SubmissionInput): Promise<SubmissionAnswer> {
    return this.write.submit(form, input);
  }

  /**
   * What a honeypot catch is answered: shaped exactly like a success (random ids, a plausible
   * position), nothing written.
   */
  spamAnswer(form: WebhookForm): SubmissionAnswer {
    const now = this.clock();
    const position = this.queue.countByPriority(form.accountId);
    const queuePosition = Object.values(position).reduce((a, b) => a + b, 0) + 1;
    return {
      status: 200,
      body: JSON.stringify({
        status: "success",
        message: "Submission received; message queued",
        data: {
          messageId: newId(),
          contactId: newId(),
          queuePosition,
          estimatedDelivery: new Date(now + Math.ceil(queuePosition / Math.max(1, this.sendRatePerMinute)) * MINUTE_MS).toISOString(),
        },
      }),
      created: true,
      queued: false,
    };
  }
}

/**
 * A refusal as the visitor reads it: the whole post's refusals in plain words (the developer's
 * figures stay in `details`, `retryAfter` and the headers). Field problems already carry the
 * visitor's words (checkSubmission); a VALIDATION_ERROR about the request itself (the body's
 * shape, the Idempotency-Key) is a website developer's mistake and keeps its words.
 */
function inVisitorWords(err: unknown): unknown {
  if (!(err instanceof AppError) || err.code === "VALIDATION_ERROR") return err;
  return new AppError(err.code, { message: refusalFor(err.code), details: err.details, errors: err.errors, extra: err.extra, headers: err.headers });
}

/** The posting page's origin: the Origin header, else the Referer's origin; null when neither. */
function postingOrigin(origin: string | null, referer: string | null): string | null {
  if (origin !== null && origin !== "null") return normalizeOrigin(origin);
  if (origin === "null") return null;
  if (!referer) return null;
  try {
    return normalizeOrigin(new URL(referer).origin);
  } catch {
    return null;
  }
}
