/**
 * The webhook's form + account lookup, kept in memory (issue 15 item 5): a hit costs a Map lookup
 * (and now and then a `PRAGMA data_version`) instead of a join per request.
 *
 * Kept true two ways:
 *  - in this process, the services that change what a lookup returns — a form's update, delete and
 *    webhook-address rotation, an account's update (monthly quota) and delete — call
 *    `invalidateWebhookForms(sqlite)` right after their statement;
 *  - from other processes (the CLI: `textwire accounts update`, `accounts delete`), SQLite's
 *    `data_version` on this connection changes with every commit made by another connection, and
 *    then everything cached is dropped (checked at most every DATA_VERSION_CHECK_MS).
 * Unknown addresses are never cached (a new form needs no invalidation), and the cache is cleared
 * rather than evicted when it reaches its size bound.
 */
import type { Database, Statement } from "bun:sqlite";

/** Entries before the cache starts over (each is a form's parsed definition, a few KiB). */
export const WEBHOOK_FORM_CACHE_MAX = 10_000;
/**
 * `PRAGMA data_version` costs a few µs (it reads the WAL index header), so it is asked at most
 * once per this many ms: another process's change is seen within 1 ms instead of at once.
 */
export const DATA_VERSION_CHECK_MS = 1;

export class WebhookFormCache<T> {
  private readonly entries = new Map<string, T>();
  private readonly dataVersion: Statement<{ data_version: number }, []>;
  private version: number;
  private checkedAt = 0;

  constructor(sqlite: Database) {
    this.dataVersion = sqlite.prepare("PRAGMA data_version");
    this.version = this.dataVersion.get()!.data_version;
  }

  get(token: string): T | undefined {
    const now = performance.now();
    if (now - this.checkedAt >= DATA_VERSION_CHECK_MS) {
      this.checkedAt = now;
      const v = this.dataVersion.get()!.data_version;
      if (v !== this.version) {
        this.version = v;
        this.entries.clear();
        return undefined;
      }
    }
    return this.entries.get(token);
  }

  set(token: string, value: T) {
    if (this.entries.size >= WEBHOOK_FORM_CACHE_MAX) this.entries.clear();
    this.entries.set(token, value);
  }

  clear() {
    this.entries.clear();
  }

  get size() {
    return this.entries.size;
  }
}

const caches = new WeakMap<Database, WebhookFormCache<unknown>>();

/** The cache of the webhook lookups made on this connection. */
export function webhookFormCache<T>(sqlite: Database): WebhookFormCache<T> {
  let c = caches.get(sqlite);
  if (!c) {
    c = new WebhookFormCache<unknown>(sqlite);
    caches.set(sqlite, c);
  }
  return c as WebhookFormCache<T>;
}

/** A form or an account changed on this connection: the next webhook lookups read it again. */
export function invalidateWebhookForms(sqlite: Database) {
  caches.get(sqlite)?.clear();
}
