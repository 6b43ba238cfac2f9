import type { Database } from "bun:sqlite";

/**
 * Creation order for queued messages (the queue's last tiebreak after priority and schedule).
 * Monotonic within the process, started past the largest value in the database at boot.
 */
export class Sequence {
  private last: number;
  constructor(start: number) {
    this.last = start;
  }
  static fromDb(sqlite: Database): Sequence {
    const row = sqlite.query("SELECT coalesce(max(seq), 0) AS m FROM messages").get() as { m: number };
    return new Sequence(row.m);
  }
  next(): number {
    return ++this.last;
  }
}
