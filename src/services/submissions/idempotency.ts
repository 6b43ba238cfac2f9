/**
 * Idempotency-Key: the first answer to a (form, key) pair is stored with the submission and
 * replayed for 24 hours; a key reused with another body is refused (docs/api-decisions.md,
 * "Webhook" and "Public forms").
 */
import { AppError } from "../../errors";

/** Idempotency-Key replays last this long. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const IDEMPOTENCY_KEY_MAX = 255;
/** How often expired idempotency keys are purged. */
export const IDEMPOTENCY_SWEEP_MS = 3_600_000;

/** The answer to a refused Idempotency-Key reuse: nothing is written. */
export function keyReused(key: string): AppError {
  return new AppError("IDEMPOTENCY_KEY_REUSED", {
    message: "This Idempotency-Key was already used with a different body; use a new key for a new submission",
    details: { field: "Idempotency-Key", provided: key.slice(0, 100) },
  });
}
