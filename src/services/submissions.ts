/**
 * Webhook submissions: a validated posting becomes a contact (created or merged), a submission
 * record and a queued message — written through the group-commit writer, so a 200 is only sent
 * once all three are on disk. Hot path: prepared statements only, no query builder.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import { AppError, databaseBusy, validationError } from "../errors";
import { WriterClosedError, type GroupCommitWriter } from "../db/group-commit";
import type { MessageQueue } from "../queue/priority-queue";
import { PRIORITY_RANK } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import { validateSubmission, type FieldDef } from "../domain/submission";
import { resolveFormSettings, type FormSettings } from "../domain/form-definition";
import { builtinVariables, renderTemplate } from "../domain/template";
import { smsInfo } from "../domain/sms-encoding";
import { deferForDailyLimit } from "../domain/daily-limit";
import { checkCountry, checkInsertedValues, resolveProtection, type ProtectionSettings } from "../domain/protection";
import { afterQuietHours } from "../domain/quiet-hours";
import { templateVariables } from "../domain/template";
import { UUID_RE } from "../lib/ids";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";
import type { IntakeEntry } from "./intake/applier";
import type { PendingEntry, SubmissionIntake } from "./intake/intake";
import { intakeStore, type IntakeStore } from "../db/stores/intake";
import { isConsentGiven } from "../domain/keywords";
import { webhookFormCache, type WebhookFormCache } from "../db/webhook-form-cache";

/** Idempotency-Key replays last this long. */
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
  /** Public-form protections, defaults filled in. */
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
  private readonly intakeStore: IntakeStore;
  private readonly formExists: Statement<{ id: string }, [string]>;
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
    private readonly intake: SubmissionIntake,
  ) {
    this.intakeStore = intakeStore(sqlite);
    this.formExists = sqlite.prepare("SELECT id FROM forms WHERE id = ?");
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
    this.contactByPhone = sqlite.prepare("SELECT id, opted_out FROM contacts WHERE account_id = ? AND phone_number = ?");
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

  /**
   * Resolves once every commit so far is on disk: a replayed answer read from a batch whose
   * flush has not returned yet (src/db/group-commit.ts) waits for it, as its first answer did.
   */
  durable(): Promise<void> {
    return this.writer.durable();
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

    // Spread defines own properties (a `__proto__` field stays a value) and renderTemplate reads
    // own properties only.
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
    let answer: SubmissionAnswer & { intakeSeq?: number };
    try {
      answer = await this.writer.submit<SubmissionAnswer & { intakeSeq?: number }>({
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
          // The intake has no foreign keys: a form deleted since the lookup is refused here.
          if (!this.formExists.get(form.id)) throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: form.id } });
          // The rules read SQLite plus the unapplied intake past intake_applied.seq, both in this
          // job's snapshot (see services/intake.ts), so a 200 just sent counts at once.
          const appliedSeq = this.intakeStore.appliedSeq();
          const pending = this.intake.forPhone(form.accountId, v.phoneNumber, appliedSeq);
          // Contact: the account's contact with this phone (applied or not yet), else a new id;
          // the applier creates or merges it exactly as this job used to.
          const existing = this.contactByPhone.get(form.accountId, v.phoneNumber);
          const contactId = existing ? existing.id : pending.length > 0 ? pending[pending.length - 1].contactId : newId();
          const entry: IntakeEntry = {
            kind: "suppressed",
            accountId: form.accountId,
            formId: form.id,
            formName: form.name,
            contactId,
            phone: v.phoneNumber,
            firstName: v.firstName ?? null,
            lastName: v.lastName ?? null,
            email: v.email ?? null,
            custom: v.custom,
            source: v.source ?? null,
            consent: JSON.stringify({ source: "webhook", formId: form.id, at: nowIso, ipAddress: input.ipAddress }),
            submissionId: newId(),
            messageId: null,
            at: nowIso,
          };
          // An opted-out number or a form's missing consent → saved, but no message
          // (docs/api-decisions.md, "Replies, opt-outs and consent").
          const suppressed = existing?.opted_out === 1 ? "opted-out" : settings.consentField !== null && !isConsentGiven(Object.hasOwn(input.body, settings.consentField) ? input.body[settings.consentField] : undefined) ? "no-consent" : null;
          if (suppressed !== null) {
            const body = JSON.stringify({
              status: "success",
              message:
                suppressed === "opted-out"
                  ? "Submission received; no text is sent because this number opted out (replied STOP)"
                  : "Submission received; no text is sent because the consent box was not ticked",
              data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed },
            });
            if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, input.bodyHash ?? null, nowIso);
            const intakeSeq = this.record(entry, now, 0);
            return { status: 200, body, created: true, contactId, queued: false, intakeSeq };
          }
          const held = this.holdBack(form, v.phoneNumber, contactId, pending, appliedSeq, now, key, input.bodyHash);
          if (held) {
            entry.kind = "held";
            entry.messageId = held.firstMessageId;
            const intakeSeq = this.record(entry, now, 0);
            return { ...held.answer, intakeSeq };
          }
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
              (from, to) =>
                this.countScheduled.get(form.id, new Date(from).toISOString(), new Date(to).toISOString())!.n +
                this.intake.countScheduled(form.id, from, to, appliedSeq),
              undefined,
              quiet ? (at) => afterQuietHours(at, tz, quiet) : undefined,
            );
          }
          const messageId = newId();
          const seq = this.seq.next();
          // The queue entry goes in first (the answer's position); should anything after it fail,
          // it comes out again with the job's rolled-back writes, so the queue never holds a
          // message the intake lacks.
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
            entry.kind = "queued";
            entry.messageId = messageId;
            entry.message = {
              content: rendered.content,
              priority,
              priorityRank: PRIORITY_RANK[priority],
              webhookData: input.rawJson,
              template: form.messageTemplate,
              scheduledFor: new Date(scheduledFor).toISOString(),
              metadata,
              seq,
              answer: body,
            };
            if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, input.bodyHash ?? null, nowIso);
            const intakeSeq = this.record(entry, now, scheduledFor);
            return { status: 200, body, created: true, messageId, contactId, queued: true, intakeSeq };
          } catch (err) {
            this.queue.remove(messageId);
            throw err;
          }
        },
        undo: (r) => {
          if (r.queued && r.messageId) this.queue.remove(r.messageId);
          if (r.intakeSeq !== undefined) this.intake.remove(r.intakeSeq);
        },
      });
    } catch (err) {
      if (reserved) this.quota.settle(form.accountId, false);
      if (err instanceof AppError) throw err;
      if (err instanceof WriterClosedError) throw new AppError("SERVICE_UNAVAILABLE", { message: "The server is shutting down; retry shortly" });
      // Another process (a backup, a CLI command) held the write lock past busy_timeout.
      const busy = databaseBusy(err);
      if (busy) throw busy;
      if (/FOREIGN KEY/i.test(String((err as Error)?.message))) {
        // The form was deleted between the lookup and the commit.
        throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: form.id } });
      }
      throw err;
    }
    if (reserved) this.quota.settle(form.accountId, answer.queued === true);
    // Committed: the applier is woken; phones long-polling `next` are woken once it has applied
    // the message (SubmissionIntake.onApplied), or now when it was applied in the job.
    if (answer.intakeSeq !== undefined) this.intake.committed(answer.intakeSeq);
    if (answer.queued && this.intake.inlineApplier) this.leases.notify(form.accountId);
    const { intakeSeq: _seq, ...sent } = answer;
    return sent;
  }

  /**
   * Inside the write job: the duplicate window (answer with the first message) and the
   * per-recipient daily limit (accept, queue nothing), over SQLite plus the unapplied intake
   * (`pending`: this phone's entries past `appliedSeq`). Null: queue as usual.
   */
  private holdBack(
    form: WebhookForm,
    phone: string,
    contactId: string,
    pending: PendingEntry[],
    appliedSeq: number,
    now: number,
    key: string | undefined,
    bodyHash: string | undefined,
  ): { answer: SubmissionAnswer; firstMessageId: string | null } | null {
    const p = form.protection;
    let answer: { message: string; data: Record<string, unknown>; messageId: string | null } | null = null;
    if (p.duplicateWindowMinutes > 0) {
      const since = now - p.duplicateWindowMinutes * MINUTE_MS;
      // An unapplied message is newer than any applied one: it is the latest, if there is one.
      let first: { id: string; scheduled_for: string; sent_at: string | null } | undefined;
      for (let i = pending.length - 1; i >= 0; i--) {
        const e = pending[i];
        if (e.messageId !== null && e.formId === form.id && e.createdAt >= since) {
          first = { id: e.messageId, scheduled_for: new Date(e.scheduledFor).toISOString(), sent_at: null };
          break;
        }
      }
      first ??= this.lastMessageTo.get(form.accountId, phone, form.id, new Date(since).toISOString()) ?? undefined;
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
      const since = now - 24 * 3_600_000;
      let n = this.countRecentTo.get(form.accountId, phone, new Date(since).toISOString())!.n;
      for (const e of pending) if (e.messageId !== null && e.seq > appliedSeq && e.createdAt >= since) n++;
      if (n >= p.recipientLimitPerDay) {
        answer = {
          message: `Submission received; no text is sent because this number already got ${n} texts in the last 24 hours`,
          messageId: null,
          data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed: "recipient-limit" },
        };
      }
    }
    if (answer === null) return null;
    const body = JSON.stringify({ status: "success", message: answer.message, data: answer.data });
    if (key !== undefined) this.idemInsert.run(form.id, key, 200, body, bodyHash ?? null, new Date(now).toISOString());
    return { answer: { status: 200, body, created: true, contactId, queued: false }, firstMessageId: answer.messageId };
  }

  /**
   * Inside the write job, last: appends the entry to the intake (or, without an applier thread,
   * applies it at once) and shows it to the rules of the requests that follow.
   */
  private record(entry: IntakeEntry, now: number, scheduledFor: number): number {
    const seq = this.intake.nextSeq();
    if (this.intake.inlineApplier) {
      this.intake.inlineApplier.applyEntry(entry);
      return seq;
    }
    this.intakeStore.append(seq, JSON.stringify(entry));
    this.intake.add({
      seq,
      accountId: entry.accountId,
      phone: entry.phone,
      formId: entry.formId,
      contactId: entry.contactId,
      messageId: entry.kind === "queued" ? entry.messageId : null,
      createdAt: now,
      scheduledFor,
    });
    return seq;
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
