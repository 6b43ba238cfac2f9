/**
 * Messages sent through SMSGate's third-party API (POST /3rdparty/v1/messages): one Textwire
 * message per phone number, grouped under the client's id, with every Textwire rule applied per
 * recipient — opt-outs and the per-recipient limit make that recipient `Failed` (nothing queued
 * for it), quiet hours move its `scheduledFor` — and the state SMSGate's clients read back
 * (docs/api-decisions.md, "SMSGate third-party API").
 *
 * `ttl` / `validUntil`: what no phone has taken by then fails with `expired` (the expiry timer
 * below: one timer at the earliest pending deadline, rebuilt from SQLite at start).
 */
import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { AppError, validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { newId } from "../lib/ids";
import type { Logger } from "../lib/log";
import type { Lifecycle } from "../lib/lifecycle";
import type { Changes } from "../lib/changes";
import type { Sequence } from "../lib/seq";
import type { Actor } from "../domain/people";
import { normalizePhone } from "../domain/phone";
import { smsInfo } from "../domain/sms-encoding";
import { isValidQuietHours, type QuietHours } from "../domain/quiet-hours";
import { MAX_RECIPIENT_LIMIT_PER_DAY } from "../domain/protection";
import type { FieldError } from "../domain/submission";
import { SIGNING_KEY_MAX, SIGNING_KEY_MIN } from "../domain/smsgate-settings";
import { groupState, parseSendRequest, priorityOf, recipientState, smsgateListRange, SMSGATE_STATES, type SmsgateState } from "../domain/smsgate-message";
import { OPTED_OUT_REASON } from "../db/stores/messages/suppression";
import type { MessageStore } from "../db/stores/messages";
import { findBusinessProfile } from "../db/stores/accounts";
import { listDevices } from "../db/stores/devices";
import {
  dueSmsgateExpiry,
  ensureSmsgateClient,
  findSmsgateClient,
  findSmsgateMessage,
  insertSmsgateMessage,
  insertSmsgateRecipient,
  listSmsgateMessages,
  markSmsgateExpiryJudged,
  markSmsgateProcessed,
  nextSmsgateExpiry,
  smsgateNotHandedOut,
  smsgateOptionsOf,
  listSmsgateRecipients,
  updateSmsgateRules,
  updateSmsgateSigningKey,
  type SmsgateMessageRow,
} from "../db/stores/smsgate";
import { textsToSince } from "../db/stores/messages/recipient-limits";
import { quotaExceeded, type MonthlyQuota } from "./quota";
import type { MessageService } from "./messages";
import { MANUAL_CONTENT_MAX } from "./manual-messages";
import { admit, newQueuedRow, queueEntryOf, sendTime, type Sending } from "./sending";
import { fullName } from "../domain/contact-name";
import { factsOf, statesOf } from "./thirdparty-states";

/** GET /messages?state=: messages judged per page of the scan. */
const STATE_SCAN_PAGE = 500;

/** Why a recipient got no message (its `error` in the state). */
export const RECIPIENT_LIMIT_REASON = "recipient-limit";
/** What a text no phone took before its ttl / validUntil fails with. */
export const EXPIRED_REASON = "expired";
/** Groups judged per expiry pass (the rest in the next, at once). */
const EXPIRY_BATCH = 200;
/** Longest single wait of the expiry timer (setTimeout's bound is ~24.8 days). */
const EXPIRY_TIMER_MAX_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** SMSGate's list: limit 1..100, default 50. */
export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 50;

export interface SmsgateRecipientState {
  phoneNumber: string;
  state: SmsgateState;
  error?: string;
}

/** SMSGate's GetMessageResponse. */
export interface SmsgateMessageState {
  id: string;
  deviceId: string;
  state: SmsgateState;
  isHashed: false;
  isEncrypted: false;
  recipients: SmsgateRecipientState[];
  states: Partial<Record<SmsgateState, string>>;
  textMessage?: { text: string };
}

/** The account's rules for texts from SMSGate clients (no form carries them). */
export interface SmsgateClientRules {
  quietHours: QuietHours | null;
  recipientLimitPerDay: number | null;
}

export class ThirdPartyMessages {
  private expiryTimer: ReturnType<typeof setTimeout> | undefined;
  private expiryAt = Infinity;
  private stopped = true;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly sending: Sending,
    private readonly seq: Sequence,
    private readonly messages: MessageService,
    private readonly quota: MonthlyQuota,
    private readonly changes: Changes,
    private readonly logger: Logger,
    private readonly messageStore: MessageStore,
  ) {
  }

  // ------------------------------------------------------------ the account's SMSGate settings

  /** The key that signs SMSGate-format webhooks; made on first use. */
  signingKey(accountId: string): string {
    return (findSmsgateClient(this.sqlite, accountId) ?? ensureSmsgateClient(this.sqlite, accountId, newSigningKey(), iso(this.clock()))).signing_key;
  }

  /**
   * Sets the signing key, as an SMSGate client does through its settings (`webhooks.signingKey`,
   * services/smsgate-settings.ts): every SMSGate-format webhook is signed with it from the next
   * delivery on (the delivery reads the account's key when it signs).
   */
  setSigningKey(accountId: string, key: unknown): string {
    if (typeof key !== "string" || key.trim().length < SIGNING_KEY_MIN || key.length > SIGNING_KEY_MAX) {
      throw validationError([{ field: "webhooks.signingKey", message: `webhooks.signingKey must be ${SIGNING_KEY_MIN} to ${SIGNING_KEY_MAX} characters`, requirement: `${SIGNING_KEY_MIN}-${SIGNING_KEY_MAX} characters`, provided: typeof key === "string" ? `${key.length} characters` : key }]);
    }
    this.sqlite.transaction(() => {
      this.signingKey(accountId);
      updateSmsgateSigningKey(this.sqlite, accountId, key, iso(this.clock()));
    })();
    return key;
  }

  rules(accountId: string): SmsgateClientRules {
    const row = findSmsgateClient(this.sqlite, accountId);
    return { quietHours: row?.quiet_hours ?? null, recipientLimitPerDay: row?.recipient_limit_per_day ?? null };
  }

  /** Sets the rules; a key left out keeps its value, null turns the rule off. */
  setRules(accountId: string, body: Record<string, unknown>): SmsgateClientRules {
    const errors: FieldError[] = [];
    const current = this.rules(accountId);
    const next = { ...current };
    if (body.quietHours !== undefined) {
      if (body.quietHours !== null && !isValidQuietHours(body.quietHours)) {
        errors.push({ field: "quietHours", message: 'quietHours must be {"start": "HH:MM", "end": "HH:MM"} (24-hour clock, different times) or null', requirement: "{start, end} or null", provided: body.quietHours });
      } else next.quietHours = body.quietHours as QuietHours | null;
    }
    if (body.recipientLimitPerDay !== undefined) {
      const v = body.recipientLimitPerDay;
      if (v !== null && (!Number.isInteger(v) || (v as number) < 1 || (v as number) > MAX_RECIPIENT_LIMIT_PER_DAY)) {
        errors.push({ field: "recipientLimitPerDay", message: `recipientLimitPerDay must be a whole number from 1 to ${MAX_RECIPIENT_LIMIT_PER_DAY}, or null`, requirement: `integer 1-${MAX_RECIPIENT_LIMIT_PER_DAY} or null`, provided: v });
      } else next.recipientLimitPerDay = v as number | null;
    }
    if (errors.length) throw validationError(errors);
    this.sqlite.transaction(() => {
      this.signingKey(accountId);
      updateSmsgateRules(this.sqlite, accountId, { quietHours: next.quietHours, recipientLimitPerDay: next.recipientLimitPerDay, updatedAt: iso(this.clock()) });
    })();
    return next;
  }

  // ------------------------------------------------------------ send

  /**
   * POST /message[s]: the whole request is checked first (a 400 queues nothing); then, in one
   * transaction, the group and one message per number that passes the rules.
   */
  send(
    accountId: string,
    body: unknown,
    opts: { skipPhoneValidation: boolean; monthlyQuota: number | null; actor?: Actor; ipAddress?: string; userAgent?: string | null },
  ): SmsgateMessageState {
    const now = this.clock();
    const parsed = parseSendRequest(body, now, MANUAL_CONTENT_MAX);
    if (!parsed.ok) throw validationError(parsed.errors);
    const req = parsed.value;
    // Textwire's normalisation for every number; skipPhoneValidation accepts types it would refuse.
    const errors: FieldError[] = [];
    const numbers: string[] = [];
    req.phoneNumbers.forEach((raw, i) => {
      const p = normalizePhone(raw, { label: `phoneNumbers[${i}]`, anyType: opts.skipPhoneValidation });
      if (!p.ok) errors.push({ field: `phoneNumbers[${i}]`, message: p.message, requirement: p.requirement, provided: raw });
      else if (!numbers.includes(p.e164)) numbers.push(p.e164); // a number given twice is texted once
    });
    if (req.deviceId !== null && !listDevices(this.sqlite, accountId).some((d) => d.id === req.deviceId)) {
      errors.push({ field: "deviceId", message: "deviceId names none of your phones (see GET /3rdparty/v1/devices)", requirement: "a device id of this account", provided: req.deviceId });
    }
    if (errors.length) throw validationError(errors);
    const id = req.id ?? newId();
    if (findSmsgateMessage(this.sqlite, accountId, id)) throw duplicateId(id);

    const rules = this.rules(accountId);
    const tz = findBusinessProfile(this.sqlite, accountId)?.timeZone ?? "UTC";
    const priority = priorityOf(req.priority);
    const sendAt = sendTime({ at: Math.max(now, req.scheduleAt ?? now), timezone: tz, hours: rules.quietHours });
    const info = smsInfo(req.text);
    const createdAt = iso(now);
    const rows: ReturnType<typeof newQueuedRow>[] = [];
    const recipients: Array<{ phone: string; messageId: string | null; error: string | null }> = [];
    for (const phone of numbers) {
      const contact = this.messageStore.recipientByPhone(accountId, phone);
      const admitted = admit({
        recipient: contact && { optedOut: contact.optedOut },
        recipientLimit: { perDay: rules.recipientLimitPerDay, sentInDay: () => textsToSince(this.sqlite, accountId, phone, iso(now - DAY_MS)) },
      });
      if (!admitted.ok) {
        recipients.push({ phone, messageId: null, error: admitted.reason === "opted-out" ? OPTED_OUT_REASON : RECIPIENT_LIMIT_REASON });
        continue;
      }
      const row = newQueuedRow({
        account_id: accountId,
        contact_id: contact?.id ?? null,
        content: req.text,
        recipient_phone: phone,
        recipient_name: contact ? fullName(contact.firstName, contact.lastName) || null : null,
        priority,
        scheduled_for: iso(sendAt),
        metadata: JSON.stringify({
          messageLength: req.text.length,
          variablesUsed: [],
          source: "smsgate",
          smsgateId: id,
          ipAddress: opts.ipAddress ?? null,
          userAgent: opts.userAgent ?? null,
          encoding: info.encoding,
          segments: info.segments,
        }),
        seq: this.seq.next(),
        created_by: opts.actor ? JSON.stringify(opts.actor) : null,
        created_at: createdAt,
      });
      rows.push(row);
      recipients.push({ phone, messageId: row.id, error: null });
    }
    // Each queued text takes one unit of the monthly quota; a request that does not fit queues nothing.
    let reserved = 0;
    const limited = opts.monthlyQuota !== null;
    const settle = (created: boolean) => {
      for (let i = 0; i < reserved; i++) this.quota.settle(accountId, created);
    };
    if (limited) {
      for (let i = 0; i < rows.length; i++) {
        const admitted = admit({ quota: { quota: this.quota, accountId, limit: opts.monthlyQuota } });
        if (!admitted.ok) {
          settle(false);
          throw quotaExceeded(admitted.quota!, now);
        }
        reserved++;
      }
    }
    const group: SmsgateMessageRow = {
      account_id: accountId,
      id,
      device_id: req.deviceId,
      sim_number: req.simNumber,
      with_delivery_report: req.withDeliveryReport,
      valid_until: req.validUntil === null ? null : iso(req.validUntil),
      expiry_pending: req.validUntil !== null && rows.length > 0,
      created_at: createdAt,
    };
    try {
      this.sqlite.transaction(() => {
        if (findSmsgateMessage(this.sqlite, accountId, id)) throw duplicateId(id);
        insertSmsgateMessage(this.sqlite, group);
        for (const row of rows) this.sending.write(row, now);
        recipients.forEach((r, position) =>
          insertSmsgateRecipient(this.sqlite, { account_id: accountId, smsgate_id: id, position, phone_number: r.phone, message_id: r.messageId, error: r.error }),
        );
      })();
    } catch (err) {
      settle(false);
      if (String((err as { code?: unknown })?.code ?? "").startsWith("SQLITE_CONSTRAINT_PRIMARYKEY")) throw duplicateId(id);
      throw err;
    }
    settle(true);
    this.sending.queued(rows.map(queueEntryOf), "api");
    if (group.expiry_pending) this.scheduleExpiry(req.validUntil!);
    return this.state(accountId, id);
  }

  // ------------------------------------------------------------ state, list, cancel

  /** GET /message[s]/{id}: another account's id is answered like one that does not exist. */
  state(accountId: string, id: string, includeContent = false): SmsgateMessageState {
    const g = findSmsgateMessage(this.sqlite, accountId, id);
    if (!g) throw new AppError("MESSAGE_NOT_FOUND", { message: `No message with id ${id.slice(0, 40)}`, details: { messageId: id.slice(0, 40) } });
    return this.view(g, includeContent);
  }

  private view(g: SmsgateMessageRow, includeContent: boolean): SmsgateMessageState {
    const rs = listSmsgateRecipients(this.sqlite, g.account_id, g.id);
    const recipients = rs.map((r) => {
      const s = recipientState(factsOf(r));
      return s.error !== null ? { phoneNumber: r.phone_number, state: s.state, error: s.error } : { phoneNumber: r.phone_number, state: s.state };
    });
    const state = groupState(recipients.map((r) => r.state));
    const out: SmsgateMessageState = {
      id: g.id,
      deviceId: g.device_id ?? rs.find((r) => r.last_holder !== null)?.last_holder ?? "",
      state,
      isHashed: false,
      isEncrypted: false,
      recipients,
      states: statesOf(g, rs, recipients, state),
    };
    if (includeContent) {
      const text = rs.find((r) => r.content !== null)?.content;
      if (text != null) out.textMessage = { text };
    }
    return out;
  }

  /** GET /messages: newest first unless sort=created_at; `total` for X-Total-Count. */
  list(accountId: string, q: Record<string, string | undefined>): { items: SmsgateMessageState[]; total: number } {
    const errors: FieldError[] = [];
    const { limit, offset, from, to } = smsgateListRange(q, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT, errors);
    const sort = q.sort ?? "-created_at";
    if (sort !== "created_at" && sort !== "-created_at") errors.push({ field: "sort", message: "sort must be created_at or -created_at", requirement: "created_at | -created_at", provided: sort.slice(0, 40) });
    // SMSGate's filter values; Cancelling (a cancel the phone has not confirmed) never happens here.
    const states = [...SMSGATE_STATES, "Cancelling"] as readonly string[];
    if (q.state !== undefined && !states.includes(q.state)) {
      errors.push({ field: "state", message: `state must be one of ${states.join(", ")}`, requirement: states.join(" | "), provided: q.state.slice(0, 40) });
    }
    if (q.deviceId !== undefined && (q.deviceId.length === 0 || q.deviceId.length > 200)) {
      errors.push({ field: "deviceId", message: "deviceId must be the id of one of your phones (GET /3rdparty/v1/devices lists them)", requirement: "a phone's id", provided: `${q.deviceId.length} characters` });
    }
    const includeContent = q.includeContent === "true";
    if (q.includeContent !== undefined && q.includeContent !== "true" && q.includeContent !== "false") {
      errors.push({ field: "includeContent", message: "includeContent must be true or false", requirement: "true | false", provided: q.includeContent.slice(0, 40) });
    }
    if (errors.length) throw validationError(errors);
    const filter = { from, to, deviceId: q.deviceId };
    if (q.state === undefined) {
      const { rows, total } = listSmsgateMessages(this.sqlite, accountId, { ...filter, newestFirst: sort === "-created_at", limit, offset });
      return { items: rows.map((g) => this.view(g, includeContent)), total };
    }
    // A state is read from each recipient's Textwire message (recipientState), not stored: the
    // account's messages in the range are read in pages and judged one by one.
    const matching: SmsgateMessageState[] = [];
    let total = 0;
    for (let page = 0; ; page += STATE_SCAN_PAGE) {
      const { rows } = listSmsgateMessages(this.sqlite, accountId, { ...filter, newestFirst: sort === "-created_at", limit: STATE_SCAN_PAGE, offset: page, counted: false });
      for (const g of rows) {
        const v = this.view(g, includeContent);
        if (v.state !== q.state) continue;
        if (total >= offset && matching.length < limit) matching.push(v);
        total++;
      }
      if (rows.length < STATE_SCAN_PAGE) break;
    }
    return { items: matching, total };
  }

  /**
   * DELETE /messages/{id}: cancels the texts no phone has taken yet. 409 when none is left to
   * cancel (all handed out or finished), as SMSGate answers a message that is not pending.
   */
  cancel(accountId: string, id: string, actor?: Actor): SmsgateMessageState {
    this.state(accountId, id);
    const ids = smsgateNotHandedOut(this.sqlite, accountId, id);
    if (ids.length === 0) {
      throw new AppError("INVALID_STATE", {
        message: "Nothing left to cancel: every text of this message was already handed to a phone or has finished",
        details: { messageId: id },
      });
    }
    for (const m of ids) this.messages.updateStatus(accountId, m, { status: "cancelled" }, { actor, quiet: true });
    this.changes.message(accountId, "settled", "api");
    return this.state(accountId, id);
  }

  // ------------------------------------------------------------ the phone's side

  /**
   * What a phone is handed with a text sent through SMSGate's API (its SIM and delivery-report
   * choice), marking it Processed's time; null for any other text.
   */
  /** The phone and SIM the client's request named for a text (they win over every other choice); null for any other text. */
  requested(messageId: string): { deviceId: string | null; simNumber: number | null } | null {
    const o = smsgateOptionsOf(this.sqlite, messageId);
    return o ? { deviceId: o.deviceId, simNumber: o.simNumber } : null;
  }

  handedOut(messageId: string, now: number): { simNumber: number | null; withDeliveryReport: boolean } | null {
    const o = smsgateOptionsOf(this.sqlite, messageId);
    if (!o) return null;
    markSmsgateProcessed(this.sqlite, messageId, iso(now));
    return { simNumber: o.simNumber, withDeliveryReport: o.withDeliveryReport };
  }

  // ------------------------------------------------------------ expiry

  private scheduleExpiry(at: number): void {
    if (this.stopped || at >= this.expiryAt) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = at;
    this.expiryTimer = setTimeout(() => this.expireDue(), Math.min(EXPIRY_TIMER_MAX_MS, Math.max(0, at - this.clock())));
    this.expiryTimer.unref?.();
  }

  /** Fails, with `expired`, the texts of every due group that no phone has taken; then waits for the next deadline. */
  expireDue(): number {
    this.expiryTimer = undefined;
    this.expiryAt = Infinity;
    let failed = 0;
    try {
      const due = dueSmsgateExpiry(this.sqlite, iso(this.clock()), EXPIRY_BATCH);
      const accounts = new Set<string>();
      for (const g of due) {
        for (const m of smsgateNotHandedOut(this.sqlite, g.accountId, g.id)) {
          this.messages.updateStatus(g.accountId, m, { status: "failed", failureReason: EXPIRED_REASON }, { quiet: true });
          failed++;
        }
        markSmsgateExpiryJudged(this.sqlite, g.accountId, g.id);
        accounts.add(g.accountId);
      }
      for (const a of accounts) this.changes.message(a, "settled", "queue");
      if (due.length === EXPIRY_BATCH) {
        this.scheduleExpiry(this.clock());
        return failed;
      }
    } catch (err) {
      // The database may be busy (a restore, a long CLI write): tried again shortly.
      this.logger.error("SMSGate expiry pass failed; retrying", { error: String(err) });
      this.scheduleExpiry(this.clock() + 5_000);
      return failed;
    }
    const next = nextSmsgateExpiry(this.sqlite);
    if (next !== null) this.scheduleExpiry(Date.parse(next));
    return failed;
  }

  lifecycle(): Lifecycle {
    return {
      name: "smsgate-expiry",
      start: () => {
        this.stopped = false;
        this.expireDue();
      },
      stop: () => {
        this.stopped = true;
        if (this.expiryTimer) clearTimeout(this.expiryTimer);
        this.expiryTimer = undefined;
        this.expiryAt = Infinity;
      },
    };
  }
}

function duplicateId(id: string): AppError {
  return new AppError("INVALID_STATE", {
    message: `A message with the id ${id} already exists: give each message its own id, or leave id out to have one made`,
    details: { messageId: id },
  });
}

function newSigningKey(): string {
  return randomBytes(24).toString("base64url");
}
