/**
 * The webhook intake's statements (tables: drizzle/0016_submission_intake.sql). The request path
 * appends and reads the high-water mark; the applier reads in order, moves the mark and deletes
 * what it applied — each on its own connection.
 */
import type { Database, Statement } from "bun:sqlite";
import type { submissionIntake } from "../schema/intake";
import { decodeIntakeEntry, encodeIntakeEntry } from "../intake-entry-codec";

/** A stored row (`entry` is kept compressed when appends are apart, else as JSON text: src/db/intake-entry-codec.ts). */
export type IntakeRow = typeof submissionIntake.$inferSelect;

/**
 * The intake, its entries of type `E` (stored as compressed JSON, src/db/intake-entry-codec.ts:
 * written and parsed here, so callers hand over and get back the entry itself).
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

/**
 * Appends closer together than this are a busy server's: their entries are kept as JSON text.
 * Compressing pays where a webhook commit holds one entry (a shop's rate: the compressed entry
 * keeps the commit from taking a new page, −4.5 KiB to the disk per submission); in a busy
 * server's group commit, many entries share each page anyway (−1.5 KiB), and deflate's CPU, ~12 µs
 * a request on the main thread, cost 14% of the webhook's throughput at saturation on two cores
 * (docs/api-decisions.md, "Disk bytes, round three").
 */
export const COMPRESS_WHEN_APART_MS = 5;

export function intakeStore<E>(sqlite: Database, now: () => number = performance.now.bind(performance)): IntakeStore<E> {
  /** When the last entry was appended (the gap to the next decides its form). */
  let lastAppend = Number.NEGATIVE_INFINITY;
  const insert: Statement<unknown, [number, Uint8Array | string]> = sqlite.prepare("INSERT INTO submission_intake (seq, entry) VALUES (?, ?)");
  const applied: Statement<{ seq: number }, []> = sqlite.prepare("SELECT seq FROM intake_applied WHERE id = 1");
  const last: Statement<{ m: number }, []> = sqlite.prepare("SELECT coalesce(max(seq), 0) AS m FROM submission_intake");
  const after: Statement<{ seq: number; entry: string | Uint8Array }, [number, number, number]> = sqlite.prepare("SELECT seq, entry FROM submission_intake WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?");
  const mark: Statement<unknown, [number]> = sqlite.prepare("UPDATE intake_applied SET seq = ? WHERE id = 1");
  const purge: Statement<unknown, [number]> = sqlite.prepare("DELETE FROM submission_intake WHERE seq <= ?");
  const count: Statement<{ n: number }, []> = sqlite.prepare("SELECT count(*) AS n FROM submission_intake");
  return {
    append(seq, entry) {
      const json = JSON.stringify(entry);
      const at = now();
      const apart = at - lastAppend >= COMPRESS_WHEN_APART_MS;
      lastAppend = at;
      insert.run(seq, apart ? encodeIntakeEntry(json) : json);
    },
    appliedSeq: () => applied.get()?.seq ?? 0,
    lastSeq: () => Math.max(last.get()!.m, applied.get()?.seq ?? 0),
    listAfter: (seq, limit, upTo = Number.MAX_SAFE_INTEGER) => after.all(seq, upTo, limit).map((row) => ({ seq: row.seq, entry: JSON.parse(decodeIntakeEntry(row.entry)) as E })),
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

/**
 * Intake rows out of step with the applied mark (doctor). An unapplied row whose rows are not
 * there yet is normal (the applier is behind). Out of step: a row at or below the mark (apply and
 * delete share one transaction, so none is left), or a row above it whose submission already
 * exists (it would be applied twice). Entries are read in JS (they are stored compressed); the
 * intake holds at most the applier's backlog.
 */
export function intakeMismatches(sqlite: Database): IntakeMismatch[] {
  const mark = (sqlite.query("SELECT seq FROM intake_applied WHERE id = 1").get() as { seq: number } | null)?.seq ?? 0;
  const found = sqlite.query("SELECT EXISTS (SELECT 1 FROM submissions WHERE id = ?1) AS submitted, EXISTS (SELECT 1 FROM messages WHERE id = ?2) AS message");
  const out: IntakeMismatch[] = [];
  for (const row of sqlite.query("SELECT seq, entry FROM submission_intake ORDER BY seq").iterate() as IterableIterator<{ seq: number; entry: string | Uint8Array }>) {
    let e: { submissionId?: unknown; kind?: unknown; messageId?: unknown } = {};
    try {
      e = JSON.parse(decodeIntakeEntry(row.entry));
    } catch {}
    const submissionId = typeof e.submissionId === "string" ? e.submissionId : null;
    const applied = row.seq <= mark;
    const f = found.get(submissionId, typeof e.messageId === "string" ? e.messageId : null) as { submitted: number; message: number };
    const submitted = f.submitted === 1;
    if (!applied && !submitted) continue;
    const present = submitted && (e.kind !== "queued" || f.message === 1);
    out.push({ seq: row.seq, submissionId, applied, present });
  }
  return out;
}

