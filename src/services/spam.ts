/**
 * Honeypot catches: counted in memory (a flood of bots must not cost one disk write each) and
 * added to forms.spam_blocked through the group-commit writer every few seconds and at shutdown.
 * The form's stats show stored + pending, so the figure is exact while the server runs; a crash
 * loses at most the last few seconds of the count (and never any submission).
 */
import type { Database } from "bun:sqlite";
import type { GroupCommitWriter } from "../db/group-commit";
import { addSpamBlocked, findSpamBlocked } from "../db/stores/forms";
import type { Lifecycle } from "../lib/lifecycle";

/** How often pending counts are written. */
export const SPAM_FLUSH_MS = 5_000;

export class SpamCounter {
  private pending = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly sqlite: Database, private readonly writer: GroupCommitWriter) {}

  record(formId: string): void {
    this.pending.set(formId, (this.pending.get(formId) ?? 0) + 1);
  }

  /** Stored plus not yet written. */
  blocked(formId: string): number {
    return findSpamBlocked(this.sqlite, formId) + (this.pending.get(formId) ?? 0);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const counts = this.pending;
    this.pending = new Map();
    try {
      await this.writer.submit({ run: () => addSpamBlocked(this.sqlite, counts) });
    } catch {
      // Writer closed or busy: keep the counts for the next flush.
      for (const [id, n] of counts) this.pending.set(id, (this.pending.get(id) ?? 0) + n);
    }
  }

  lifecycle(): Lifecycle {
    return {
      name: "spam-counter",
      start: () => {
        this.timer = setInterval(() => void this.flush(), SPAM_FLUSH_MS);
        this.timer.unref?.();
      },
      stop: async () => {
        clearInterval(this.timer);
        await this.flush();
      },
    };
  }
}
