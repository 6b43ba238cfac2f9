/**
 * Status changes of messages: one request (a client, a phone's report through MessageService),
 * or a bulk of up to BULK_MAX_IDS. The transition rules are pure (src/domain/message-transitions.ts);
 * a failure's retry is decided in src/services/retries.ts. SQLite first: the in-memory queue and
 * the leases change only after the commit, and the change is then announced.
 */
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import type { MessageQueue } from "../queue/priority-queue";
import { decideTransition, isMessageStatus, MESSAGE_STATUSES, type MessageStatus } from "../domain/message-transitions";
import { enumError } from "../domain/query-params";
import { normalizeDeviceTime } from "../domain/device-time";
import { accountTimeZone } from "../db/stores/devices";
import { lastFailedLease } from "../db/message-retries";
import { recordOwnerRetry } from "../db/message-history";
import { messagesOf, type MessageRow, type MessageStore } from "../db/stores/messages";
import type { Changes } from "../lib/changes";
import type { LeaseService } from "./leases";
import { emitContact, emitMessageStatus } from "./event-payloads";
import { scheduleRetry } from "./retries";
import { getMessageRow } from "./message-listing";
import { queueEntryOf, requeue } from "./sending";
import type { Actor } from "../domain/people";

/** PUT /messages/bulk: ids per request. */
export const BULK_MAX_IDS = 1_000;

export interface StatusBody {
  status?: unknown;
  sentAt?: unknown;
  failureReason?: unknown;
  leaseToken?: unknown;
}

/** What only the server's own callers pass with a status change (never read from a request body). */
export interface StatusOptions {
  /** sent: the phone's raw sentAt, when the server's time was recorded instead. */
  deviceSentAt?: string;
  /** The caller announces the change itself (a phone's report batch: once, as the phone's). */
  quiet?: boolean;
  /** Who asks (a person or a key): recorded as `cancelledBy` when the message is cancelled. */
  actor?: Actor;
}

export interface StatusResult {
  messageId: string;
  status: MessageStatus;
  sentAt: string | null;
  updatedAt: string;
  /** Set when a transient failure sent the message back to the queue for another attempt. */
  retryScheduledFor?: string;
}

type FieldErr = { field: string; message: string; requirement?: string; provided?: unknown };

export class MessageStatusChanges {
  private readonly store: MessageStore;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly leases: LeaseService,
    private readonly changes: Changes,
  ) {
    this.store = messagesOf(sqlite);
  }

  /**
   * Applies one status request. Validation → 400 VALIDATION_ERROR; an illegal move → 400
   * 'Invalid status transition' (no code); a same-status repeat with the same values → 200,
   * nothing written. A stale `leaseToken` (the message is leased to someone else) → 409.
   */
  updateStatus(accountId: string, id: string, body: StatusBody, opts: StatusOptions = {}): StatusResult {
    const result = this.applyStatus(accountId, id, body, opts);
    this.afterCommit(result.effects);
    if (result.effects.endLease && !opts.quiet) this.changes.message(accountId, "updated", "api");
    return result.answer;
  }

  private applyStatus(accountId: string, id: string, body: StatusBody, opts: StatusOptions = {}): { answer: StatusResult; effects: Effects } {
    if (body.leaseToken !== undefined && body.leaseToken !== null && typeof body.leaseToken !== "string") {
      throw validationError([{ field: "leaseToken", message: "leaseToken must be a string", requirement: "the leaseToken from next", provided: body.leaseToken }]);
    }
    return this.sqlite.transaction(() => {
      const row = getMessageRow(this.store, accountId, id);
      // Phones' unpadded or zone-less sentAt: read in the account's time zone.
      const sentAt = body.status === "sent" ? normalizeDeviceTime(body.sentAt, accountTimeZone(this.sqlite, accountId)) : body.sentAt;
      // The lease is judged before the move: a report from a phone whose lease is not the latest
      // one issued (held now, or the last one, expired or reported) never records anything.
      const token = typeof body.leaseToken === "string" && body.leaseToken !== "" ? body.leaseToken : undefined;
      const currentLease = row.lease_token ?? row.last_lease_token;
      if (token !== undefined && currentLease !== null && currentLease !== token) {
        throw new AppError("LEASE_CONFLICT", {
          message: "This message is now leased to another device; this report was not recorded",
          details: { messageId: id, currentStatus: row.status, leaseExpiresAt: row.lease_expires_at },
        });
      }
      // A phone repeating the failure report that already sent this message back for a retry.
      if (row.status === "queued" && body.status === "failed" && token !== undefined && row.lease_token === null && lastFailedLease(row.metadata) === token) {
        return { answer: { messageId: id, status: row.status, sentAt: row.sent_at, updatedAt: row.updated_at, retryScheduledFor: row.scheduled_for }, effects: {} };
      }
      const decision = decideTransition(
        { status: row.status, sentAt: row.sent_at, failureReason: row.failure_reason, retryCount: row.retry_count },
        { status: body.status as MessageStatus, sentAt: sentAt as string, failureReason: body.failureReason as string },
      );
      if (decision.kind === "validation") {
        throw validationError([{ field: decision.field, message: decision.message, requirement: decision.requirement, provided: decision.provided }]);
      }
      if (decision.kind === "invalid") {
        throw new AppError("INVALID_TRANSITION", {
          details: { currentStatus: decision.currentStatus, requestedStatus: decision.requestedStatus, message: decision.message },
        });
      }
      if (decision.kind === "noop") {
        return { answer: { messageId: id, status: row.status, sentAt: row.sent_at, updatedAt: row.updated_at }, effects: {} };
      }
      const now = this.clock();
      const updatedAt = nextUpdatedAt(now, row.updated_at);
      const next = decision.next;
      if (next.status === "failed") {
        const retry = scheduleRetry(this.sqlite, { id, accountId, reason: next.failureReason, retryCount: row.retry_count, leaseToken: row.lease_token, updatedAt }, now);
        if (retry.retry) {
          // Queued again for an automatic retry (src/services/retries.ts).
          const scheduledFor = iso(retry.scheduledFor);
          const effects: Effects = { endLease: id, dequeue: id, enqueue: { ...row, status: "queued", scheduled_for: scheduledFor } };
          return { answer: { messageId: id, status: "queued" as MessageStatus, sentAt: null, updatedAt, retryScheduledFor: scheduledFor }, effects };
        }
      }
      this.store.setStatus(id, { status: next.status, sentAt: next.sentAt, failureReason: next.failureReason, retryCount: next.retryCount, updatedAt });
      if (row.status === "failed" && next.status === "queued") recordOwnerRetry(this.sqlite, id, { failedAt: row.updated_at, reason: row.failure_reason, retryAt: iso(now) });
      if (decision.becameSent && row.contact_id) {
        this.store.countSentOnContact(accountId, row.contact_id, next.sentAt!, iso(now));
        // The contact's status, messageCount and lastContactedAt moved: CRM syncs hear of it
        // (docs/api-decisions.md, "The phone path, round two": every contact change emits).
        emitContact(this.sqlite, accountId, row.contact_id, "contact.updated", now);
      }
      if (next.status === "sent" && opts.deviceSentAt !== undefined) {
        // The phone's own sentAt was not believed (docs/devices.md): kept for the timeline.
        this.store.setDeviceSentAt(id, opts.deviceSentAt);
      }
      if (next.status === "cancelled" && opts.actor) this.store.setCancelledBy(id, JSON.stringify(opts.actor));
      emitMessageStatus(this.sqlite, accountId, id, next.status, now);
      const effects: Effects = { endLease: id };
      if (next.status === "cancelled" && row.lease_token !== null && row.lease_device_id !== null) {
        effects.cancelledLease = { accountId, holder: row.lease_device_id };
      }
      if (decision.leftQueue) effects.dequeue = id;
      if (decision.enteredQueue) effects.enqueue = { ...row, status: "queued" };
      return { answer: { messageId: id, status: next.status, sentAt: next.sentAt, updatedAt }, effects };
    })();
  }

  private afterCommit(e: Effects) {
    if (e.endLease) this.leases.forget(e.endLease);
    if (e.endLease && e.cancelledLease) this.leases.cancelled(e.cancelledLease.accountId, e.endLease, e.cancelledLease.holder);
    if (e.dequeue) this.queue.remove(e.dequeue);
    if (e.enqueue) {
      requeue(this.queue, [queueEntryOf(e.enqueue)]);
      this.leases.notify(e.enqueue.account_id);
    }
  }

  /** Each id is judged alone; refused ones are listed with the code their single request would get. */
  bulk(accountId: string, body: { messageIds?: unknown; status?: unknown; sentAt?: unknown; failureReason?: unknown }, actor?: Actor) {
    const ids = body.messageIds;
    const errs: FieldErr[] = [];
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > BULK_MAX_IDS) {
      errs.push({
        field: "messageIds",
        message: `messageIds must be an array of 1 to ${BULK_MAX_IDS} message ids`,
        requirement: `array of 1-${BULK_MAX_IDS} ids`,
        provided: Array.isArray(ids) ? `${ids.length} ids` : (ids ?? null),
      });
    } else if (ids.some((x) => typeof x !== "string")) {
      errs.push({ field: "messageIds", message: "every message id must be a string", requirement: "array of strings", provided: null });
    }
    if (!isMessageStatus(body.status)) errs.push(enumError("status", MESSAGE_STATUSES, body.status ?? null));
    if (errs.length) throw validationError(errs);
    // The fields the status needs are checked once for the whole request (as for a queued message).
    const probe = decideTransition({ status: "queued", sentAt: null, failureReason: null, retryCount: 0 }, {
      status: body.status as MessageStatus,
      sentAt: body.sentAt as string,
      failureReason: body.failureReason as string,
    });
    if (probe.kind === "validation") {
      throw validationError([{ field: probe.field, message: probe.message, requirement: probe.requirement, provided: probe.provided }]);
    }
    const errors: Array<{ id: string; code: string; message: string }> = [];
    const seen = new Set<string>();
    // One transaction for the request (each id's change nested in it as a savepoint), so a bulk
    // of 1000 ids costs one fsync, not 1000; the queue and leases change after it commits.
    const applied = this.sqlite.transaction(() => {
      const out: Effects[] = [];
      for (const id of ids as string[]) {
        if (seen.has(id)) continue; // a repeated id is judged once
        seen.add(id);
        try {
          const r = this.applyStatus(accountId, id, { status: body.status, sentAt: body.sentAt, failureReason: body.failureReason }, { actor });
          if (r.effects.endLease) out.push(r.effects);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          errors.push({ id, code: err.code, message: err.code === "INVALID_TRANSITION" ? String(err.details?.message ?? err.message) : err.message });
        }
      }
      return out;
    })();
    for (const e of applied) this.afterCommit(e);
    if (applied.length > 0) this.changes.message(accountId, "updated", "api");
    return { updated: applied.length, errors };
  }
}

interface Effects {
  endLease?: string;
  /** The message was cancelled while leased: tell its holder (SSE MessageCancelled). */
  cancelledLease?: { accountId: string; holder: string };
  dequeue?: string;
  enqueue?: MessageRow;
}
