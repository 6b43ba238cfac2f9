/**
 * The write of an accepted submission: validation of its fields and protections, the message
 * rendered, the monthly quota reserved, then ONE group-commit job that applies the rules reading
 * the database (idempotency inside the job, the form still there, opt-out and consent
 * suppression, the duplicate window, the per-recipient and daily limits, quiet hours) and
 * appends the intake row. A 200 is only sent once that job is on disk.
 * Hot path: prepared statements only (src/db/stores/submissions.ts, idempotency.ts, intake.ts).
 */
import type { Clock } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { AppError, databaseBusy, validationError } from "../../errors";
import { WriterClosedError, type GroupCommitWriter } from "../../db/group-commit";
import type { MessageQueue } from "../../queue/priority-queue";
import { PRIORITY_RANK } from "../../queue/priority-queue";
import type { Sequence } from "../../lib/seq";
import { validateSubmission } from "../../domain/submission";
import { builtinVariables, renderTemplate } from "../../domain/template";
import { dateVariables } from "../../domain/date-words";
import { smsInfo } from "../../domain/sms-encoding";
import { deferForDailyLimit } from "../../domain/daily-limit";
import { checkCountry, checkInsertedValues } from "../../domain/protection";
import { contactZone } from "../../domain/contact-time-zone";
import { quotaExceeded, type MonthlyQuota } from "../quota";
import type { LeaseService } from "../leases";
import type { IntakeEntry } from "../intake/applier";
import type { PendingEntry, SubmissionIntake } from "../intake/intake";
import type { IntakeStore } from "../../db/stores/intake";
import type { SubmissionStore } from "../../db/stores/submissions";
import type { IdempotencyStore } from "../../db/stores/idempotency";
import type { WebhookForm } from "./form-lookup";
import { IDEMPOTENCY_TTL_MS, keyReused } from "./idempotency";
import { admit, queueAhead, sendTime } from "../sending";
import { visitorSummary } from "../../domain/visitor-words";

const MINUTE_MS = 60_000;

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

/**
 * A submission's fields and protections checked, and its text written: what a website's post and
 * the dashboard's test submission share. Throws VALIDATION_ERROR whose `message` is the visitor's
 * plain words (the field names stay in `details` and `errors`: docs/api-decisions.md, "Plain words
 * for visitors").
 */
export function checkSubmission(form: WebhookForm, body: Record<string, unknown>, now: number) {
  const result = validateSubmission(body, form.fields);
  if (!result.ok) throw validationError(result.errors, visitorSummary(result.errors));
  const v = result.value;
  const protection = form.protection;
  const refused = checkInsertedValues(v, form.variables, form.fields, protection.allowLinksInValues);
  if (protection.allowedCountries !== null) {
    const c = checkCountry(v.phoneNumber, protection.allowedCountries, form.fields);
    if (c) refused.unshift(c);
  }
  if (refused.length > 0) throw validationError(refused, visitorSummary(refused));

  // Spread defines own properties (a `__proto__` field stays a value) and renderTemplate reads
  // own properties only.
  const builtins = builtinVariables({
    firstName: v.firstName,
    lastName: v.lastName,
    email: v.email,
    phoneNumber: v.phoneNumber,
    source: v.source,
    formName: form.name,
    now,
    timezone: form.settings.timezone,
  });
  const vars: Record<string, string> = { ...builtins, ...v.custom };
  // Date fields read as people write them ("Thu, Dec 10"), in the form's language.
  if (form.fields.some((f) => f.type === "date")) Object.assign(vars, dateVariables(form.fields, v.custom, form.settings.language, builtins.date));
  const rendered = renderTemplate(form.messageTemplate, vars);
  return { value: v, rendered, sms: smsInfo(rendered.content) };
}

export class SubmissionWrite {
  constructor(
    private readonly clock: Clock,
    private readonly writer: GroupCommitWriter,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly quota: MonthlyQuota,
    private readonly sendRatePerMinute: number,
    private readonly leases: Pick<LeaseService, "notify">,
    private readonly intake: SubmissionIntake,
    private readonly intakeStore: IntakeStore<IntakeEntry>,
    private readonly store: SubmissionStore,
    private readonly idempotency: IdempotencyStore,
  ) {}

  /**
   * Validates, then queues the write and resolves once it is committed. Throws AppError for
   * every client mistake (400 validation, 429 quota, 404 when the form vanished meanwhile).
   */
  async submit(form: WebhookForm, input: SubmissionInput): Promise<SubmissionAnswer> {
    const now = this.clock();
    const { value: v, rendered, sms } = checkSubmission(form, input.body, now);
    const settings = form.settings;
    const protection = form.protection;
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

    // The send rules are the one sending path's (src/services/sending/admit.ts), asked at the
    // points of this job where their data is read: the quota now, the rest inside the job.
    const quota = admit({ quota: { quota: this.quota, accountId: form.accountId, limit: form.monthlyQuota } });
    if (!quota.ok) throw quotaExceeded(quota.quota!, this.clock());
    const reserved = quota.reserved;
    let answer: SubmissionAnswer & { intakeSeq?: number };
    try {
      answer = await this.writer.submit<SubmissionAnswer & { intakeSeq?: number }>({
        run: () => {
          if (key !== undefined) {
            const prior = this.idempotency.find(form.id, key);
            if (prior) {
              if (prior.createdAt >= new Date(now - IDEMPOTENCY_TTL_MS).toISOString()) {
                if (input.bodyHash !== undefined && prior.bodyHash !== null && prior.bodyHash !== input.bodyHash) throw keyReused(key);
                return { status: prior.status, body: prior.body, created: false };
              }
              this.idempotency.remove(form.id, key);
            }
          }
          // The intake has no foreign keys: a form deleted since the lookup is refused here.
          if (!this.store.formExists.get(form.id)) throw new AppError("NOT_FOUND", { message: "Form not found", details: { formId: form.id } });
          // The rules read SQLite plus the unapplied intake past intake_applied.seq, both in this
          // job's snapshot (see services/intake/overlay.ts), so a 200 just sent counts at once.
          const appliedSeq = this.intakeStore.appliedSeq();
          const pending = this.intake.forPhone(form.accountId, v.phoneNumber, appliedSeq);
          // The same number again before its last submission was applied, and that one starts an
          // automation's run: it is applied now rather than after the applier's delay, so the run
          // (read from the contact as that submission left it) sees it alone, as without a delay.
          if (pending.length > 0 && this.store.formHasAutomation.get(pending[pending.length - 1].formId)) this.intake.applyNow();
          // Contact: the account's contact with this phone (applied or not yet), else a new id;
          // the applier creates or merges it exactly as this job used to.
          const existing = this.store.contactByPhone(form.accountId, v.phoneNumber);
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
            ...(v.timeZone ? { timeZone: v.timeZone } : {}),
            consent: JSON.stringify({ source: "webhook", formId: form.id, at: nowIso, ipAddress: input.ipAddress }),
            submissionId: newId(),
            messageId: null,
            at: nowIso,
          };
          // An opted-out number or a form's missing consent → saved, but no message
          // (docs/api-decisions.md, "Replies, opt-outs and consent").
          const admitted = admit({ recipient: { optedOut: existing?.optedOut ?? false }, consent: { field: settings.consentField, values: input.body } });
          const suppressed = admitted.ok ? null : (admitted.reason as "opted-out" | "no-consent");
          if (suppressed !== null) {
            const body = JSON.stringify({
              status: "success",
              message:
                suppressed === "opted-out"
                  ? "Thank you, your message was received; we will reply another way, as this number opted out of texts (no text is sent)"
                  : "Submission received; no text is sent because the consent box was not ticked",
              data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed },
            });
            if (key !== undefined) this.idempotency.insert(form.id, key, { status: 200, body, bodyHash: input.bodyHash ?? null, createdAt: nowIso });
            entry.suppressed = suppressed;
            const intakeSeq = this.record(entry, now, 0);
            return { status: 200, body, created: true, contactId, queued: false, intakeSeq };
          }
          const held = this.holdBack(form, v.phoneNumber, contactId, pending, appliedSeq, now, key, input.bodyHash);
          if (held) {
            entry.kind = "held";
            entry.messageId = held.firstMessageId;
            if (held.firstMessageId === null) entry.suppressed = "recipient-limit";
            const intakeSeq = this.record(entry, now, 0);
            return { ...held.answer, intakeSeq };
          }
          // Schedule: the form's delay, out of quiet hours, then past the daily limit if the day is full.
          // Quiet hours keep to the contact's own zone when known (docs/contacts.md, "Time zone");
          // the daily limit counts the form's days.
          const quiet = protection.quietHours;
          const tz = settings.timezone;
          const ownZone = v.timeZone ?? existing?.timeZone ?? null;
          const quietTz = contactZone(ownZone, v.phoneNumber, tz);
          const unmoved = now + settings.delayMinutes * MINUTE_MS;
          let scheduledFor = sendTime({ at: unmoved, timezone: quietTz, hours: quiet });
          const perDay = settings.rateLimitPerDay;
          if (perDay !== null) {
            scheduledFor = deferForDailyLimit(
              scheduledFor,
              tz,
              perDay,
              (from, to) =>
                this.store.countScheduled.get(form.id, new Date(from).toISOString(), new Date(to).toISOString())!.n +
                this.intake.countScheduled(form.id, from, to, appliedSeq),
              undefined,
              quiet ? (at) => sendTime({ at, timezone: quietTz, hours: quiet }) : undefined,
            );
          }
          const messageId = newId();
          const seq = this.seq.next();
          // The queue entry goes in first (the answer's position); should anything after it fail,
          // it comes out again with the job's rolled-back writes, so the queue never holds a
          // message the intake lacks.
          queueAhead(this.queue, { id: messageId, accountId: form.accountId, priority, scheduledFor, seq });
          try {
            const pos = this.queue.position(messageId, now, this.sendRatePerMinute)!;
            const quietMoved = quiet !== null ? sendTime({ at: unmoved, timezone: quietTz, hours: quiet }) : unmoved;
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
                // On what the time rests: "no-phone-connected" when it is as if the phones were (docs/phones.md).
                ...(pos.basis ? { estimate: { basis: pos.basis } } : {}),
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
            if (key !== undefined) this.idempotency.insert(form.id, key, { status: 200, body, bodyHash: input.bodyHash ?? null, createdAt: nowIso });
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
      let first: { id: string; scheduledFor: string; sentAt: string | null } | undefined;
      for (let i = pending.length - 1; i >= 0; i--) {
        const e = pending[i];
        if (e.messageId !== null && e.formId === form.id && e.createdAt >= since) {
          first = { id: e.messageId, scheduledFor: new Date(e.scheduledFor).toISOString(), sentAt: null };
          break;
        }
      }
      first ??= this.store.lastMessageTo.get(form.accountId, phone, form.id, new Date(since).toISOString()) ?? undefined;
      if (first) {
        const pos = this.queue.position(first.id, now, this.sendRatePerMinute);
        answer = {
          message: "Submission received; a message to this number from this form is already on its way, so no second one is sent",
          messageId: first.id,
          data: {
            messageId: first.id,
            contactId,
            queuePosition: pos ? pos.queuePosition : 0,
            estimatedDelivery: pos ? new Date(pos.estimatedDelivery).toISOString() : (first.sentAt ?? first.scheduledFor),
            duplicate: true,
          },
        };
      }
    }
    if (answer === null && p.recipientLimitPerDay !== null) {
      const since = now - 24 * 3_600_000;
      let n = this.store.countRecentTo.get(form.accountId, phone, new Date(since).toISOString())!.n;
      for (const e of pending) if (e.messageId !== null && e.seq > appliedSeq && e.createdAt >= since) n++;
      if (!admit({ recipientLimit: { perDay: p.recipientLimitPerDay, sentInDay: () => n } }).ok) {
        answer = {
          message: `Submission received; no text is sent because this number already got ${n} texts in the last 24 hours`,
          messageId: null,
          data: { messageId: null, contactId, queuePosition: null, estimatedDelivery: null, suppressed: "recipient-limit" },
        };
      }
    }
    if (answer === null) return null;
    const body = JSON.stringify({ status: "success", message: answer.message, data: answer.data });
    if (key !== undefined) this.idempotency.insert(form.id, key, { status: 200, body, bodyHash: bodyHash ?? null, createdAt: new Date(now).toISOString() });
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
    this.intakeStore.append(seq, entry);
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
}
