/**
 * Change announcements: the services say what they changed, after it is committed, and the
 * in-process observers (the dashboard's live feed, the queue watcher, the phones' event streams)
 * listen here — none of them works out what changed from a request's URL, so a change made by any
 * path (a phone's report through the mobile API, a broadcast chunk, the intake applier) is heard
 * (docs/api-decisions.md, "One home per rule: messages, phones, events and change announcements").
 *
 * Only for observers in this process: exactly-once outbound events are rows of the transactional
 * outbox (services/events.ts), written inside the change's own transaction. An announcement is
 * made after the commit and carries no message data: a listener reads what it needs through the
 * services, so it sees only what the API shows.
 */

/** Who made a message change, as the dashboard's live feed tells it ("source" of its events). */
export type ChangeCause =
  /** The queue moved on its own: a message became due, was queued or re-queued, a lease ended. */
  | "queue"
  /** Someone changed it through the API or the dashboard. */
  | "api"
  /** A phone's report (the mobile API, its signed callbacks, a received text). */
  | "device";

export interface MessageChanged {
  kind: "message";
  accountId: string;
  /**
   * What happened: "queued" (new or re-queued: work may be waiting for the phones), "leased"
   * (handed to a phone), "settled" (left the queue: sent, failed, cancelled, deleted), "updated"
   * (anything else the message list shows, e.g. a delivery report or a received text).
   */
  what: "queued" | "leased" | "settled" | "updated";
  cause: ChangeCause;
}

export interface ContactChanged {
  kind: "contact";
  accountId: string;
  what: "created" | "updated" | "deleted" | "opt-out";
}

export interface DeviceChanged {
  kind: "device";
  accountId: string;
  /** "asked-for-work": a phone or a key asked for messages (the queue watcher's sign of life). */
  what: "registered" | "updated" | "removed" | "asked-for-work";
  at: number;
}

export type Change = MessageChanged | ContactChanged | DeviceChanged;
export type ChangeKind = Change["kind"];
type Listener<K extends ChangeKind> = (change: Extract<Change, { kind: K }>) => void;

/** One per server (AppDeps.changes); services are handed it, observers subscribe to it. */
export class Changes {
  private readonly listeners: { [K in ChangeKind]: Array<Listener<K>> } = { message: [], contact: [], device: [] };

  /** Listens to one kind of change; returns the unsubscribe. */
  on<K extends ChangeKind>(kind: K, listener: Listener<K>): () => void {
    const list = this.listeners[kind] as Array<Listener<K>>;
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Announces a committed change to every listener of its kind. */
  emit(change: Change): void {
    const list = this.listeners[change.kind] as Array<(c: Change) => void>;
    for (const l of list.length > 1 ? [...list] : list) l(change);
  }

  message(accountId: string, what: MessageChanged["what"], cause: ChangeCause): void {
    this.emit({ kind: "message", accountId, what, cause });
  }

  contact(accountId: string, what: ContactChanged["what"]): void {
    this.emit({ kind: "contact", accountId, what });
  }

  device(accountId: string, what: DeviceChanged["what"], at: number): void {
    this.emit({ kind: "device", accountId, what, at });
  }
}
