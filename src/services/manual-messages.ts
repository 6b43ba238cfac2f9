/**
 * Messages written outside a form: a manual message (POST /v1/messages) and a test submission's
 * text, through the one sending path (src/services/sending).
 */
import type { Database } from "bun:sqlite";
import type { Actor } from "../domain/people";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { UUID_RE } from "../lib/ids";
import type { MessageQueue, Priority } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import { parseIsoTimestamp } from "../domain/message-transitions";
import { PRIORITIES } from "../domain/statuses";
import { normalizePhone } from "../domain/phone";
import { smsInfo } from "../domain/sms-encoding";
import { enumError } from "../domain/query-params";
import { maxAttemptsError } from "../domain/retry-policy";
import { toMessage, type Message } from "../db/stores/messages/rows";
import type { MessageRow, MessageStore, RecipientContact } from "../db/stores/messages";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import { refuseIfOptedOut } from "./opt-outs";
import { admit, newQueuedRow, queueEntryOf, type Sending } from "./sending";
import { fullName } from "../domain/contact-name";

/** Manual message content: the same bound as a form's template. */
export const MANUAL_CONTENT_MAX = 1_600;

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

export class ManualMessages {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly sending: Sending,
    private readonly sendRatePerMinute: () => number,
    private readonly store: MessageStore,
    private readonly quota?: MonthlyQuota,
  ) {}

  /**
   * POST /messages/<KEY>: a message outside any form. `contactId` links the contact; a
   * `phoneNumber` that belongs to a contact of the account links that contact; otherwise the
   * message has no contact (none is created: a manual text is not a submission).
   */
  createManual(
    accountId: string,
    body: Record<string, unknown>,
    ctx: { ipAddress?: string; userAgent?: string | null; monthlyQuota?: number | null; actor?: Actor },
  ): { message: Message; queuePosition: number; estimatedDelivery: string } {
    const errs: FieldErr[] = [];
    const { phoneNumber, contactId, content, priority, scheduledFor, maxAttempts } = body;
    if (phoneNumber !== undefined && contactId !== undefined) {
      errs.push({ field: "phoneNumber", message: "give either phoneNumber or contactId, not both", requirement: "phoneNumber or contactId", provided: phoneNumber });
    } else if (phoneNumber === undefined && contactId === undefined) {
      errs.push({ field: "phoneNumber", message: "phoneNumber or contactId is required", requirement: "phoneNumber or contactId", provided: null });
    }
    let e164: string | undefined;
    if (phoneNumber !== undefined && contactId === undefined) {
      const p = normalizePhone(phoneNumber, { label: "phoneNumber" });
      if (p.ok) e164 = p.e164;
      else errs.push({ field: "phoneNumber", message: p.message, requirement: p.requirement, provided: phoneNumber });
    }
    if (contactId !== undefined && typeof contactId !== "string") errs.push({ field: "contactId", message: "contactId must be a string", provided: contactId });
    if (typeof content !== "string" || content.trim() === "") {
      errs.push({ field: "content", message: "content is required", requirement: `1-${MANUAL_CONTENT_MAX} characters`, provided: content ?? null });
    } else if (content.length > MANUAL_CONTENT_MAX) {
      errs.push({ field: "content", message: `content must be at most ${MANUAL_CONTENT_MAX} characters`, requirement: `1-${MANUAL_CONTENT_MAX} characters`, provided: `${content.length} characters` });
    }
    if (priority !== undefined && !(PRIORITIES as readonly unknown[]).includes(priority)) errs.push(enumError("priority", PRIORITIES, priority));
    const attemptsErr = maxAttemptsError(maxAttempts);
    if (attemptsErr) errs.push({ field: "maxAttempts", message: attemptsErr, requirement: "whole number from 1 to 10", provided: maxAttempts ?? null });
    const now = this.clock();
    let when = now;
    if (scheduledFor !== undefined && scheduledFor !== null) {
      const t = parseIsoTimestamp(scheduledFor);
      if (t === null) errs.push({ field: "scheduledFor", message: "scheduledFor must be an ISO 8601 timestamp", requirement: "ISO 8601 timestamp", provided: scheduledFor });
      else when = t;
    }
    if (errs.length) throw validationError(errs);

    let contact: RecipientContact | null = null;
    if (typeof contactId === "string") {
      contact = UUID_RE.test(contactId)
        ? this.store.recipientById(accountId, contactId)
        : null;
      if (!contact) throw new AppError("CONTACT_NOT_FOUND", { details: { contactId } });
    } else {
      contact = this.store.recipientByPhone(accountId, e164!);
    }
    const recipient = contact && { id: contact.id, phoneNumber: contact.phoneNumber, optedOut: contact.optedOut };
    if (!admit({ recipient }).ok) refuseIfOptedOut(recipient);
    const text = content as string;
    const info = smsInfo(text);
    const prio = (priority ?? "normal") as Priority;
    const name = contact ? fullName(contact.firstName, contact.lastName) || null : null;
    const createdAt = iso(now);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: contact?.id ?? null,
      content: text,
      recipient_phone: contact?.phoneNumber ?? e164!,
      recipient_name: name,
      priority: prio,
      scheduled_for: iso(when),
      metadata: JSON.stringify({
        messageLength: text.length,
        variablesUsed: [],
        source: "manual",
        ipAddress: ctx.ipAddress ?? null,
        userAgent: ctx.userAgent ?? null,
        encoding: info.encoding,
        segments: info.segments,
      }),
      seq: this.seq.next(),
      max_attempts: (maxAttempts as number | undefined) ?? null,
      created_by: ctx.actor ? JSON.stringify(ctx.actor) : null,
      created_at: createdAt,
    });
    return this.enqueue(row, ctx.monthlyQuota ?? null, now);
  }

  /**
   * A test submission's text, sent only because the owner asked, to the number they gave: no
   * contact is linked, made or changed, even when the number is one (docs/api-decisions.md,
   * "Test submissions"). A number that replied STOP is still refused.
   */
  createTest(
    accountId: string,
    t: { phone: string; content: string; form: { id: string; name: string }; monthlyQuota: number | null; actor?: Actor },
  ): { message: Message; queuePosition: number; estimatedDelivery: string } {
    const contact = this.store.recipientByPhone(accountId, t.phone);
    const recipient = contact && { id: contact.id, phoneNumber: contact.phoneNumber, optedOut: contact.optedOut };
    if (!admit({ recipient }).ok) refuseIfOptedOut(recipient);
    const now = this.clock();
    const info = smsInfo(t.content);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: null,
      content: t.content,
      recipient_phone: t.phone,
      // Lists show the recipient's name: this one says what the text is.
      recipient_name: `Test of “${t.form.name}”`,
      priority: "normal",
      scheduled_for: iso(now),
      metadata: JSON.stringify({
        messageLength: t.content.length,
        variablesUsed: [],
        source: "test",
        test: true,
        formId: t.form.id,
        formName: t.form.name,
        encoding: info.encoding,
        segments: info.segments,
      }),
      seq: this.seq.next(),
      created_by: t.actor ? JSON.stringify(t.actor) : null,
      created_at: iso(now),
    });
    return this.enqueue(row, t.monthlyQuota, now);
  }

  /** Writes a new queued row (with its "queued" event) and hands it to the queue. */
  private enqueue(row: MessageRow, monthlyQuota: number | null, now: number): { message: Message; queuePosition: number; estimatedDelivery: string } {
    const accountId = row.account_id;
    // Manual messages count against the account's monthly message quota like webhook ones.
    const admitted = this.quota ? admit({ quota: { quota: this.quota, accountId, limit: monthlyQuota } }) : { ok: true as const, reserved: false };
    if (!admitted.ok) throw quotaExceeded(admitted.quota!, this.clock());
    const reserved = admitted.reserved;
    try {
      this.sqlite.transaction(() => this.sending.write(row, now))();
    } catch (err) {
      if (reserved) this.quota?.settle(accountId, false);
      throw err;
    }
    if (reserved) this.quota?.settle(accountId, true);
    this.sending.queued([queueEntryOf(row)]);
    const pos = this.queue.position(row.id, now, this.sendRatePerMinute())!;
    return { message: toMessage(row), queuePosition: pos.queuePosition, estimatedDelivery: iso(pos.estimatedDelivery) };
  }
}
