import type { ObservedRequest } from "../lib/request-observer";

/**
 * The in-process feed of message changes behind the dashboard's live Messages page: told after
 * commit (queue changes via `LeaseService.notify`, and every successful request that changes
 * messages through the API), it tells each account's subscribers "something changed"; they read
 * the list again. Events carry no message data, so a subscriber sees only what the API shows it.
 */
export interface MessageChange {
  /** What told the feed: "queue" (a message became due or was re-queued), "api" (a status change), "device" (a phone's report through the mobile API). */
  source: "queue" | "api" | "device";
  at: number;
}

export class MessageFeed {
  private readonly subscribers = new Map<string, Set<(c: MessageChange) => void>>();
  private readonly closers = new Set<() => void>();

  constructor(private readonly clock: () => number) {}

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

  /** The HTTP observer: a successful change of messages through the API (answered, so committed). */
  readonly observe = (state: ObservedRequest, method: string, status: number): void => {
    if (method === "GET" || method === "HEAD" || status >= 300 || !state.auth) return;
    if (!state.logPath.startsWith("/v1/messages") && !state.logPath.startsWith("/v1/contacts") && !state.logPath.startsWith("/v1/broadcasts")) return;
    this.publish(state.auth.accountId, "api");
  };
}
