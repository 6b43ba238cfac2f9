/**
 * The one sending path (docs/api-decisions.md, "The house, round two: one sending path"): every
 * text that enters the queue goes through here.
 *
 * - `admit()` (admit.ts): opt-out, consent, per-recipient limit, quiet hours, monthly quota, in
 *   that order; opt-outs and consent are asked of services/opt-outs.ts.
 * - `Sending.write()` / `writeTemplate()`: inside the caller's transaction, the row (rows.ts holds
 *   the only message inserts in src/services) and its message.queued event.
 * - `Sending.queued()`: after the commit, the in-memory queue, the phones' wake-up (which also
 *   announces the change) and any further announcement the path makes.
 * - `requeue()`: an existing row going back into the in-memory queue (a released lease, a retry, a
 *   status moved back to queued); the caller wakes the phones as its own rule says.
 *
 * One instance for the server (src/wiring/core.ts), given to every service that queues a text.
 *
 * Paths: the webhook (services/submissions/write.ts admits inside its group-commit job and puts the
 * entry in the queue before the commit, via `queueAhead`; the intake applier then writes the row in
 * its batch through applied.ts), manual and test texts, broadcasts, automation runs, the owner's keyword replies,
 * the replies to STOP/START/HELP, the SMSGate client API and team notices. test/unit/sending-home.test.ts checks
 * that nothing else calls `queue.insert`, inserts into `messages` or decides an opt-out.
 */
import type { Database } from "bun:sqlite";
import type { TemplateMessage } from "../../db/stores/broadcasts";
import type { MessageRow } from "../../db/stores/messages";
import type { ChangeCause, Changes } from "../../lib/changes";
import type { MessageQueue } from "../../queue/priority-queue";
import { emitMessageStatus } from "../event-payloads";
import type { LeaseService } from "../leases";
import { writeRow, writeTemplateRow, type QueueEntry } from "./rows";

export { admit, sendTime, type AdmitAsk, type Admission, type Refusal } from "./admit";
export { newQueuedRow, queueEntryOf, templateMessageOf, type QueueEntry } from "./rows";

export class Sending {
  constructor(
    private readonly sqlite: Database,
    private readonly queue: Pick<MessageQueue, "insert">,
    private readonly leases: Pick<LeaseService, "notify">,
    private readonly changes?: Changes,
  ) {}

  /**
   * Inside the caller's transaction: the row, and its message.queued event at `eventAt` (null:
   * the texts that have none, as keyword replies and team notices never had).
   */
  write(row: MessageRow, eventAt: number | null): void {
    writeQueued(this.sqlite, row, eventAt);
  }

  /** Inside the caller's transaction: a broadcast's or an automation step's message and its message.queued event. */
  writeTemplate(m: TemplateMessage, eventAt: number): void {
    writeTemplateRow(this.sqlite, m);
    emitMessageStatus(this.sqlite, m.accountId, m.id, "queued", eventAt);
  }

  /**
   * After the commit: the entries into the in-memory queue, the phones of each account woken
   * (LeaseService.notify, which announces "queued"), and, when the path announces its own cause,
   * that announcement too.
   */
  queued(entries: readonly QueueEntry[], announce?: ChangeCause): void {
    const accounts = new Set<string>();
    for (const e of entries) {
      this.queue.insert(e);
      accounts.add(e.accountId);
    }
    for (const accountId of accounts) {
      this.leases.notify(accountId);
      if (announce !== undefined) this.changes?.message(accountId, "queued", announce);
    }
  }
}

/**
 * Inside the caller's transaction, for a path whose after-commit steps are another service's (a
 * keyword reply inside the inbound text's transaction: services/inbound.ts queues it): the row and,
 * at `eventAt` unless null, its message.queued event.
 */
export function writeQueued(sqlite: Database, row: MessageRow, eventAt: number | null): void {
  writeRow(sqlite, row);
  if (eventAt !== null) emitMessageStatus(sqlite, row.account_id, row.id, "queued", eventAt);
}

/**
 * The webhook's entry, put in the queue inside its group-commit job before the commit (its answer
 * gives the queue position); the job's undo takes it out again (services/submissions/write.ts).
 */
export function queueAhead(queue: Pick<MessageQueue, "insert">, entry: QueueEntry): void {
  queue.insert(entry);
}

/** Existing rows back into the in-memory queue (a released lease, a retry, a status moved back to queued). */
export function requeue(queue: Pick<MessageQueue, "insert">, entries: readonly QueueEntry[]): void {
  for (const e of entries) queue.insert(e);
}
