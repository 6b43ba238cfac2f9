/**
 * The event outbox. A change that causes an event calls
 *
 *     emitEvent(this.sqlite, accountId, "contact.opted_out", () => ({ contact }), now)
 *
 * inside its own transaction: the event row is written on the same connection, so it commits or
 * rolls back with the change. The dispatcher is woken with setImmediate, which runs after the
 * (synchronous) transaction has committed (a rolled-back emit wakes it for nothing); it then
 * makes the deliveries of every new event in one statement (`fanOut`, in a group-commit job) and
 * sends them. The change's own transaction pays for one insert per event, whatever the number of
 * endpoints; `event_fanout.done_seq` marks what has been fanned out, so a crash in between loses
 * nothing.
 *
 * When no active endpoint of the account takes the type, nothing is written and `data` is never
 * built (pass a function to keep hot paths free of the work): an event no one receives is not
 * stored.
 */
import type { Database } from "bun:sqlite";
import { iso } from "../lib/clock";
import { newId } from "../lib/ids";
import { eventBody, subscribes, type EventType } from "../domain/outbound-events";
import { insertDelivery, insertEvent, listActiveEndpoints } from "../db/stores/events";

interface Subscriber {
  id: string;
  events: string[];
}

export class EventOutbox {
  /** Active endpoints per account (they change only through EventEndpointService in this process). */
  private subscribers = new Map<string, Subscriber[]>();
  private wakeScheduled = false;
  /** Events were written since the last fan-out (the dispatcher also checks SQLite at start). */
  needsFanout = true;
  /** Called (once per turn of the event loop) after events were written. */
  onEmitted: () => void = () => {};

  constructor(private readonly sqlite: Database) {}

  /** Reloads the active endpoints (boot, and after every endpoint change). */
  reload(): void {
    const m = new Map<string, Subscriber[]>();
    for (const r of listActiveEndpoints(this.sqlite)) {
      const list = m.get(r.account_id) ?? [];
      list.push({ id: r.id, events: r.events });
      m.set(r.account_id, list);
    }
    this.subscribers = m;
  }

  /** Whether an event of this type would be stored for the account. */
  wants(accountId: string, type: string): boolean {
    const subs = this.subscribers.get(accountId);
    return subs !== undefined && subs.some((s) => subscribes(s.events, type));
  }

  /**
   * Writes the event in the caller's transaction. Returns the event id, or null when no active
   * endpoint takes it. `onlyEndpointId` (the test ping) writes its one delivery at once instead.
   */
  emit(accountId: string, type: EventType, data: unknown | (() => unknown), now: number, onlyEndpointId?: string): string | null {
    if (onlyEndpointId === undefined && !this.wants(accountId, type)) return null;
    const id = newId();
    const at = iso(now);
    const value = typeof data === "function" ? (data as () => unknown)() : data;
    insertEvent(this.sqlite, { id, account_id: accountId, type, payload: eventBody(type, at, value), created_at: at });
    if (onlyEndpointId !== undefined) insertDelivery(this.sqlite, { eventId: id, endpointId: onlyEndpointId, accountId, type, at });
    else this.needsFanout = true;
    this.wake();
    return id;
  }

  /** Events were written by another connection (the intake applier): fanned out on the next wake. */
  written(): void {
    this.needsFanout = true;
    this.wake();
  }

  wake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.onEmitted();
    });
  }
}


/** The outbox of each open database: what emitEvent writes through. */
const outboxes = new WeakMap<Database, EventOutbox>();

export function registerOutbox(sqlite: Database, outbox: EventOutbox): void {
  outboxes.set(sqlite, outbox);
}

/**
 * Emits an event inside the caller's transaction on `sqlite` (see the module comment). A database
 * without a running server's outbox (a CLI command) emits nothing. Returns the event id or null.
 */
export function emitEvent(sqlite: Database, accountId: string, type: EventType, data: unknown | (() => unknown), now: number): string | null {
  return outboxes.get(sqlite)?.emit(accountId, type, data, now) ?? null;
}
