/**
 * Webhook submissions: a validated posting becomes a contact (created or merged), a submission
 * record and a queued message — written through the group-commit writer, so a 200 is only sent
 * once all three are on disk. Hot path: prepared statements only, no query builder.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { AppError, validationError } from "../errors";
import { WriterClosedError, type GroupCommitWriter } from "../db/group-commit";
import type { MessageQueue } from "../queue/priority-queue";
import { PRIORITY_RANK } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import { validateSubmission, type FieldDef } from "../domain/submission";
import { resolveFormSettings, type FormSettings } from "../domain/form-definition";
import { builtinVariables, renderTemplate } from "../domain/template";
import { smsInfo } from "../domain/sms-encoding";
import { contactSearchText } from "../domain/contact-search";
import { deferForDailyLimit } from "../domain/daily-limit";
import { checkCountry, checkInsertedValues, resolveProtection, type ProtectionSettings } from "../domain/protection";
import { afterQuietHours } from "../domain/quiet-hours";
import { templateVariables } from "../domain/template";
import { UUID_RE } from "../lib/ids";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";
import { emitSubmission } from "./event-payloads";
import { isConsentGiven } from "../domain/keywords";
import { webhookFormCache, type WebhookFormCache } from "../db/webhook-form-cache";

/** Idempotency-Key replays last this long (CONTRACT §5). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const IDEMPOTENCY_KEY_MAX = 255;
/** How often expired idempotency keys are purged. */
export const IDEMPOTENCY_SWEEP_MS = 3_600_000;
const MINUTE_MS = 60_000;

export interface WebhookForm {
  id: string;
  accountId: string;
  name: string;
  messageTemplate: string;
  isActive: boolean;
  fields: FieldDef[];
  settings: FormSettings;
  updatedAt: string;
  /** The owning account's monthly quota; null = none. */
  monthlyQuota: number | null;
  /** Public-form protections (issue 9), defaults filled in. */
  protection: ProtectionSettings;
  /** The template's placeholder names (the values a message inserts). */
  variables: string[];
}

export interface SubmissionInput {
  /** The posted object (JSON object, or the url-encoded pairs). */
  body: Record<string, unknown>;
  /** What to store as webhookData: the posted JSON text, or the pairs as JSON. */
  rawJson: string;
  ipAddress: string;
  userAgent: string | null;
  idempotencyKey?: string;
  /** SHA-256 of the request body, stored with an Idempotency-Key (a reuse must match it). */
  bodyHash?: string;
}

/** The answer to a submission, as sent (and as replayed for an Idempotency-Key). */
export interface SubmissionAnswer {
  status: number;
  body: string;
  /** False for a replay: nothing was created. */
  created: boolean;
  messageId?: string;
  contactId?: string;
  /** A new message went into the queue (not a duplicate, not suppressed, not a replay). */
  queued?: boolean;
}

interface FormRow {
  id: string;
  account_id: string;
  name: string;
  message_template: string;
  is_active: number;
  fields: string;
  settings: string;
  updated_at: string;
  monthly_quota: number | null;
}

/** The answer to a refused Idempotency-Key reuse: nothing is written. */
function keyReused(key: string): AppError {
  return new AppError("IDEMPOTENCY_KEY_REUSED", {
    message: "This Idempotency-Key was already used with a different body; use a new key for a new submission",
    details: { field: "Idempotency-Key", provided: key.slice(0, 100) },
  });
}

interface ContactRow {
  id: string;
  opted_out: number;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  custom_fields: string;
  source: string | null;
}

const FORM_CACHE_MAX = 10_000;

export class SubmissionService {
  private readonly formById: Statement<FormRow, [string]>;
  private readonly formByToken: Statement<FormRow, [string]>;
  private readonly idemGet: Statement<{ status: number; body: string; created_at: string; body_hash: string | null }, [string, string]>;
  private readonly idemDelete: Statement<unknown, [string, string]>;
  private readonly idemInsert: Statement<unknown, [string, string, number, string, string | null, string]>;
  private readonly lastMessageTo: Statement<{ id: string; scheduled_for: string; sent_at: string | null; status: string }, [string, string, string, string]>;
  private readonly countRecentTo: Statement<{ n: number }, [string, string, string]>;
  private readonly idemSweep: Statement<unknown, [string]>;
  private readonly contactByPhone: Statement<ContactRow, [string, string]>;
  private readonly contactInsert: Statement<unknown, any[]>;
  private readonly contactUpdate: Statement<unknown, any[]>;
  private readonly messageInsert: Statement<unknown, any[]>;
  private readonly submissionInsert: Statement<unknown, any[]>;
  private readonly countScheduled: Statement<{ n: number }, [string, string, string]>;
  /** Whole lookups by address token (src/db/webhook-form-cache.ts says how it stays true). */
  private readonly lookups: WebhookFormCache<WebhookForm>;
  /** Parsed fields/settings per form, valid while updated_at is unchanged. */
  private readonly formCache = new Map<
    string,
    { updatedAt: string; fields: FieldDef[]; settings: FormSettings; protection: ProtectionSettings; variables: string[] }
  >();

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly writer: GroupCommitWriter,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly quota: MonthlyQuota,
    private readonly sendRatePerMinute: number,
    private readonly leases: Pick<LeaseService, "notify">,
  ) {
    this.lookups = webhookFormCache<WebhookForm>(sqlite);
    this.formById = sqlite.prepare(
      `SELECT f.id, f.account_id, f.name, f.message_template, f.is_active, f.fields, f.settings, f.updated_at, a.monthly_quota
         FROM forms f JOIN accounts a ON a.id = f.account_id WHERE f.id = ? AND f.webhook_token IS NULL`,
    );
    this.formByToken = sqlite.prepare(
      `SELECT f.id, f.account_id, f.name, f.message_template, f.is_active, f.fields, f.settings, f.updated_at, a.monthly_quota
         FROM forms f JOIN accounts a ON a.id = f.account_id WHERE f.webhook_token = ?`,
    );
    this.idemGet = sqlite.prepare("SELECT status, body, created_at, body_hash FROM idempotency_keys WHERE form_id = ? AND key = ?");
    this.idemDelete = sqlite.prepare("DELETE FROM idempotency_keys WHERE form_id = ? AND key = ?");
    this.idemInsert = sqlite.prepare("INSERT INTO idempotency_keys (form_id, key, status, body, body_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    this.lastMessageTo = sqlite.prepare(
      `SELECT id, scheduled_for, sent_at, status FROM messages
        WHERE account_id = ? AND recipient_phone = ? AND form_id = ? AND created_at >= ? AND status IN ('queued', 'sent')
        ORDER BY created_at DESC LIMIT 1`,
    );
    this.countRecentTo = sqlite.prepare(
      "SELECT count(*) AS n FROM messages WHERE account_id = ? AND recipient_phone = ? AND created_at >= ? AND status IN ('queued', 'sent')",
    );
    this.idemSweep = sqlite.prepare("DELETE FROM idempotency_keys WHERE created_at < ?");
    this.contactByPhone = sqlite.prepare(
      "SELECT id, first_name, last_name, email, custom_fields, source, opted_out FROM contacts WHERE account_id = ? AND phone_number = ?",
    );
    this.contactInsert = sqlite.prepare(
      `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at, consent)
       VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?, ?)`,
    );
    this.contactUpdate = sqlite.prepare(
      `UPDATE contacts SET first_name = ?, last_name = ?, email = ?, custom_fields = ?, source = ?, search_text = ?, updated_at = ?
        WHERE id = ?`,
    );
    this.messageInsert = sqlite.prepare(
      `INSERT INTO messages (id, account_id, form_id, form_name, contact_id, content, recipient_phone, recipient_name,
         status, priority, priority_rank, webhook_data, template_used, scheduled_for, retry_count, metadata, seq,
         lease_expiries, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)`,
    );
    this.submissionInsert = sqlite.prepare(
      "INSERT INTO submissions (id, account_id, form_id, contact_id, message_id, new_contact, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.countScheduled = sqlite.prepare(
      "SELECT count(*) AS n FROM messages WHERE form_id = ? AND scheduled_for >= ? AND scheduled_for < ?",
    );
  }

  /**
   * The webhook's lookup by the address's token (the credential): the form id of a form never
   * rotated, else its current webhook token. Null when unknown or malformed.
   */
  findForm(token: string): WebhookForm | null {
    if (!UUID_RE.test(token)) return null;
    const hit = this.lookups.get(token.toLowerCase());
    if (hit !== undefined) return hit;
    const row = this.formById.get(token.toLowerCase()) ?? this.formByToken.get(token.toLowerCase());
    if (!row) return null;
    let parsed = this.formCache.get(row.id);
    if (parsed === undefined || parsed.updatedAt !== row.updated_at) {
      if (this.formCache.size >= FORM_CACHE_MAX) this.formCache.clear();
      const raw = JSON.parse(row.settings);
      parsed = {
        updatedAt: row.updated_at,
        fields: JSON.parse(row.fields),
        settings: resolveFormSettings(raw),
        protection: resolveProtection(raw ?? {}),
        variables: templateVariables(row.message_template),
      };
      this.formCache.set(row.id, parsed);
    }
    const form: WebhookForm = {
      id: row.id,
      accountId: row.account_id,
      name: row.name,
      messageTemplate: row.message_template,
      isActive: row.is_active === 1,
      fields: parsed.fields,
      settings: parsed.settings,
      updatedAt: row.updated_at,
      monthlyQuota: row.monthly_quota,
      protection: parsed.protection,
      variables: parsed.variables,
    };
    this.lookups.set(token.toLowerCase(), form);
    return form;
  }

  /**
   * The stored first answer for (form, key), if it is younger than 24 hours; a key first used
   * with another body is refused (422 IDEMPOTENCY_KEY_REUSED).
   */
  replay(formId: string, key: string, bodyHash?: string): SubmissionAnswer | null {
    const row = this.idemGet.get(formId, key);
    if (!row || row.created_at < new Date(this.clock() - IDEMPOTENCY_TTL_MS).toISOString()) return null;
    if (bodyHash !== undefined && row.body_hash !== null && row.body_hash !== bodyHash) throw keyReused(key);
    return { status: row.status, body: row.body, created: false };
  }

  /** Purges idempotency keys older than 24 hours. */
  sweepIdempotencyKeys(): number {
    return this.idemSweep.run(new Date(this.clock() - IDEMPOTENCY_TTL_MS).toISOString()).changes;
  }

  /**
   * Validates, then queues the write and resolves once it is committed. Throws AppError for
   * every client mistake (400 validation, 429 quota, 404 when the form vanished meanwhile).
   */
  async submit(form: WebhookForm, input: SubmissionInput): Promise<SubmissionAnswer> {
    const result = validateSubmission(input.body, form.fields);
    if (!result.ok) throw validationError(result.errors);
    const v = result.value;
    const now = this.clock();
    const settings = form.settings;
    const protection = form.protection;
    const refused = checkInsertedValues(v, form.variables, form.fields, protection.allowLinksInValues);
    if (protection.allowedCountries !== null) {
      const c = checkCountry(v.phoneNumber, protection.allowedCountries);
      if (c) refused.unshift(c);
    }
    if (refused.length > 0) throw validationError(refused);

    const vars: Record<string, string> = {
      ...builtinVariables({
        firstName: v.firstName,
        lastName: v.lastName,
        email: v.email,
        phoneNumber: v.phoneNumber,
        source: v.source,
        formName: form.name,
        now,
        timezone: settings.timezone,
      }),
      ...v.custom,
    };
    const rendered = renderTemplate(form.messageTemplate, vars);
    const sms = smsInfo(rendered.content);
    const metadata = JSON.stringify({
      messageLength: rendered.content.length,
      variablesUsed: rendered.variablesUsed,
      source: "webhook",
      ipAddress: input.ipAddress,
      userAgent: input.userAgent,
      encoding: sms.encoding,
      segments: sms.segments,
    });
    const nowIso = new Date(now).toISOString();
    const priority = settings.defaultPriority;
    const key = input.idempotencyKey;

    const refusal = this.quota.reserve(form.accountId, form.monthlyQuota);
    if (refusal) throw quotaExceeded(refusal, this.clock());
    const reserved = form.monthlyQuota !== null;
    let answer: SubmissionAnswer;
    try {
      answer = await this.writer.submit<SubmissionAnswer>({
        run: () => {
          if (key !== undefined) {
            const prior = this.idemGet.get(form.id, key);
            if (prior) {
              if (prior.created_at >= new Date(now - IDEMPOTENCY_TTL_MS).toISOString()) {
                if (input.bodyHash !== undefined && prior.body_hash !== null && prior.body_hash !== input.bodyHash) throw keyReused(key);
                return { status: prior.status, body: prior.body, created: false };
              }
              this.idemDelete.run(form.id, key);
            }
          }
          // Contact: create, or merge into the account's contact with this phone.
          const existing = this.contactByPhone.get(form.accountId, v.phoneNumber);
          let contactId: string;
          let firstName: string | null;
          let lastName: string | null;
          if (existing) {
            contactId = existing.id;
            firstName = v.firstName ?? existing.first_name;
            lastName = v.lastName ?? existing.last_name;
            const email = v.email ?? existing.email;
            // Custom fields merge: posted values win, the others stay.
            const custom =
              Object.keys(v.custom).length > 0 ? JSON.stringify({ ...JSON.parse(existing.custom_fields), ...v.custom }) : existing.custom_fields;
            const source = existing.source ? existing.source : (v.source ?? null);
            this.contactUpdate.run(
              firstName,
              lastName,
              email,
              custom,
              source,
              contactSearchText({ firstName, lastName, email, phoneNumber: v.phoneNumber }),
              nowIso,
              contactId,
            );
          } else {
            contactId = newId();
            firstName = v.firstName ?? null;
            lastName = v.lastName ?? null;
            this.contactInsert.run(
              contactId,
              form.accountId,
              v.phoneNumber,
              firstName,
              lastName,
              v.email ?? null,
              form.id,
              JSON.stringify(v.custom),
              v.source ?? null,
              contactSearchText({ firstName, lastName, email: v.email, phoneNumber: v.phoneNumber }),
              nowIso,
              nowIso,
              JSON.stringify({ source: "webhook", formId: form.id, at: nowIso, ipAddress: input.ipAddress }),
            );
          }
          // Issue 11: an opted-out number or a form's missing consent → saved, but no message.
          const suppressed = existing?.opted_out === 1 ? "opted-out" : settings.consentField !== null && !isConsentGiven(input.body[settings.consentField]) ? "no-consent" : null;
          if (suppressed !== null) {
            this.submissionInsert.run(newId(), form.accountId, form.id, contactId, null, existing ? 0 : 1, nowIso);
            const body = JSON.stringify({
              status: "success",
              message:
                suppressed === "opted-out"
                  ? "Submission received; no text is sent because this number opted out (replied STOP)"
                  : "Submission received; no text is sent because the consent box was not ticked",
              data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed },
            });
            if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, input.bodyHash ?? null, nowIso);
            return { status: 200, body, created: true, contactId, queued: false };
          }
          const held = this.holdBack(form, v.phoneNumber, contactId, existing ? 0 : 1, now, nowIso, key, input.bodyHash);
          if (held) return held;
          // Schedule: the form's delay, out of quiet hours, then past the daily limit if the day is full.
          const quiet = protection.quietHours;
          const tz = settings.timezone;
          const unmoved = now + settings.delayMinutes * MINUTE_MS;
          let scheduledFor = afterQuietHours(unmoved, tz, quiet);
          const perDay = settings.rateLimitPerDay;
          if (perDay !== null) {
            scheduledFor = deferForDailyLimit(
              scheduledFor,
              tz,
              perDay,
              (from, to) => this.countScheduled.get(form.id, new Date(from).toISOString(), new Date(to).toISOString())!.n,
              undefined,
              quiet ? (at) => afterQuietHours(at, tz, quiet) : undefined,
            );
          }
          const messageId = newId();
          const seq = this.seq.next();
          const recipientName = `${firstName ?? ""} ${lastName ?? ""}`.trim() || null;
          this.messageInsert.run(
            messageId,
            form.accountId,
            form.id,
            form.name,
            contactId,
            rendered.content,
            v.phoneNumber,
            recipientName,
            priority,
            PRIORITY_RANK[priority],
            input.rawJson,
            form.messageTemplate,
            new Date(scheduledFor).toISOString(),
            metadata,
            seq,
            nowIso,
            nowIso,
          );
          const submissionId = newId();
          this.submissionInsert.run(submissionId, form.accountId, form.id, contactId, messageId, existing ? 0 : 1, nowIso);
          // The queue entry goes in last; should the idempotency row still fail, it comes out again
          // with the job's rolled-back writes, so the queue never holds a message SQLite lacks.
          this.queue.insert({ id: messageId, accountId: form.accountId, priority, scheduledFor, seq });
          try {
            const pos = this.queue.position(messageId, now, this.sendRatePerMinute)!;
            const quietMoved = quiet !== null ? afterQuietHours(unmoved, tz, quiet) : unmoved;
            const deferred = scheduledFor > quietMoved;
            const body = JSON.stringify({
              status: "success",
              message: deferred
                ? "Submission received; the form's daily limit is reached, so the message is scheduled for the next day with room"
                : scheduledFor > unmoved
                  ? "Submission received; the message is scheduled for the end of the form's quiet hours"
                  : "Submission received; message queued",
              data: {
                messageId,
                contactId,
                queuePosition: pos.queuePosition,
                estimatedDelivery: new Date(pos.estimatedDelivery).toISOString(),
              },
            });
            // Outbound events, in this transaction (nothing written when no endpoint takes them).
            emitSubmission(this.sqlite, { accountId: form.accountId, formId: form.id, formName: form.name, submissionId, contactId, newContact: !existing, messageId, answer: body }, now);
            if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, input.bodyHash ?? null, nowIso);
            return { status: 200, body, created: true, messageId, contactId, queued: true };
          } catch (err) {
            this.queue.remove(messageId);
            throw err;
          }
        },
        undo: (r) => {
          if (r.queued && r.messageId) this.queue.remove(r.messageId);
        },
      });
    } catch (err) {
      if (reserved) this.quota.settle(form.accountId, false);
      if (err instanceof AppError) throw err;
      if (err instanceof WriterClosedError) throw new AppError("SERVICE_UNAVAILABLE", { message: "The server is shutting down; retry shortly" });
      const code = String((err as { code?: unknown })?.code ?? "");
      if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
        // Another process (a backup, a CLI command) held the write lock past busy_timeout.
        throw new AppError("SERVICE_UNAVAILABLE", {
          message: "The database is busy; retry shortly",
          details: { retryAfter: 1 },
          extra: { retryAfter: 1 },
          headers: { "Retry-After": "1" },
        });
      }
      if (/FOREIGN KEY/i.test(String((err as Error)?.message))) {
        // The form was deleted between the lookup and the commit.
        throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: form.id } });
      }
      throw err;
    }
    if (reserved) this.quota.settle(form.accountId, answer.queued === true);
    // Committed: wake phones long-polling `next` for this account.
    if (answer.queued) this.leases.notify(form.accountId);
    return answer;
  }

  /**
   * Inside the write job, after the contact is saved: the duplicate window (answer with the first
   * message) and the per-recipient daily limit (accept, queue nothing). Null: queue as usual.
   */
  private holdBack(
    form: WebhookForm,
    phone: string,
    contactId: string,
    newContact: number,
    now: number,
    nowIso: string,
    key: string | undefined,
    bodyHash: string | undefined,
  ): SubmissionAnswer | null {
    const p = form.protection;
    let answer: { message: string; data: Record<string, unknown>; messageId: string | null } | null = null;
    if (p.duplicateWindowMinutes > 0) {
      const first = this.lastMessageTo.get(form.accountId, phone, form.id, new Date(now - p.duplicateWindowMinutes * MINUTE_MS).toISOString());
      if (first) {
        const pos = this.queue.position(first.id, now, this.sendRatePerMinute);
        answer = {
          message: "Submission received; a message to this number from this form is already on its way, so no second one is sent",
          messageId: first.id,
          data: {
            messageId: first.id,
            contactId,
            queuePosition: pos ? pos.queuePosition : 0,
            estimatedDelivery: pos ? new Date(pos.estimatedDelivery).toISOString() : (first.sent_at ?? first.scheduled_for),
            duplicate: true,
          },
        };
      }
    }
    if (answer === null && p.recipientLimitPerDay !== null) {
      const n = this.countRecentTo.get(form.accountId, phone, new Date(now - 24 * 3_600_000).toISOString())!.n;
      if (n >= p.recipientLimitPerDay) {
        answer = {
          message: `Submission received; no text is sent because this number already got ${n} texts in the last 24 hours`,
          messageId: null,
          data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed: "recipient-limit" },
        };
      }
    }
    if (answer === null) return null;
    this.submissionInsert.run(newId(), form.accountId, form.id, contactId, answer.messageId, newContact, nowIso);
    const body = JSON.stringify({ status: "success", message: answer.message, data: answer.data });
    if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, bodyHash ?? null, nowIso);
    return { status: 200, body, created: true, contactId, queued: false };
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
