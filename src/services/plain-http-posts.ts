/**
 * Forms still posted to over plain HTTP after HTTPS was turned on: the redirect listener answers
 * each such post with 308 and records its form here, in memory; a flush every few seconds (and at
 * stop) writes the last time per form, so a busy form costs no write per request. The dashboard
 * lists the forms posted to in the last 30 days, so the owner knows which website to update
 * (docs/api-decisions.md, "The business's name, the server address and HTTPS without breaking forms").
 */
import type { Database } from "bun:sqlite";
import { iso, type Clock } from "../lib/clock";
import type { Lifecycle } from "../lib/lifecycle";
import type { Logger } from "../lib/log";
import { listPlainHttpForms, recordPlainHttpPosts } from "../db/stores/forms";

export const PLAIN_HTTP_WINDOW_DAYS = 30;
const FLUSH_EVERY_MS = 5_000;
/** Distinct addresses held between flushes: random paths cannot grow memory without bound. */
const MAX_PENDING = 10_000;
const WEBHOOK_PATH = /^\/v1\/forms\/([A-Za-z0-9_-]{1,100})\/webhook\/?$/;

export class PlainHttpPosts {
  private pending = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** A request the redirect listener answered: a POST to a form's address is remembered. */
  record(method: string, path: string): void {
    if (method !== "POST") return;
    const m = WEBHOOK_PATH.exec(path);
    if (!m) return;
    if (this.pending.size >= MAX_PENDING && !this.pending.has(m[1])) return;
    this.pending.set(m[1], iso(this.clock()));
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      recordPlainHttpPosts(this.sqlite, batch);
    } catch (err) {
      // A busy database: kept for the next flush (newer times win).
      for (const [k, v] of batch) if (!this.pending.has(k) && this.pending.size < MAX_PENDING) this.pending.set(k, v);
      this.logger.warn("could not record forms posted over plain HTTP; will retry", { error: String((err as Error)?.message ?? err) });
    }
  }

  /** The account's forms posted to over plain HTTP in the last 30 days. */
  list(accountId: string): Array<{ id: string; name: string; lastPlainHttpPostAt: string }> {
    this.flush();
    return listPlainHttpForms(this.sqlite, accountId, iso(this.clock() - PLAIN_HTTP_WINDOW_DAYS * 86_400_000));
  }

  lifecycle(): Lifecycle {
    return {
      name: "plain-http-posts",
      start: () => {
        this.timer = setInterval(() => this.flush(), FLUSH_EVERY_MS);
        (this.timer as { unref?: () => void }).unref?.();
      },
      stop: () => {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        this.flush();
      },
    };
  }
}
