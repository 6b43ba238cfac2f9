/**
 * Broadcasts: one text to every contact of a segment.
 *
 * POST answers 202 once the broadcast row is committed; its messages are created afterwards in
 * chunks (one transaction each, the event loop free between them), so 50,000 recipients neither
 * hold the request nor stall the webhook path. The broadcast row's cursor advances in the same
 * transaction as each chunk's messages: a restart carries on after the last committed chunk.
 */
import type { Changes } from "../lib/changes";
import type { Database } from "bun:sqlite";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import type { Logger } from "../lib/log";
import type { Priority } from "../queue/priority-queue";
import type { Sequence } from "../lib/seq";
import type { LeaseService } from "./leases";
import type { MonthlyQuota } from "./quota";
import type { AccountService } from "./accounts";
import { WriterClosedError, type GroupCommitWriter } from "../db/group-commit";
import { DRY_RUN_SAMPLES, parseBroadcastRequest, planSending, recipientDueAt, renderBroadcast } from "../domain/broadcast";
import { templateVariables } from "../domain/template";
import { parseFilter, type ContactFilter } from "../domain/contact-query";
import { parsePaging } from "../domain/query-params";
import { smsInfo } from "../domain/sms-encoding";
import type { MessageStatus } from "../domain/message-transitions";
import type { FieldError } from "../domain/submission";
import { emitMessageStatus } from "./event-payloads";
import { admit, templateMessageOf, type Sending } from "./sending";
import { resolveProtection } from "../domain/protection";
import { resolveFormSettings } from "../domain/form-definition";
import type { QuietHours } from "../domain/quiet-hours";
import {
  advanceBroadcast,
  broadcastMessageCounts,
  cancelBroadcastMessages,
  countSegment,
  findBroadcast,
  insertBroadcast,
  listBroadcasts,
  newestContactId,
  segmentChunk,
  setBroadcastStatus,
  unfinishedBroadcasts,
  type BroadcastRecord,
  type Exclusion,
} from "../db/stores/broadcasts";
import { findBusinessProfile } from "../db/stores/accounts";
import { findFormSettings } from "../db/stores/forms";

/**
 * Recipients per write job while queuing. Each chunk is one job of the group-commit writer, so it
 * shares the webhook's transaction and fsync; a webhook request batched with it waits for ~100
 * message inserts (a few ms) at most.
 */
export const BROADCAST_CHUNK = 100;
/** Messages cancelled per transaction by POST /broadcasts/:id/cancel. */
export const CANCEL_CHUNK = 2_000;
/** Contacts read per query while a dry run counts each recipient's texts. */
const SEGMENT_WALK_CHUNK = 1_000;

export interface Broadcast {
  id: string;
  name: string;
  content: string;
  segment: Record<string, unknown>;
  priority: Priority;
  scheduledFor: string;
  sendRatePerMinute: number | null;
  maxAttempts: number | null;
  quietHours: QuietHours | null;
  timezone: string;
  recipientLimitPerDay: number | null;
  /** scheduled (starts later) or queuing (creating messages) → queued → completed (none left queued), or cancelled. */
  status: "scheduled" | "queuing" | "queued" | "completed" | "cancelled";
  recipients: number;
  suppressed: number;
  /** Recipients passed over while queuing (the monthly quota ran out). */
  skipped: number;
  messages: Record<MessageStatus, number> & { total: number };
  createdAt: string;
  updatedAt: string;
}

const DAY_MS = 86_400_000;
const tick = () => new Promise<void>((r) => setImmediate(r));

/** The account's phones as a broadcast's confirmation counts them. */
export interface BroadcastPhones {
  phonesConnected: number;
  ratePerMinute: number;
  phones?: number;
  basis?: "connected-phones" | "no-phone-connected";
  durationMs?: (n: number) => number;
}

export class BroadcastService {
  /** Broadcasts whose queuing loop is running in this process. */
  private readonly running = new Set<string>();
  private stopped = false;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly sending: Sending,
    private readonly seq: Sequence,
    private readonly leases: LeaseService,
    private readonly quota: MonthlyQuota,
    private readonly accounts: AccountService,
    private readonly writer: GroupCommitWriter,
    private readonly logger: Logger,
    private readonly changes: Changes,
    /** What the account's connected phones can send a minute (services/sending-estimate.ts). */
    private readonly phones: (accountId: string) => BroadcastPhones = () => ({ phonesConnected: 0, ratePerMinute: 0 }),
  ) {
  }

  view(b: BroadcastRecord): Broadcast {
    const counts = broadcastMessageCounts(this.sqlite, b.id);
    const total = counts.queued + counts.sent + counts.failed + counts.cancelled;
    // Derived: not yet started, with texts waiting for their time, is "scheduled" (Cancel stops
    // all of them); nothing left queued is "completed".
    const startsLater = (b.status === "queuing" || (b.status === "queued" && counts.queued > 0)) && Date.parse(b.scheduledFor) > this.clock();
    const status = startsLater ? "scheduled" : b.status === "queued" && counts.queued === 0 ? "completed" : b.status;
    return {
      id: b.id,
      name: b.name,
      content: b.content,
      segment: b.segment,
      priority: b.priority as Priority,
      scheduledFor: b.scheduledFor,
      sendRatePerMinute: b.sendRatePerMinute,
      maxAttempts: b.maxAttempts,
      quietHours: b.quietHours,
      timezone: b.timezone,
      recipientLimitPerDay: b.recipientLimitPerDay,
      status,
      recipients: b.recipients,
      suppressed: b.suppressed,
      skipped: b.skipped,
      messages: { ...counts, total },
      createdAt: b.createdAt,
      updatedAt: b.updatedAt,
    };
  }

  get(accountId: string, id: string): Broadcast {
    const b = UUID_RE.test(id) ? findBroadcast(this.sqlite, accountId, id) : null;
    if (!b) throw new AppError("BROADCAST_NOT_FOUND", { details: { broadcastId: id } });
    return this.view(b);
  }

  list(accountId: string, raw: Record<string, unknown>) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    if (errors.length) throw validationError(errors);
    const { rows, total } = listBroadcasts(this.sqlite, accountId, page, limit);
    return { broadcasts: rows.map((b) => this.view(b)), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /**
   * Validates and counts; a dry run stops there with rendered samples. Otherwise the broadcast
   * is committed and its messages are queued in the background.
   */
  async create(accountId: string, body: unknown, opts: { dryRun: boolean }) {
    const parsed = parseBroadcastRequest(body);
    if (!parsed.ok) throw validationError(parsed.errors);
    const req = parsed.value;
    let formSettings: Record<string, unknown> = {};
    if (req.filter.formId) {
      const settings = findFormSettings(this.sqlite, accountId, req.filter.formId);
      if (settings === null) throw new AppError("FORM_NOT_FOUND", { details: { formId: req.filter.formId } });
      formSettings = settings;
    }
    // A broadcast to one form's contacts keeps that form's quiet hours, time zone and
    // per-recipient limit unless the request says otherwise.
    const fromForm = resolveProtection(formSettings);
    const quietHours = req.quietHours === undefined ? fromForm.quietHours : req.quietHours;
    const timezone = req.timezone ?? resolveFormSettings(formSettings).timezone;
    const recipientLimitPerDay = req.recipientLimitPerDay === undefined ? fromForm.recipientLimitPerDay : req.recipientLimitPerDay;
    const now = this.clock();
    const exclusion = { recipientLimitPerDay, since: iso(now - DAY_MS) };
    const lastContactId = newestContactId(this.sqlite, accountId) ?? "";
    const counted = countSegment(this.sqlite, accountId, req.filter, lastContactId, exclusion);
    const { recipients, suppressed } = counted;
    if (opts.dryRun) {
      const samples = segmentChunk(this.sqlite, { accountId, filter: req.filter, lastContactId, cursor: "", limit: 50 }, exclusion)
        .filter((c) => !c.excluded)
        .slice(0, DRY_RUN_SAMPLES)
        .map((c) => {
          const text = renderBroadcast(req.content, c).content;
          const info = smsInfo(text);
          return { contactId: c.id, phoneNumber: c.phoneNumber, content: text, characters: [...text].length, encoding: info.encoding, segments: info.segments };
        });
      // The confirmation's figures: the rules that queuing applies, read now (docs/api-decisions.md,
      // "Confirmed broadcasts").
      const quotaLeft = this.quota.remaining(accountId, this.accounts.findAccount(accountId)?.monthlyQuota ?? null);
      const sending = quotaLeft === null ? recipients : Math.min(recipients, quotaLeft);
      const capacity = this.phones(accountId);
      const start = Math.max(req.scheduledFor ?? now, now);
      const plan = planSending({ count: sending, start, pacePerMinute: req.sendRatePerMinute, quiet: { hours: quietHours, timezone }, phoneRatePerMinute: Math.max(capacity.ratePerMinute, capacity.durationMs ? 1 : 0) });
      // Unpaced, the phones' real capacity says when the last goes (services/sending-estimate.ts),
      // with the texts already waiting ahead of them counted; as if connected when none is.
      if (!req.sendRatePerMinute && capacity.durationMs && sending > 0) plan.finishesAt = plan.firstDueAt + capacity.durationMs(sending);
      return {
        dryRun: true as const,
        recipients,
        suppressed,
        samples,
        sending,
        skipped: { optedOut: counted.optedOut, recipientLimit: counted.overLimit, monthlyQuota: recipients - sending },
        segments: await this.segmentsOf(accountId, req.content, req.filter, lastContactId, exclusion, sending),
        quietHours: { hours: quietHours, timezone, delayed: plan.delayedByQuietHours },
        estimate: {
          phonesConnected: capacity.phonesConnected,
          phones: capacity.phones ?? capacity.phonesConnected,
          basis: capacity.basis ?? (capacity.phonesConnected ? "connected-phones" : "no-phone-connected"),
          ratePerMinute: capacity.ratePerMinute,
          startsAt: iso(plan.firstDueAt),
          finishesAt: plan.finishesAt === null ? null : iso(plan.finishesAt),
          minutes: plan.finishesAt === null ? null : Math.ceil((plan.finishesAt - plan.firstDueAt) / 60_000),
        },
        scheduledFor: req.scheduledFor !== null && req.scheduledFor > now ? iso(req.scheduledFor) : null,
        accountTimeZone: findBusinessProfile(this.sqlite, accountId)?.timeZone ?? "UTC",
      };
    }
    const record: BroadcastRecord = {
      id: newId(),
      accountId,
      name: req.name,
      content: req.content,
      segment: req.segmentInput,
      priority: req.priority,
      scheduledFor: iso(req.scheduledFor ?? now),
      sendRatePerMinute: req.sendRatePerMinute,
      maxAttempts: req.maxAttempts,
      quietHours,
      timezone,
      recipientLimitPerDay,
      status: recipients > 0 ? "queuing" : "queued",
      recipients,
      suppressed,
      queuedCount: 0,
      skipped: 0,
      cursor: "",
      lastContactId,
      createdAt: iso(now),
      updatedAt: iso(now),
    };
    insertBroadcast(this.sqlite, record);
    if (recipients > 0) this.start(record.id, accountId);
    return { dryRun: false as const, broadcast: this.view(record) };
  }

  /**
   * Texts (SMS segments) per message and in all, over the `sending` recipients queuing will take
   * (the first ones in id order, as the quota runs out on the last). Content without contact
   * variables is the same text for everyone; otherwise each recipient's text is rendered, a
   * chunk at a time, as queuing will render it, the event loop free between chunks (100,000
   * recipients take ~0.2 s in all; one block of that would hold the webhook path).
   */
  private async segmentsOf(accountId: string, content: string, filter: ContactFilter, lastContactId: string, exclusion: Exclusion, sending: number) {
    if (sending === 0) return { min: 0, max: 0, total: 0 };
    if (templateVariables(content).length === 0) {
      const n = smsInfo(content).segments;
      return { min: n, max: n, total: n * sending };
    }
    let min = Infinity;
    let max = 0;
    let total = 0;
    let seen = 0;
    let cursor = "";
    while (seen < sending) {
      const rows = segmentChunk(this.sqlite, { accountId, filter, lastContactId, cursor, limit: SEGMENT_WALK_CHUNK }, exclusion);
      for (const c of rows) {
        if (c.excluded || seen >= sending) continue;
        const n = smsInfo(renderBroadcast(content, c).content).segments;
        seen++;
        total += n;
        if (n < min) min = n;
        if (n > max) max = n;
      }
      if (rows.length < SEGMENT_WALK_CHUNK) break;
      cursor = rows.at(-1)!.id;
      await tick();
    }
    return seen === 0 ? { min: 0, max: 0, total: 0 } : { min, max, total };
  }

  /** Stops what is still queued; idempotent. */
  async cancel(accountId: string, id: string): Promise<{ broadcast: Broadcast; cancelled: number }> {
    const b = UUID_RE.test(id) ? findBroadcast(this.sqlite, accountId, id) : null;
    if (!b) throw new AppError("BROADCAST_NOT_FOUND", { details: { broadcastId: id } });
    if (b.status !== "cancelled") setBroadcastStatus(this.sqlite, id, "cancelled", iso(this.clock()));
    const cancelled = await this.cancelQueued(id, accountId);
    return { broadcast: this.get(accountId, id), cancelled };
  }

  private async cancelQueued(id: string, accountId: string): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = this.sqlite.transaction(() => {
        const now = this.clock();
        const cancelled = cancelBroadcastMessages(this.sqlite, id, iso(now), CANCEL_CHUNK);
        for (const m of cancelled) emitMessageStatus(this.sqlite, accountId, m, "cancelled", now);
        return cancelled;
      })();
      this.leases.withdraw(ids);
      if (ids.length > 0) this.changes.message(accountId, "settled", "api");
      total += ids.length;
      if (ids.length < CANCEL_CHUNK) return total;
      await tick();
    }
  }

  /** Boot: carry on with broadcasts a stop interrupted. Call after the queue is rebuilt. */
  resume(): void {
    for (const b of unfinishedBroadcasts(this.sqlite)) {
      if (b.status === "queuing") this.start(b.id, b.accountId);
      else void this.cancelQueued(b.id, b.accountId);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** Resolves when no queuing loop is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Bun.sleep(5);
  }

  private start(id: string, accountId: string): void {
    if (this.running.has(id)) return;
    this.running.add(id);
    void (async () => {
      try {
        while (!this.stopped && (await this.step(id, accountId))) await tick();
      } catch (err) {
        // The cursor is where the last committed chunk left it: the next start carries on.
        if (!(err instanceof WriterClosedError)) this.logger.error("broadcast queuing stopped", { broadcastId: id, error: String(err) });
      } finally {
        this.running.delete(id);
      }
    })();
  }

  /** Queues one chunk (a job of the group-commit writer); resolves after its commit with whether there is more to do. */
  private async step(id: string, accountId: string): Promise<boolean> {
    const quota = this.accounts.findAccount(accountId)?.monthlyQuota ?? null;
    const now = this.clock();
    const created: Array<{ id: string; priority: Priority; scheduledFor: number; seq: number }> = [];
    let reserved = 0;
    let more = false;
    try {
      more = await this.writer.submit({ run: () => {
        const b = findBroadcast(this.sqlite, accountId, id);
        if (!b || b.status !== "queuing") return false;
        const filter = this.filterOf(b);
        const rows = segmentChunk(this.sqlite, { accountId, filter, lastContactId: b.lastContactId, cursor: b.cursor, limit: BROADCAST_CHUNK }, {
          recipientLimitPerDay: b.recipientLimitPerDay,
          since: iso(now - DAY_MS),
        });
        const quiet = { hours: b.quietHours, timezone: b.timezone };
        const start = Math.max(Date.parse(b.scheduledFor), 0);
        let skipped = 0;
        const createdAt = iso(now);
        for (const c of rows) {
          // Opted out or over the per-recipient limit: the segment's SQL applied the same rules
          // (OPTED_OUT_SQL, the contacts store's form of opt-outs.ts's mayText).
          if (c.excluded) {
            skipped++;
            continue;
          }
          const admitted = admit({ quota: { quota: this.quota, accountId, limit: quota } });
          if (!admitted.ok) {
            skipped++;
            continue;
          }
          if (admitted.reserved) reserved++;
          const rendered = renderBroadcast(b.content, c);
          const due = recipientDueAt(start, b.queuedCount + created.length, b.sendRatePerMinute, quiet);
          const m = {
            id: newId(),
            priority: b.priority as Priority,
            scheduledFor: due,
            seq: this.seq.next(),
          };
          this.sending.writeTemplate(
            templateMessageOf(m, {
              accountId,
              contact: c,
              rendered,
              template: b.content,
              origin: { source: "broadcast", broadcastId: b.id },
              maxAttempts: b.maxAttempts,
              broadcastId: b.id,
              createdAt,
            }),
            now,
          );
          created.push(m);
        }
        const done = rows.length < BROADCAST_CHUNK;
        advanceBroadcast(this.sqlite, id, { cursor: rows.at(-1)?.id ?? b.cursor, queued: created.length, skipped, done, updatedAt: createdAt });
        return !done;
      } });
    } catch (err) {
      for (let i = 0; i < reserved; i++) this.quota.settle(accountId, false);
      throw err;
    }
    for (let i = 0; i < reserved; i++) this.quota.settle(accountId, true);
    this.sending.queued(created.map((m) => ({ id: m.id, accountId, priority: m.priority, scheduledFor: m.scheduledFor, seq: m.seq })));
    return more;
  }

  private filterOf(b: BroadcastRecord): ContactFilter {
    const seg = b.segment;
    const raw: Record<string, unknown> = { ...seg };
    if (Array.isArray(seg.tags)) raw.tags = (seg.tags as string[]).join(",");
    return parseFilter(raw, []);
  }
}
