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
import { UUID_RE } from "../lib/ids";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";

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
}

export interface SubmissionInput {
  /** The posted object (JSON object, or the url-encoded pairs). */
  body: Record<string, unknown>;
  /** What to store as webhookData: the posted JSON text, or the pairs as JSON. */
  rawJson: string;
  ipAddress: string;
  userAgent: string | null;
  idempotencyKey?: string;
}

/** The answer to a submission, as sent (and as replayed for an Idempotency-Key). */
export interface SubmissionAnswer {
  status: number;
  body: string;
  /** False for a replay: nothing was created. */
  created: boolean;
  messageId?: string;
  contactId?: string;
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

interface ContactRow {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  custom_fields: string;
  source: string | null;
}

const FORM_CACHE_MAX = 10_000;

export class SubmissionService {
  private readonly formById: Statement<FormRow, [string]>;
  private readonly idemGet: Statement<{ status: number; body: string; created_at: string }, [string, string]>;
  private readonly idemDelete: Statement<unknown, [string, string]>;
  private readonly idemInsert: Statement<unknown, [string, string, number, string, string]>;
  private readonly idemSweep: Statement<unknown, [string]>;
  private readonly contactByPhone: Statement<ContactRow, [string, string]>;
  private readonly contactInsert: Statement<unknown, any[]>;
  private readonly contactUpdate: Statement<unknown, any[]>;
  private readonly messageInsert: Statement<unknown, any[]>;
  private readonly submissionInsert: Statement<unknown, any[]>;
  private readonly countScheduled: Statement<{ n: number }, [string, string, string]>;
  /** Parsed fields/settings per form, valid while updated_at is unchanged. */
  private readonly formCache = new Map<string, { updatedAt: string; fields: FieldDef[]; settings: FormSettings }>();

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
    this.formById = sqlite.prepare(
      `SELECT f.id, f.account_id, f.name, f.message_template, f.is_active, f.fields, f.settings, f.updated_at, a.monthly_quota
         FROM forms f JOIN accounts a ON a.id = f.account_id WHERE f.id = ?`,
    );
    this.idemGet = sqlite.prepare("SELECT status, body, created_at FROM idempotency_keys WHERE form_id = ? AND key = ?");
    this.idemDelete = sqlite.prepare("DELETE FROM idempotency_keys WHERE form_id = ? AND key = ?");
    this.idemInsert = sqlite.prepare("INSERT INTO idempotency_keys (form_id, key, status, body, created_at) VALUES (?, ?, ?, ?, ?)");
    this.idemSweep = sqlite.prepare("DELETE FROM idempotency_keys WHERE created_at < ?");
    this.contactByPhone = sqlite.prepare(
      "SELECT id, first_name, last_name, email, custom_fields, source FROM contacts WHERE account_id = ? AND phone_number = ?",
    );
    this.contactInsert = sqlite.prepare(
      `INSERT INTO contacts (id, account_id, phone_number, first_name, last_name, email, status, form_id, custom_fields,
         tags, message_count, source, search_text, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, '[]', 0, ?, ?, ?, ?)`,
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

  /** The webhook's lookup, by id alone (the id is the credential); null when unknown or malformed. */
  findForm(id: string): WebhookForm | null {
    if (!UUID_RE.test(id)) return null;
    const row = this.formById.get(id.toLowerCase());
    if (!row) return null;
    let parsed = this.formCache.get(row.id);
    if (parsed === undefined || parsed.updatedAt !== row.updated_at) {
      if (this.formCache.size >= FORM_CACHE_MAX) this.formCache.clear();
      parsed = { updatedAt: row.updated_at, fields: JSON.parse(row.fields), settings: resolveFormSettings(JSON.parse(row.settings)) };
      this.formCache.set(row.id, parsed);
    }
    return {
      id: row.id,
      accountId: row.account_id,
      name: row.name,
      messageTemplate: row.message_template,
      isActive: row.is_active === 1,
      fields: parsed.fields,
      settings: parsed.settings,
      updatedAt: row.updated_at,
      monthlyQuota: row.monthly_quota,
    };
  }

  /** The stored first answer for (form, key), if it is younger than 24 hours. */
  replay(formId: string, key: string): SubmissionAnswer | null {
    const row = this.idemGet.get(formId, key);
    if (!row || row.created_at < new Date(this.clock() - IDEMPOTENCY_TTL_MS).toISOString()) return null;
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
            );
          }
          // Schedule: the form's delay, then past the daily limit if the day is full.
          let scheduledFor = now + settings.delayMinutes * MINUTE_MS;
          const perDay = settings.rateLimitPerDay;
          if (perDay !== null) {
            scheduledFor = deferForDailyLimit(scheduledFor, settings.timezone, perDay, (from, to) =>
              this.countScheduled.get(form.id, new Date(from).toISOString(), new Date(to).toISOString())!.n,
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
          this.submissionInsert.run(newId(), form.accountId, form.id, contactId, messageId, existing ? 0 : 1, nowIso);
          // The queue entry goes in last; should the idempotency row still fail, it comes out again
          // with the job's rolled-back writes, so the queue never holds a message SQLite lacks.
          this.queue.insert({ id: messageId, accountId: form.accountId, priority, scheduledFor, seq });
          try {
            const pos = this.queue.position(messageId, now, this.sendRatePerMinute)!;
            const deferred = scheduledFor > now + settings.delayMinutes * MINUTE_MS;
            const body = JSON.stringify({
              status: "success",
              message: deferred
                ? "Submission received; the form's daily limit is reached, so the message is scheduled for the next day with room"
                : "Submission received; message queued",
              data: {
                messageId,
                contactId,
                queuePosition: pos.queuePosition,
                estimatedDelivery: new Date(pos.estimatedDelivery).toISOString(),
              },
            });
            if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, nowIso);
            return { status: 200, body, created: true, messageId, contactId };
          } catch (err) {
            this.queue.remove(messageId);
            throw err;
          }
        },
        undo: (r) => {
          if (r.created && r.messageId) this.queue.remove(r.messageId);
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
    if (reserved) this.quota.settle(form.accountId, answer.created);
    // Committed: wake phones long-polling `next` for this account.
    if (answer.created) this.leases.notify(form.accountId);
    return answer;
  }
}
