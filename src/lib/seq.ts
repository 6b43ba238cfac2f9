/**
 * Creation order for queued messages (the queue's last tiebreak after priority and schedule).
 * Monotonic within the process, started past the largest value in the database at boot
 * (src/db/database-info.ts, largestMessageSeq).
 */
export class Sequence {
  private last: number;
  constructor(start: number) {
    this.last = start;
  }
  next(): number {
    return ++this.last;
  }
}
