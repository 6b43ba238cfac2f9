/**
 * Messages written outside a form: a manual message (POST /v1/messages), and the row every such
 * message starts from (keyword replies use it too).
 */
import type { Database } from "bun:sqlite";
import { insertQueuedMessage } from "../db/stores/messages/suppression";
import type { Actor } from "../domain/people";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { MessageQueue, Priority } from "../queue/priority-queue";
import { PRIORITY_RANK } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import { parseIsoTimestamp } from "../domain/message-transitions";
import { PRIORITIES } from "../domain/statuses";
import { normalizePhone } from "../domain/phone";
import { smsInfo } from "../domain/sms-encoding";
import { enumError } from "../domain/query-params";
import { maxAttemptsError } from "../domain/retry-policy";
import { toMessage, type Message } from "../db/stores/messages/rows";
import { messagesOf, type MessageRow, type MessageStore, type RecipientContact } from "../db/stores/messages";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";
import { emitMessageStatus } from "./event-payloads";
import { refuseIfOptedOut } from "./opt-outs";
import { fullName } from "../domain/contact-name";

/** Manual message content: the same bound as a form's template. */
export const MANUAL_CONTENT_MAX = 1_600;

/**
 * A new message written outside a form (a manual message, a keyword reply): queued, never leased,
 * with no form, webhook data or template; `created_at` is also its `updated_at`.
 */
export function newQueuedRow(
  f: Pick<MessageRow, "account_id" | "contact_id" | "content" | "recipient_phone" | "recipient_name" | "priority" | "scheduled_for" | "metadata" | "seq" | "created_at"> &
    Partial<Pick<MessageRow, "max_attempts" | "created_by">>,
): MessageRow {
  return {
    id: newId(),
    form_id: null,
    form_name: null,
    status: "queued",
    priority_rank: PRIORITY_RANK[f.priority],
    webhook_data: null,
    template_used: null,
    sent_at: null,
    failure_reason: null,
    retry_count: 0,
    lease_token: null,
    lease_expires_at: null,
    lease_device_id: null,
    lease_expiries: 0,
    last_lease_token: null,
    max_attempts: null,
    broadcast_id: null,
    created_by: null,
    cancelled_by: null,
    updated_at: f.created_at,
    ...f,
  };
}

/** The queue entry of a queued message row. */
export function queueEntryOf(r: Pick<MessageRow, "id" | "account_id" | "priority" | "scheduled_for" | "seq">) {
  return { id: r.id, accountId: r.account_id, priority: r.priority, scheduledFor: Date.parse(r.scheduled_for), seq: r.seq };
}

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

export class ManualMessages {
  private readonly store: MessageStore;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly seq: Sequence,
    private readonly leases: LeaseService,
    private readonly sendRatePerMinute: () => number,
    private readonly quota?: MonthlyQuota,
  ) {
    this.store = messagesOf(sqlite);
  }

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
    refuseIfOptedOut(contact && { id: contact.id, phoneNumber: contact.phone_number, optedOut: contact.opted_out === 1 });
    const text = content as string;
    const info = smsInfo(text);
    const prio = (priority ?? "normal") as Priority;
    const name = contact ? fullName(contact.first_name, contact.last_name) || null : null;
    const createdAt = iso(now);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: contact?.id ?? null,
      content: text,
      recipient_phone: contact?.phone_number ?? e164!,
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
    refuseIfOptedOut(contact && { id: contact.id, phoneNumber: contact.phone_number, optedOut: contact.opted_out === 1 });
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
    const refusal = this.quota?.reserve(accountId, monthlyQuota);
    if (refusal) throw quotaExceeded(refusal, this.clock());
    const reserved = monthlyQuota !== null;
    try {
      this.sqlite.transaction(() => {
        insertQueuedMessage(this.sqlite, row);
        emitMessageStatus(this.sqlite, accountId, row.id, "queued", now);
      })();
    } catch (err) {
      if (reserved) this.quota?.settle(accountId, false);
      throw err;
    }
    if (reserved) this.quota?.settle(accountId, true);
    this.queue.insert(queueEntryOf(row));
    this.leases.notify(accountId);
    const pos = this.queue.position(row.id, now, this.sendRatePerMinute())!;
    return { message: toMessage(row), queuePosition: pos.queuePosition, estimatedDelivery: iso(pos.estimatedDelivery) };
  }
}
