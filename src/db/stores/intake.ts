/**
 * The webhook intake's statements (tables: drizzle/0016_submission_intake.sql). The request path
 * appends and reads the high-water mark; the applier reads in order, moves the mark and deletes
 * what it applied — each on its own connection.
 */
import type { Database, Statement } from "bun:sqlite";
import type { submissionIntake } from "../schema/intake";

export type IntakeRow = typeof submissionIntake.$inferSelect;

/**
 * The intake, its entries of type `E` (stored as JSON text: written and parsed here, so callers
 * hand over and get back the entry itself).
 */
export interface IntakeStore<E = unknown> {
  /** Appends one entry (the request path, inside its group-commit job). */
  append(seq: number, entry: E): void;
  /** The last applied seq (0 before any). */
  appliedSeq(): number;
  /** The largest seq written (applied or not). */
  lastSeq(): number;
  /** Entries past `seq`, at most `upTo` (the highest seq on disk; all when omitted), in seq order. */
  listAfter(seq: number, limit: number, upTo?: number): Array<{ seq: number; entry: E }>;
  /** Records `seq` as applied and deletes the applied rows (same transaction as the apply). */
  markApplied(seq: number): void;
  /** Rows not applied yet. */
  pending(): number;
}

export function intakeStore<E>(sqlite: Database): IntakeStore<E> {
  const insert: Statement<unknown, [number, string]> = sqlite.prepare("INSERT INTO submission_intake (seq, entry) VALUES (?, ?)");
  const applied: Statement<{ seq: number }, []> = sqlite.prepare("SELECT seq FROM intake_applied WHERE id = 1");
  const last: Statement<{ m: number }, []> = sqlite.prepare("SELECT coalesce(max(seq), 0) AS m FROM submission_intake");
  const after: Statement<IntakeRow, [number, number, number]> = sqlite.prepare("SELECT seq, entry FROM submission_intake WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?");
  const mark: Statement<unknown, [number]> = sqlite.prepare("UPDATE intake_applied SET seq = ? WHERE id = 1");
  const purge: Statement<unknown, [number]> = sqlite.prepare("DELETE FROM submission_intake WHERE seq <= ?");
  const count: Statement<{ n: number }, []> = sqlite.prepare("SELECT count(*) AS n FROM submission_intake");
  return {
    append: (seq, entry) => void insert.run(seq, JSON.stringify(entry)),
    appliedSeq: () => applied.get()?.seq ?? 0,
    lastSeq: () => Math.max(last.get()!.m, applied.get()?.seq ?? 0),
    listAfter: (seq, limit, upTo = Number.MAX_SAFE_INTEGER) => after.all(seq, upTo, limit).map((row) => ({ seq: row.seq, entry: JSON.parse(row.entry) as E })),
    markApplied(seq) {
      mark.run(seq);
      purge.run(seq);
    },
    pending: () => count.get()!.n,
  };
}

/** An intake row `textwire doctor` finds out of step with what was applied. */
export interface IntakeMismatch {
  seq: number;
  submissionId: string | null;
  /** At or below intake_applied.seq (its apply committed), or above it (not applied yet). */
  applied: boolean;
  /** Its submission (and, for a queued entry, its message) is in the database. */
  present: boolean;
}

const PRESENT = `EXISTS (SELECT 1 FROM submissions s WHERE s.id = json_extract(i.entry, '$.submissionId'))
  AND (json_extract(i.entry, '$.kind') <> 'queued' OR EXISTS (SELECT 1 FROM messages m WHERE m.id = json_extract(i.entry, '$.messageId')))`;

/**
 * Intake rows out of step with the applied mark (doctor). An unapplied row whose rows are not
 * there yet is normal (the applier is behind). Out of step: a row at or below the mark (apply and
 * delete share one transaction, so none is left), or a row above it whose submission already
 * exists (it would be applied twice).
 */
export function intakeMismatches(sqlite: Database): IntakeMismatch[] {
  const rows = sqlite
    .query(
      `SELECT seq, submission_id, applied, present FROM (
         SELECT i.seq, json_extract(i.entry, '$.submissionId') AS submission_id, i.seq <= a.seq AS applied,
                EXISTS (SELECT 1 FROM submissions s WHERE s.id = json_extract(i.entry, '$.submissionId')) AS submitted,
                ${PRESENT} AS present
           FROM submission_intake i JOIN intake_applied a ON a.id = 1)
       WHERE applied OR submitted ORDER BY seq`,
    )
    .all() as Array<{ seq: number; submission_id: string | null; applied: number; present: number }>;
  return rows.map((r) => ({ seq: r.seq, submissionId: r.submission_id, applied: r.applied === 1, present: r.present === 1 }));
}
