/**
 * The webhook's form + account lookup, kept in memory: a hit costs a Map lookup
 * (and now and then a `PRAGMA data_version`) instead of a join per request.
 *
 * Kept true two ways:
 *  - in this process, the services that change what a lookup returns — a form's update, delete and
 *    webhook-address rotation, an account's update (monthly quota) and delete — call
 *    `invalidateWebhookForms(sqlite)` right after their statement;
 *  - from other processes (the CLI: `textwire accounts update`, `accounts delete`), SQLite's
 *    `data_version` on this connection changes with every commit made by another connection; it
 *    is asked on every lookup, so a change committed before a request is seen by that request
 *    (docs/api-decisions.md, "The API document for generated clients; small truths").
 * Unknown addresses are never cached (a new form needs no invalidation), and the cache is cleared
 * rather than evicted when it reaches its size bound.
 */
import type { Database, Statement } from "bun:sqlite";

/** Entries before the cache starts over (each is a form's parsed definition, a few KiB). */
export const WEBHOOK_FORM_CACHE_MAX = 10_000;
export class WebhookFormCache<T> {
  private readonly entries = new Map<string, T>();
  private readonly dataVersion: Statement<{ data_version: number }, []>;
  /** Moved by triggers on forms and accounts (migration 0016): other commits (the intake applier's) keep the cache. */
  private readonly formsVersion: Statement<{ v: number }, []>;
  private version: number;
  private forms: number;

  constructor(sqlite: Database) {
    this.dataVersion = sqlite.prepare("PRAGMA data_version");
    this.version = this.dataVersion.get()!.data_version;
    this.formsVersion = sqlite.prepare("SELECT v FROM webhook_forms_version WHERE id = 1");
    this.forms = this.formsVersion.get()?.v ?? 0;
  }

  /**
   * The cached lookup, after asking whether another connection committed since the last one.
   * `PRAGMA data_version` costs about 3 µs (it reads the WAL index header): asked on every lookup,
   * not once per interval, so that no request can be answered from a cache another process has
   * already made stale (an interval let a submission right after `textwire accounts update` see
   * the old quota).
   */
  get(token: string): T | undefined {
    const v = this.dataVersion.get()!.data_version;
    if (v !== this.version) {
      this.version = v;
      const f = this.formsVersion.get()?.v ?? 0;
      if (f !== this.forms) {
        this.forms = f;
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
