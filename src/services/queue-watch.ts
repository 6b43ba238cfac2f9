/**
 * queue.stuck: an account has messages due and no phone has asked for work
 * (POST/GET /v1/messages/next) for --stuck-after. One event per stuck spell: it is emitted when
 * the spell starts and again only after a phone has polled or the due messages are gone.
 *
 * Polls are heard as the leasing service announces them (src/lib/changes.ts, "asked-for-work"),
 * whichever path the phone asked by: /v1/messages/next, a recipe's long-poll, the mobile API.
 */
import type { Database } from "bun:sqlite";
import { accountIds } from "../db/stores/accounts";
import { iso, type Clock } from "../lib/clock";
import type { MessageQueue } from "../queue/priority-queue";
import type { LeaseService } from "./leases";
import type { Changes } from "../lib/changes";
import type { Lifecycle } from "../lib/lifecycle";
import { emitEvent } from "./events";

/** How often accounts are checked (at most; a short --stuck-after checks more often). */
export const STUCK_CHECK_EVERY_MS = 30_000;

export class QueueWatch implements Lifecycle {
  readonly name = "queue-watch";
  private readonly lastPoll = new Map<string, number>();
  private readonly stuck = new Set<string>();
  private readonly startedAt: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly leases: Pick<LeaseService, "isLeased">,
    private readonly stuckAfterMs: number,
    changes: Changes,
  ) {
    this.startedAt = clock();
    changes.on("device", (c) => {
      if (c.what === "asked-for-work") this.notePoll(c.accountId, c.at);
    });
  }

  notePoll(accountId: string, now: number): void {
    this.lastPoll.set(accountId, now);
    this.stuck.delete(accountId);
  }

  start(): void {
    this.timer = setInterval(() => this.check(this.clock()), Math.min(STUCK_CHECK_EVERY_MS, Math.max(1_000, Math.floor(this.stuckAfterMs / 4))));
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Emits queue.stuck for accounts that just became stuck; returns their ids. */
  check(now: number): string[] {
    const found: string[] = [];
    // An account with nothing queued has nothing due; one still marked stuck is looked at to end its spell.
    for (const id of new Set([...this.queue.accountIds(), ...this.stuck])) {
      const due = this.queue.takeDue(id, now, 1, (m) => this.leases.isLeased(m));
      if (due.length === 0) {
        this.stuck.delete(id);
        continue;
      }
      const last = this.lastPoll.get(id);
      const quietSince = last ?? this.startedAt;
      if (now - quietSince < this.stuckAfterMs || this.stuck.has(id)) continue;
      this.stuck.add(id);
      found.push(id);
      const oldest = due[0];
      this.sqlite.transaction(() =>
        emitEvent(this.sqlite, id, "queue.stuck", () => ({
          queue: {
            queuedMessages: this.queue.size(id),
            nextDueMessageId: oldest.id,
            nextDueScheduledFor: iso(oldest.scheduledFor),
            lastDevicePollAt: last === undefined ? null : iso(last),
            stuckAfterSeconds: Math.round(this.stuckAfterMs / 1000),
          },
        }), now),
      )();
    }
    return found;
  }
}
