/**
 * Retry scheduling after a failed attempt: the one place that decides, inside the failure's own
 * transaction, whether a failure is final or puts the message back in the queue for another try.
 * A phone's or client's `failed` report (src/services/message-status.ts) and a lease that ran out
 * with no report (src/services/leases.ts) both come here; the rule itself (which reasons are
 * transient, the backoff) is pure, in src/domain/retry-policy.ts.
 */
import type { Database } from "bun:sqlite";
import { iso } from "../lib/clock";
import { decideRetry } from "../domain/retry-policy";
import { effectiveMaxAttempts, requeueForRetry } from "../db/stores/messages/retries";
import { emitMessageStatus, messagePayload } from "./event-payloads";
import { emitEvent } from "./events";

export interface FailedAttempt {
  id: string;
  accountId: string;
  reason: string | null;
  /** Retries already made. */
  retryCount: number;
  /** The lease the failure answers (kept so a phone repeating its report is a repeat); null when none. */
  leaseToken: string | null;
  updatedAt: string;
}

/**
 * Call inside the failure's transaction. When another attempt follows, the message is queued
 * again for `scheduledFor` (failures kept in its metadata, message.status "queued" emitted:
 * message.failed is only sent for the final failure) and the caller puts it back in the
 * in-memory queue after the commit. Otherwise nothing is written and the caller records the
 * final failure.
 */
export function scheduleRetry(sqlite: Database, f: FailedAttempt, now: number): { retry: true; retryCount: number; scheduledFor: number } | { retry: false } {
  if (f.reason === null) return { retry: false };
  const decision = decideRetry({ retryCount: f.retryCount, maxAttempts: effectiveMaxAttempts(sqlite, f.id), reason: f.reason, now });
  if (!decision.retry) return decision;
  requeueForRetry(sqlite, {
    id: f.id,
    reason: f.reason,
    retryCount: decision.retryCount,
    scheduledFor: iso(decision.scheduledFor),
    updatedAt: f.updatedAt,
    failedAt: iso(now),
    leaseToken: f.leaseToken,
  });
  emitMessageStatus(sqlite, f.accountId, f.id, "queued", now);
  // SMSGate's clients hear of a phone's failure report at once, as sms:failed (docs/api-decisions.md,
  // "The SMSGate ecosystem, every call"); only SMSGate-format webhooks take this event. A lease
  // that ran out with no report is no report: the phone may have sent the text.
  if (f.leaseToken !== null) emitEvent(sqlite, f.accountId, "message.attempt_failed", () => ({ message: messagePayload(sqlite, f.id), failure: { reason: f.reason, at: iso(now) } }), now);
  return decision;
}
