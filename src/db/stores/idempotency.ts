/**
 * Idempotency keys of webhook submissions (table idempotency_keys): the first answer to a
 * (form, Idempotency-Key) pair, replayed for 24 hours (docs/api-decisions.md, "Webhook").
 * The request path reads and writes them inside its group-commit job: prepared once.
 */
import type { Database, Statement } from "bun:sqlite";
import type { idempotencyKeys } from "../schema/forms";

type IdempotencyKey = typeof idempotencyKeys.$inferSelect;

/** A stored first answer, as a replay needs it. */
export type StoredAnswer = Pick<IdempotencyKey, "status" | "body" | "createdAt" | "bodyHash">;

export interface IdempotencyStore {
  /** The stored answer for (form, key), whatever its age. */
  find(formId: string, key: string): StoredAnswer | null;
  /** Forgets an expired key (inside the job that stores its new answer). */
  remove(formId: string, key: string): void;
  /** Stores the first answer for (form, key). */
  insert(formId: string, key: string, answer: StoredAnswer): void;
  /** Deletes the keys created before `before` (ISO); how many. */
  sweep(before: string): number;
}

export function idempotencyStore(sqlite: Database): IdempotencyStore {
  const get: Statement<StoredAnswer, [string, string]> = sqlite.prepare(
    "SELECT status, body, created_at AS createdAt, body_hash AS bodyHash FROM idempotency_keys WHERE form_id = ? AND key = ?",
  );
  const del: Statement<unknown, [string, string]> = sqlite.prepare("DELETE FROM idempotency_keys WHERE form_id = ? AND key = ?");
  const ins: Statement<unknown, [string, string, number, string, string | null, string]> = sqlite.prepare(
    "INSERT INTO idempotency_keys (form_id, key, status, body, body_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const sweep: Statement<unknown, [string]> = sqlite.prepare("DELETE FROM idempotency_keys WHERE created_at < ?");
  return {
    find: (formId, key) => get.get(formId, key),
    remove: (formId, key) => void del.run(formId, key),
    insert: (formId, key, a) => void ins.run(formId, key, a.status, a.body, a.bodyHash, a.createdAt),
    sweep: (before) => sweep.run(before).changes,
  };
}
