/**
 * Leasing: every decision about handing a message to a phone. `next` hands out due queued
 * messages in queue order, each leased to the caller for `leaseSeconds` — for /v1/messages/next
 * with a key, and through `leaseToPhone` / `waitLeaseToPhone` for a phone with its own send rate
 * (the mobile API's GET /message, a recipe's next); the expiry sweep, a silent phone's release
 * and a phone's "Processed" extension are here too.
 *
 * - A leased message stays `queued` (and in the in-memory queue); `takeDue` skips leased ids, so
 *   while the lease runs no other `next` returns it. `next` is synchronous from the queue walk to
 *   the committed lease rows, so concurrent calls (one JS thread) can never share a message.
 * - Leases are written to SQLite (lease_token, lease_expires_at, lease_device_id) before the answer
 *   leaves, and mirrored in memory; the memory copy is reloaded from SQLite at boot.
 * - Expiry: swept by a 1 s timer and lazily at the start of every `next`. An expired lease returns
 *   the message to the queue (lease_expiries + 1); the expiry that reaches `maxLeaseAttempts`
 *   marks it `failed` with failureReason "no-report" instead (a text cannot be unsent, so we never
 *   loop on a phone that sends but cannot report).
 * - Send rate: a token bucket per account (capacity and refill = sendRatePerMinute per minute)
 *   caps how many messages leave through `next`.
 * - Long-poll: `waitNext` parks the caller on a per-account waiter list. Whoever puts a message
 *   into the queue calls `notify(accountId)` (the webhook's enqueue must too), and waiters also
 *   wake when the next scheduled message falls due, a lease expires, or a send token returns.
 */
import type { Database } from "bun:sqlite";
import { iso, type Clock, nextUpdatedAt } from "../lib/clock";
import type { MessageQueue, Priority } from "../queue/priority-queue";
import { TokenBucket, perMinute } from "../limits/token-bucket";
import type { Lifecycle } from "../lib/lifecycle";
import type { Changes } from "../lib/changes";
import { toMessage, type Message, type MessageRow } from "../db/stores/messages/rows";
import { emitMessageStatus } from "./event-payloads";
import { optedOutAtLease } from "./opt-outs";
import { requeue } from "./sending";
import { scheduleRetry } from "./retries";
import type { MessageStore } from "../db/stores/messages";
import type { SendingGate } from "./sending-capacity";
import { LeaseWaiters } from "./lease-waiters";

export const LEASE_SECONDS_DEFAULT = 300;
export const LEASE_SECONDS_MIN = 30;
export const LEASE_SECONDS_MAX = 3_600;
export const NEXT_LIMIT_MAX = 50;
export const WAIT_SECONDS_MAX = 30;
/** How often the timer looks for expired leases. */
export const LEASE_SWEEP_EVERY_MS = 1_000;
export const NO_REPORT_REASON = "no-report";
/**
 * A phone's gate may refuse texts (another phone's contact, a budget): the walk looks at most this
 * many due texts per request, so a long run of refusals costs a bounded walk.
 */
export const GATED_WALK_MAX = 512;

export interface LeasedMessage extends Message {
  leaseToken: string;
  leaseExpiresAt: string;
  /** The SIM chosen by the phone's budgets (1-based simNumber); absent or 0: the phone's own choice. */
  sim?: number;
}

export interface NextResult {
  messages: LeasedMessage[];
  /** When nothing left because of the send-rate cap: ms until one more may leave. */
  rateLimitedForMs?: number;
}

/** A phone asking for work with its own send rate (devices.ts resolves it). */
export interface PhoneAsking {
  /** The device's id: its send bucket. */
  id: string;
  accountId: string;
  /** How its leases are marked (lease_device_id). */
  holder: string;
  /** Its own cap, on top of the account's. */
  sendRatePerMinute: number;
  /**
   * Its sending budgets (services/sending-capacity.ts): a gate for this request, or how long until
   * it may take anything. Absent: no budget applies (an API client).
   */
  gate?: () => SendingGate | { waitMs: number };
}

export interface LeaseConfig {
  sendRatePerMinute: number;
  maxLeaseAttempts: number;
}

export class LeaseService {
  /** Leased message id → lease expiry (epoch ms); token and device live in the row only. */
  private readonly leases = new Map<string, number>();
  /** Who holds each lease given to a named device (MessageCancelled goes to it when the message is withdrawn). */
  private readonly holders = new Map<string, { accountId: string; holder: string }>();
  /** Earliest expiresAt among `leases` (Infinity when none): the lazy sweep is free until then. */
  private earliest = Infinity;
  private readonly waiters = new LeaseWaiters();
  private readonly buckets = new Map<string, TokenBucket>();
  /** Each phone's own send rate (its settings' sendRatePerMinute), by device id. */
  private readonly phoneBuckets = new Map<string, TokenBucket>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Called when a leased message is cancelled or deleted (SSE MessageCancelled to its holder). */
  private readonly cancelListeners: Array<(accountId: string, messageId: string, holder: string) => void> = [];

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly queue: MessageQueue,
    private readonly config: LeaseConfig,
    /**
     * Queue changes are announced after commit: "queued" when work may be waiting (waiters are
     * woken too; the phones' SSE MessageEnqueued listens), "leased", and "settled" when messages
     * only left the queue (the dashboard's live feed cares, phones do not).
     */
    private readonly changes: Changes,
    private readonly store: MessageStore,
  ) {}

  /** Reloads the leases SQLite holds (boot), after the queue has been rebuilt. */
  load(): void {
    this.leases.clear();
    this.holders.clear();
    for (const r of this.store.heldLeases()) {
      this.leases.set(r.id, Date.parse(r.lease_expires_at!));
      if (r.lease_device_id) this.holders.set(r.id, { accountId: r.account_id, holder: r.lease_device_id });
    }
    this.recomputeEarliest();
  }

  lifecycle(): Lifecycle {
    return {
      name: "lease-sweeper",
      start: () => {
        this.waiters.stopped = false;
        this.load();
        this.timer = setInterval(() => this.maybeSweep(this.clock()), LEASE_SWEEP_EVERY_MS);
        (this.timer as { unref?: () => void }).unref?.();
      },
      stop: () => {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        this.releaseWaiters();
      },
    };
  }

  /**
   * Shutdown: parked long-polls answer now (204 when nothing came) and new ones do not park, so
   * the server's drain of in-flight requests is not held up for their whole wait.
   */
  releaseWaiters(): void {
    this.waiters.releaseAll();
  }

  isLeased(id: string): boolean {
    return this.leases.has(id);
  }

  /** Drops the in-memory lease (the status change that ended it already cleared the row). */
  forget(id: string): void {
    this.leases.delete(id);
    this.holders.delete(id);
  }

  /**
   * After a commit that took messages out of the queued state for good (deleted, or failed by the
   * sweep): out of the queue, and any lease on them ended.
   */
  withdraw(ids: Iterable<string>): void {
    for (const id of ids) {
      this.leases.delete(id);
      this.queue.remove(id);
      // Cancelled, deleted or opted out while a phone holds it: tell that phone (MessageCancelled).
      const h = this.holders.get(id);
      if (h) {
        this.holders.delete(id);
        this.cancelled(h.accountId, id, h.holder);
      }
    }
  }

  /** Wakes long-polling `next` calls of the account: call after putting a message in the queue. */
  notify(accountId: string): void {
    this.changes.message(accountId, "queued", "queue");
    this.waiters.wake(accountId);
  }

  /**
   * A phone (or a client with a key) asked for work, whether or not anything was due or its send
   * rate let anything leave: the queue watcher's and /health's sign of life.
   */
  askedForWork(accountId: string): void {
    this.changes.device(accountId, "asked-for-work", this.clock());
  }

  onCancel(listener: (accountId: string, messageId: string, holder: string) => void): void {
    this.cancelListeners.push(listener);
  }

  /** A message leased to `holder` was cancelled or deleted (after the commit). */
  cancelled(accountId: string, messageId: string, holder: string): void {
    for (const l of this.cancelListeners) l(accountId, messageId, holder);
  }

  /**
   * Ends at once every lease held by `holder` (a device gone offline): the messages return to the
   * queue for other devices. Counted as an expiry, so the no-report cut-off still applies (the
   * phone may have sent before it vanished). `only`: just these of its leases (a paused SIM's).
   * Returns how many came back.
   */
  releaseHolder(holder: string, only?: string[], opts: { tellHolder?: boolean } = {}): number {
    const now = this.clock();
    const held = this.store.heldBy(holder);
    const ids = only ? held.filter((id) => only.includes(id)) : held;
    if (ids.length === 0) return 0;
    // A paused phone is still there: told MessageCancelled, it drops what it was not yet sending.
    if (opts.tellHolder) for (const id of ids) { const h = this.holders.get(id); if (h) this.cancelled(h.accountId, id, h.holder); }
    // Moving the expiry to now lets the one sweep rule decide: back to the queue, or no-report.
    this.sqlite.transaction(() => {
      for (const id of ids) this.store.expireLeaseAt(id, iso(now));
    })();
    for (const id of ids) if (this.leases.has(id)) this.leases.set(id, now);
    this.earliest = Math.min(this.earliest, now);
    return this.sweep(now).returned;
  }

  /**
   * The holder says it has the message in hand (SMSGate "Processed"): its lease runs another
   * `leaseSeconds` from now. A lease with more than half its length left is not rewritten (no
   * write, no fsync: the phone says "Processed" right after taking each message). False when
   * nothing changed.
   */
  extend(id: string, holder: string, leaseSeconds: number): boolean {
    const now = this.clock();
    const expiresAt = now + leaseSeconds * 1_000;
    const changed = this.store.extendLease(id, holder, iso(expiresAt), iso(now + (leaseSeconds * 1_000) / 2));
    if (!changed || !this.leases.has(id)) return false;
    // Only later: `earliest` stays a valid lower bound (a sweep at it finds nothing and recomputes).
    this.leases.set(id, expiresAt);
    return true;
  }

  private recomputeEarliest() {
    let e = Infinity;
    for (const expiresAt of this.leases.values()) if (expiresAt < e) e = expiresAt;
    this.earliest = e;
  }

  maybeSweep(now: number): void {
    if (now >= this.earliest) this.sweep(now);
  }

  /** Ends every lease expired at `now`. Returns how many messages went back and how many failed. */
  sweep(now: number): { returned: number; failed: number } {
    const nowIso = iso(now);
    const max = this.config.maxLeaseAttempts;
    const retried: Array<{ id: string; account_id: string; priority: Priority; seq: number; scheduledFor: number }> = [];
    const { back, failed } = this.sqlite.transaction(() => {
      const rows = this.store.expired(nowIso);
      const back: typeof rows = [];
      const failed: typeof rows = [];
      for (const r of rows) {
        if (r.lease_expiries + 1 >= max) {
          // "no-report" is a transient failure: another attempt follows while the message has some left.
          const attempt = { id: r.id, accountId: r.account_id, reason: NO_REPORT_REASON, retryCount: r.retry_count, leaseToken: null, updatedAt: nextUpdatedAt(now, r.updated_at) };
          const retry = scheduleRetry(this.sqlite, attempt, now);
          if (retry.retry) {
            this.store.markLeaseExpired(r.id);
            retried.push({ ...r, scheduledFor: retry.scheduledFor });
            continue;
          }
          this.store.failNoReport(r.id, NO_REPORT_REASON, nextUpdatedAt(now, r.updated_at));
          emitMessageStatus(this.sqlite, r.account_id, r.id, "failed", now);
          failed.push(r);
        } else {
          this.store.returnExpired(r.id);
          back.push(r);
        }
      }
      return { back, failed };
    })();
    // Expired leases: the phone no longer holds them, so nobody is told of a cancellation.
    for (const r of [...failed, ...retried, ...back]) this.holders.delete(r.id);
    this.withdraw(failed.map((r) => r.id));
    for (const r of retried) {
      this.leases.delete(r.id);
      this.queue.remove(r.id);
      requeue(this.queue, [{ id: r.id, accountId: r.account_id, priority: r.priority, scheduledFor: r.scheduledFor, seq: r.seq }]);
    }
    for (const r of back) this.leases.delete(r.id);
    this.recomputeEarliest();
    for (const accountId of new Set(back.map((r) => r.account_id))) this.notify(accountId);
    for (const accountId of new Set(failed.map((r) => r.account_id))) this.changes.message(accountId, "settled", "queue");
    return { returned: back.length, failed: failed.length };
  }

  private bucket(accountId: string, now: number): TokenBucket {
    const rate = this.config.sendRatePerMinute;
    let b = this.buckets.get(accountId);
    if (!b) this.buckets.set(accountId, (b = new TokenBucket(rate, perMinute(rate), now)));
    else b.reconfigure(now, rate, perMinute(rate));
    return b;
  }

  /** Leases up to `limit` due messages of the account, in queue order. */
  next(accountId: string, opts: { limit: number; leaseSeconds: number; deviceId?: string | null; gate?: SendingGate }): NextResult {
    const now = this.clock();
    this.maybeSweep(now);
    const bucket = this.bucket(accountId, now);
    const allowed = Math.min(opts.limit, bucket.peek(now));
    if (allowed <= 0) {
      return this.queue.takeDue(accountId, now, 1, (id) => this.leases.has(id)).length > 0
        ? { messages: [], rateLimitedForMs: bucket.msUntil(now, 1) }
        : { messages: [] };
    }
    const expiresAt = now + opts.leaseSeconds * 1_000;
    const expiresIso = iso(expiresAt);
    const device = opts.deviceId ?? null;
    // A message whose recipient opted out after it was queued is cancelled here, never handed
    // out; the walk then goes on for the slots it would have taken.
    const suppressed = new Set<string>();
    const taken = new Set<string>();
    // Texts the phone's gate refused (another phone's contact, over a budget): skipped, not lost.
    const refused = new Set<string>();
    const gate = opts.gate;
    // With a gate, the walk looks further ahead than it hands out: refusals are expected.
    const want = (n: number) => (gate ? Math.max(n, 64) : n);
    const firstDue = this.queue.takeDue(accountId, now, want(allowed), (id) => this.leases.has(id));
    if (firstDue.length === 0) return { messages: [] };
    const run = this.sqlite.transaction(() => {
      const out: Array<{ row: MessageRow; token: string; sim?: number }> = [];
      let walked = 0;
      for (let round = 0; (gate ? walked < GATED_WALK_MAX : round < 5) && out.length < allowed; round++) {
        const due = round === 0 ? firstDue : this.queue.takeDue(accountId, now, want(allowed - out.length), (id) => this.leases.has(id) || suppressed.has(id) || taken.has(id) || refused.has(id));
        if (due.length === 0) break;
        let skipped = 0;
        const cancelIfOptedOut = optedOutAtLease(this.sqlite, due.map((e) => e.id));
        for (const e of due) {
          if (out.length >= allowed || (gate && walked >= GATED_WALK_MAX)) break;
          walked++;
          if (cancelIfOptedOut(e.id, iso(now))) {
            emitMessageStatus(this.sqlite, accountId, e.id, "cancelled", now);
            suppressed.add(e.id);
            skipped++;
            continue;
          }
          const admitted = gate ? gate.admit(e.id, accountId) : null;
          if (gate && !admitted) {
            refused.add(e.id);
            skipped++;
            continue;
          }
          const token = crypto.randomUUID();
          const row = this.store.lease(e.id, { token, expiresIso, deviceId: device, nowIso: iso(now) });
          if (row) {
            if (admitted) gate!.leased(row.id, admitted);
            out.push({ row, token, ...(admitted && admitted.slot > 0 ? { sim: admitted.slot } : {}) });
            taken.add(row.id);
          }
        }
        if (skipped === 0) break;
      }
      return out;
    });
    let leased: Array<{ row: MessageRow; token: string; sim?: number }>;
    try {
      leased = run();
    } catch (err) {
      // The gate counted in memory what the rolled-back rows no longer say.
      gate?.rollback();
      throw err;
    }
    if (suppressed.size > 0) {
      this.withdraw(suppressed);
      this.changes.message(accountId, "settled", "queue");
    }
    if (leased.length === 0) return { messages: [] };
    bucket.take(now, leased.length);
    const messages: LeasedMessage[] = [];
    for (const { row, token, sim } of leased) {
      this.leases.set(row.id, expiresAt);
      if (device) this.holders.set(row.id, { accountId, holder: device });
      messages.push({ ...toMessage(row), leaseToken: token, leaseExpiresAt: expiresIso, ...(sim ? { sim } : {}) });
    }
    if (expiresAt < this.earliest) this.earliest = expiresAt;
    this.changes.message(accountId, "leased", "queue");
    return { messages };
  }

  private phoneBucket(phone: PhoneAsking, now: number): TokenBucket {
    const rate = phone.sendRatePerMinute;
    let b = this.phoneBuckets.get(phone.id);
    if (!b) this.phoneBuckets.set(phone.id, (b = new TokenBucket(rate, perMinute(rate), now)));
    else b.reconfigure(now, rate, perMinute(rate));
    return b;
  }

  /** Whether the phone's own send rate lets it take one more text now (a phone never seen: yes). */
  phoneMayTake(id: string): boolean {
    const b = this.phoneBuckets.get(id);
    return !b || b.peek(this.clock()) >= 1;
  }

  /** A removed phone's send bucket goes with it. */
  forgetPhone(id: string): void {
    this.phoneBuckets.delete(id);
  }

  /**
   * Leases up to `limit` due messages to a phone (the mobile API's GET /message, a recipe's POST
   * next), capped by the phone's own send rate as well as the account's. When a cap holds
   * messages back, `nudge(ms)` says when the phone may take more (its MessageEnqueued).
   */
  leaseToPhone(phone: PhoneAsking, limit: number, leaseSeconds: number, nudge: (ms: number) => void): LeasedMessage[] {
    const now = this.clock();
    this.askedForWork(phone.accountId);
    const bucket = this.phoneBucket(phone, now);
    let allowed = Math.min(limit, bucket.peek(now));
    if (allowed <= 0) {
      nudge(bucket.msUntil(now, 1));
      return [];
    }
    const g = phone.gate?.();
    if (g && "waitMs" in g) {
      // Paused, or its spacing not yet over: asked again when it is (if work is due then).
      if (this.queue.takeDue(phone.accountId, now, 1, (id) => this.leases.has(id)).length > 0) nudge(g.waitMs);
      return [];
    }
    const gate = g as SendingGate | undefined;
    if (gate) allowed = Math.min(allowed, gate.max);
    const r = this.next(phone.accountId, { limit: allowed, leaseSeconds, deviceId: phone.holder, gate });
    if (gate) {
      for (const other of gate.preferred) gate.nudgeOther(other);
      // Spacing: the next text is handed out once it is over; a text held for a budget, once it fits.
      const wait = gate.after();
      if (wait !== undefined && r.messages.length > 0) nudge(wait);
      else if (r.messages.length === 0 && gate.retryAt !== undefined) nudge(Math.max(0, gate.retryAt - now));
    }
    bucket.take(now, r.messages.length);
    if (r.rateLimitedForMs !== undefined) nudge(r.rateLimitedForMs);
    else if (r.messages.length === allowed && allowed < limit) nudge(bucket.msUntil(now, 1));
    return r.messages;
  }

  /** GET /v1/messages/<KEY>/next?wait= for a recipe phone: its send rate first, then the long-poll. */
  async waitLeaseToPhone(phone: PhoneAsking, leaseSeconds: number, waitSeconds: number): Promise<LeasedMessage | null> {
    const started = performance.now();
    const now = this.clock();
    const bucket = this.phoneBucket(phone, now);
    if (bucket.peek(now) < 1) {
      const ms = Math.min(waitSeconds * 1_000, bucket.msUntil(now, 1));
      if (ms > 0) await Bun.sleep(ms);
      if (bucket.peek(this.clock()) < 1) return null;
    }
    const left = Math.max(0, waitSeconds - (performance.now() - started) / 1_000);
    const m = await this.waitNext(phone.accountId, { leaseSeconds, deviceId: phone.holder, gate: phone.gate }, left);
    if (m) bucket.take(this.clock(), 1);
    return m;
  }

  /**
   * Leases one message, waiting up to `waitSeconds` (wall time) for one to become available.
   * Returns null when none did.
   */
  async waitNext(accountId: string, opts: { leaseSeconds: number; deviceId?: string | null; gate?: PhoneAsking["gate"] }, waitSeconds: number): Promise<LeasedMessage | null> {
    const deadline = performance.now() + waitSeconds * 1_000;
    for (;;) {
      const g = opts.gate?.();
      const r: NextResult = g && "waitMs" in g ? { messages: [], rateLimitedForMs: g.waitMs } : this.next(accountId, { leaseSeconds: opts.leaseSeconds, deviceId: opts.deviceId, limit: 1, gate: g as SendingGate | undefined });
      if (r.messages.length > 0) return r.messages[0];
      const remaining = deadline - performance.now();
      if (remaining <= 0 || this.waiters.stopped) return null;
      const now = this.clock();
      let sleep = remaining;
      const due = this.queue.nextDueAt(accountId, now);
      if (due !== undefined) sleep = Math.min(sleep, Math.max(5, due - now));
      if (this.earliest !== Infinity) sleep = Math.min(sleep, Math.max(5, this.earliest - now));
      if (r.rateLimitedForMs !== undefined) sleep = Math.min(sleep, Math.max(5, r.rateLimitedForMs));
      await this.waiters.park(accountId, sleep);
    }
  }

  /** Waiters parked per account (tests, metrics). */
  waiting(accountId: string): number {
    return this.waiters.count(accountId);
  }
}
