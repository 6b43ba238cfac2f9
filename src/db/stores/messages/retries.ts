/**
 * Queries behind automatic retries (domain/retry-policy.ts): which attempt count applies to a
 * message, and putting a failed attempt back in the queue. Plain functions over the connection;
 * callers own the transaction.
 */
import type { Database } from "bun:sqlite";
import { DEFAULT_MAX_ATTEMPTS } from "../../../domain/retry-policy";

/** The message's own maxAttempts, else its form's settings.maxAttempts, else the default. */
export function effectiveMaxAttempts(sqlite: Database, messageId: string): number {
  const row = sqlite
    .query(
      `SELECT COALESCE(m.max_attempts, CAST(json_extract(f.settings, '$.maxAttempts') AS INTEGER), ?2) AS n
       FROM messages m LEFT JOIN forms f ON f.id = m.form_id WHERE m.id = ?1`,
    )
    .get(messageId, DEFAULT_MAX_ATTEMPTS) as { n: number } | null;
  return row?.n ?? DEFAULT_MAX_ATTEMPTS;
}

/**
 * A failed attempt goes back to the queue for `scheduledFor`: lease ended, lease expiries reset,
 * failureReason cleared (the message is not failed), the failure kept in metadata
 * (`failures: [{at, reason, retryAt}]`, `lastFailedLease` so a phone repeating the same report is
 * answered as a repeat).
 */
export function requeueForRetry(
  sqlite: Database,
  m: { id: string; reason: string; retryCount: number; scheduledFor: string; updatedAt: string; failedAt: string; leaseToken: string | null },
): void {
  sqlite
    .query(
      `UPDATE messages SET status = 'queued', failure_reason = NULL, retry_count = ?2, scheduled_for = ?3, updated_at = ?4,
         lease_token = NULL, lease_expires_at = NULL, lease_device_id = NULL, lease_expiries = 0,
         metadata = json_set(
           json_insert(
             json_set(metadata, '$.failures', json(COALESCE(json_extract(metadata, '$.failures'), '[]'))),
             '$.failures[#]', json_object('at', ?5, 'reason', ?6, 'retryAt', ?3)
           ),
           '$.lastFailedLease', ?7
         )
       WHERE id = ?1`,
    )
    .run(m.id, m.retryCount, m.scheduledFor, m.updatedAt, m.failedAt, m.reason, m.leaseToken);
}

/** The lease whose failure report last sent the message back for a retry (null if none). */
export function lastFailedLease(metadata: string): string | null {
  try {
    const v = JSON.parse(metadata)?.lastFailedLease;
    return typeof v === "string" ? v : null;
  } catch {
    return null;
  }
}
