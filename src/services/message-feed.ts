import type { ChangeCause, Changes } from "../lib/changes";

/**
 * The in-process feed of message changes behind the dashboard's live Messages page: it listens to
 * the services' change announcements (src/lib/changes.ts: every message and contact change, by
 * whatever path it was made, after commit) and tells each account's subscribers "something
 * changed"; they read the list again. Events carry no message data, so a subscriber sees only
 * what the API shows.
 */
export interface MessageChange {
  /** Who changed it: "queue" (a message became due, was queued, leased or left the queue), "api" (a person or client through the API), "device" (a phone's report). */
  source: ChangeCause;
  at: number;
}

export class MessageFeed {
  private readonly subscribers = new Map<string, Set<(c: MessageChange) => void>>();
  private readonly closers = new Set<() => void>();

  constructor(
    private readonly clock: () => number,
    changes: Changes,
  ) {
    changes.on("message", (c) => this.publish(c.accountId, c.cause));
    // A contact's name, opt-out or removal shows in the message list too.
    changes.on("contact", (c) => this.publish(c.accountId, "api"));
  }

  /** `onClose` is called when the server stops, so open streams end and the stop is not held up. */
  subscribe(accountId: string, fn: (c: MessageChange) => void, onClose?: () => void): () => void {
    let set = this.subscribers.get(accountId);
    if (!set) this.subscribers.set(accountId, (set = new Set()));
    set.add(fn);
    if (onClose) this.closers.add(onClose);
    return () => {
      set!.delete(fn);
      if (onClose) this.closers.delete(onClose);
      if (set!.size === 0 && this.subscribers.get(accountId) === set) this.subscribers.delete(accountId);
    };
  }

  /** Ends every open stream (server stop). */
  closeAll(): void {
    for (const close of [...this.closers]) close();
    this.closers.clear();
    this.subscribers.clear();
  }

  publish(accountId: string, source: MessageChange["source"]): void {
    const set = this.subscribers.get(accountId);
    if (!set) return;
    const change = { source, at: this.clock() };
    for (const fn of [...set]) fn(change);
  }

  subscriberCount(): number {
    let n = 0;
    for (const s of this.subscribers.values()) n += s.size;
    return n;
  }
}
