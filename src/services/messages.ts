/**
 * Messages: the one service routes and phones call (`deps.messages`), its jobs each in their own
 * module — reading and the list (message-listing.ts), status changes and bulk
 * (message-status.ts), manual messages (manual-messages.ts); delete is here. Leases (device
 * polling) live in LeaseService; a status change ends any lease on the message.
 *
 * SQLite is the truth; `queue` (the in-memory priority index) is changed only after the
 * transaction that changed a message's queued-ness has committed, and the change is then
 * announced (src/lib/changes.ts).
 */
import type { Waiting } from "./waiting";
import type { Actor } from "../domain/people";
import type { Database } from "bun:sqlite";
import { AppError } from "../errors";
import type { Clock } from "../lib/clock";
import type { MessageQueue } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import type { Changes } from "../lib/changes";
import { deviceNames } from "../db/message-history";
import { toMessage, type Message } from "../db/message-rows";
import { messagesOf, type MessageRow, type MessageStore } from "../db/stores/messages";
import { messageTimeline, type TimelineEvent } from "../domain/message-timeline";
import type { MonthlyQuota } from "./quota";
import type { LeaseService } from "./leases";
import { findMessageRow, getMessageRow, MessageListing, type ListQuery } from "./message-listing";
import { MessageStatusChanges, type StatusBody, type StatusOptions, type StatusResult } from "./message-status";
import { ManualMessages } from "./manual-messages";

export { MESSAGE_SORTS, type ListQuery, type MessageSort } from "./message-listing";
export { BULK_MAX_IDS, type StatusBody, type StatusOptions, type StatusResult } from "./message-status";
export { MANUAL_CONTENT_MAX } from "./manual-messages";

export class MessageService {
  private readonly store: MessageStore;
  private readonly listing: MessageListing;
  private readonly status: MessageStatusChanges;
  private readonly manual: ManualMessages;

  constructor(
    private readonly sqlite: Database,
    clock: Clock,
    queue: MessageQueue,
    seq: Sequence,
    private readonly leases: LeaseService,
    sendRatePerMinute: () => number,
    private readonly changes: Changes,
    quota?: MonthlyQuota,
    /** Why a queued text waits (services/waiting.ts, from the phones' capacity). */
    private readonly waiting?: (row: MessageRow) => Waiting | null,
  ) {
    this.store = messagesOf(sqlite);
    this.listing = new MessageListing(sqlite);
    this.status = new MessageStatusChanges(sqlite, clock, queue, leases, changes);
    this.manual = new ManualMessages(sqlite, clock, queue, seq, leases, sendRatePerMinute, quota);
  }

  /** Another account's message is answered exactly like one that does not exist. */
  findRow(accountId: string, id: string): MessageRow | null {
    return findMessageRow(this.store, accountId, id);
  }

  getRow(accountId: string, id: string): MessageRow {
    return getMessageRow(this.store, accountId, id);
  }

  get(accountId: string, id: string): Message {
    return toMessage(this.getRow(accountId, id));
  }

  /** The message and its timeline of states and leases (the dashboard's detail view); `waiting` while queued. */
  getWithTimeline(accountId: string, id: string): { message: Message; timeline: TimelineEvent[]; waiting?: Waiting } {
    const row = this.getRow(accountId, id);
    const message = toMessage(row);
    const holders = Array.isArray(message.metadata.leases) ? message.metadata.leases.map((l: any) => l?.deviceId).filter((x: unknown): x is string => typeof x === "string") : [];
    const names = deviceNames(this.sqlite, accountId, holders);
    const timeline = messageTimeline(
      {
        status: row.status,
        createdAt: row.created_at,
        scheduledFor: row.scheduled_for,
        sentAt: row.sent_at,
        updatedAt: row.updated_at,
        failureReason: row.failure_reason,
        leaseDeviceId: row.lease_device_id,
        leaseExpiresAt: row.lease_expires_at,
        metadata: message.metadata,
      },
      (d) => names.get(d) ?? null,
    );
    const waiting = row.status === "queued" && row.lease_token === null ? this.waiting?.(row) : null;
    return { message, timeline, ...(waiting ? { waiting } : {}) };
  }

  list(accountId: string, q: ListQuery) {
    return this.listing.list(accountId, q);
  }

  /** See MessageStatusChanges.updateStatus. */
  updateStatus(accountId: string, id: string, body: StatusBody, opts: StatusOptions = {}): StatusResult {
    return this.status.updateStatus(accountId, id, body, opts);
  }

  bulk(accountId: string, body: { messageIds?: unknown; status?: unknown; sentAt?: unknown; failureReason?: unknown }, actor?: Actor) {
    return this.status.bulk(accountId, body, actor);
  }

  createManual(...args: Parameters<ManualMessages["createManual"]>) {
    return this.manual.createManual(...args);
  }

  createTest(...args: Parameters<ManualMessages["createTest"]>) {
    return this.manual.createTest(...args);
  }

  delete(accountId: string, id: string): { deletedId: string } {
    this.sqlite.transaction(() => {
      const row = this.getRow(accountId, id);
      if (row.status !== "queued") {
        throw new AppError("INVALID_STATE", {
          message: `Only queued messages can be deleted; this one is ${row.status}`,
          details: { currentStatus: row.status },
        });
      }
      this.store.delete(accountId, id);
    })();
    // withdraw tells the phone holding it, if any (MessageCancelled).
    this.leases.withdraw([id]);
    this.changes.message(accountId, "settled", "api");
    return { deletedId: id };
  }
}
