/**
 * Inbound messages: a text one of the account's phones received, reported by a
 * recipe (`POST /v1/messages/<KEY>/inbound`) or by SMSGate's `sms:received`.
 *
 * `receive` is synchronous and durable on return: one SQLite transaction stores the text, links
 * the account's contact for the sender's number (created, status `responded`, when unknown),
 * sets its `lastResponseAt` and moves it `new|contacted → responded`. A phone that reports the
 * same text twice (same deviceId and externalId) gets the first record back and nothing changes.
 *
 * Keywords (src/domain/keywords.ts; decided by applyKeyword in opt-outs.ts; docs/api-decisions.md,
 * "Replies, opt-outs and consent"), in the same transaction:
 * - opt-out (STOP…): every queued message to the number is cancelled (failureReason
 *   "opted-out") except a pending opt-out confirmation or help reply; a contact not yet opted
 *   out is marked so and gets one confirmation, queued at `urgent`. Each opt-out is confirmed
 *   once: a second STOP cancels whatever else was queued meanwhile but neither takes back the
 *   first confirmation nor queues another; a STOP from a number the owner opted out (no text
 *   then: the customer had not asked) gets the one confirmation. docs/api-decisions.md, "The
 *   phone path, round two".
 * - opt-in (START…): an opted-out contact is opted back in and gets the optInReply. From a
 *   contact that never opted out ("YES" answering an appointment text) nothing is sent.
 * - help (HELP, INFO): the helpReply, every time, opted out or not.
 * A text that is none of them may be an owner's keyword reply ("HOURS"): answered by
 * KeywordReplyService.answer in the same transaction (src/services/keyword-replies.ts).
 *
 * History (isResentHistory in src/domain/inbound.ts): a text the phone sends again because it was
 * asked for its inbox (SMSGate's export / refresh) is stored, shown and deduplicated, but takes no
 * action: no keyword, no auto-reply or keyword reply, no contact status change, no automation stop
 * (the trigger skips `history` rows), born read; its event says `history: true`
 * (docs/api-decisions.md, "SMSGate: signing key in the settings document, and re-sent history").
 * The queue and the leases are told after the commit (LeaseService.withdraw; the reply through the
 * one sending path, src/services/sending).
 */
import type { Changes } from "../lib/changes";
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import { EXPORT_OPEN_MS, isResentHistory, validateInbound, type InboundInput as ValidInbound } from "../domain/inbound";
import { listInboxExports } from "../db/stores/devices";
import { parsePaging, parseQueryDate } from "../domain/query-params";
import type { FieldError } from "../domain/submission";
import { countInbound, findInboundByExternalId, insertInbound, listInbound, type InboundFilter, type InboundRow } from "../db/stores/inbound-messages";
import { findContactByPhone, insertRespondedContact, markContactResponded } from "../db/stores/contacts";
import { applyKeyword, KEYWORD_REPLY_SOURCE } from "./opt-outs";
import { keywordOf, type KeywordKind } from "../domain/keywords";
import { smsInfo } from "../domain/sms-encoding";
import type { Sequence } from "../lib/seq";
import type { LeaseService } from "./leases";
import type { MonthlyQuota } from "./quota";
import type { AccountSettingsService } from "./account-settings";
import type { KeywordReplyService } from "./keyword-replies";
import { newQueuedRow, queueEntryOf, writeQueued, type Sending } from "./sending";
import type { MessageRow } from "../db/stores/messages/rows";
import { emitEvent } from "./events";
import { contactPayload, emitContact, emitMessageStatus } from "./event-payloads";
import { recipientName } from "../domain/contact-name";
import { findNotificationPrefs, teamMemberByPhone, updateNotificationPrefs } from "../db/stores/team-notices";

/** The API's inbound message. */
export interface InboundMessage {
  id: string;
  direction: "inbound";
  contactId: string;
  /** The sender, E.164. */
  from: string;
  body: string;
  receivedAt: string;
  deviceId: string | null;
  externalId: string | null;
  /** The keyword the text was, if any (null for history: it was not handled as one). */
  keyword: KeywordKind | null;
  /** A text the phone sent again from its history (an inbox export): stored, no action taken. */
  history: boolean;
  /** When the conversation was marked read; null = unread. */
  readAt: string | null;
  createdAt: string;
}

export interface InboundInput {
  from: string;
  body: string;
  /** Epoch ms (an ISO string is read too). */
  receivedAt?: number | string | null;
  deviceId?: string | null;
  externalId?: string | null;
  /** What an SMSGate phone reported with it: the SIM slot and its own number (SMSGate's webhooks carry them). */
  simNumber?: unknown;
  recipient?: unknown;
}

/** The SIM slot and the phone's own number as a phone reported them, or null when absent or unlikely. */
function reportedBy(input: InboundInput): { simNumber: number | null; recipient: string | null } {
  const sim = input.simNumber;
  const to = input.recipient;
  return {
    simNumber: typeof sim === "number" && Number.isInteger(sim) && sim >= 1 && sim <= 8 ? sim : null,
    recipient: typeof to === "string" && to.length > 0 && to.length <= 32 ? to : null,
  };
}

export interface ReceiveOutcome {
  message: InboundMessage;
  /** The phone had reported this text before: nothing was written. */
  duplicate: boolean;
  /** A contact was created for the sender. */
  contactCreated: boolean;
  /** Queued messages to the number cancelled by an opt-out. */
  cancelledMessageIds: string[];
  /** The confirmation or help reply queued, if any. */
  replyMessageId: string | null;
  /** From one of the team's own mobiles: not stored as a customer's text. */
  fromTeam?: boolean;
}

export function toInboundMessage(r: InboundRow): InboundMessage {
  return {
    id: r.id,
    direction: "inbound",
    contactId: r.contactId,
    from: r.fromPhone,
    body: r.body,
    receivedAt: r.receivedAt,
    deviceId: r.deviceId,
    externalId: r.externalId,
    keyword: (r.keyword as KeywordKind | null) ?? null,
    readAt: r.readAt,
    createdAt: r.createdAt,
    history: r.history,
  };
}

export interface InboundListQuery {
  page: number;
  limit: number;
  contactId?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export class InboundService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly settings: AccountSettingsService,
    private readonly sending: Sending,
    private readonly seq: Sequence,
    private readonly leases: Pick<LeaseService, "withdraw">,
    private readonly quota: MonthlyQuota,
    private readonly changes: Changes,
    private readonly keywordReplies: KeywordReplyService,
  ) {}

  /** Stores one received text (see the module comment); throws VALIDATION_ERROR for bad input. */
  receive(accountId: string, input: InboundInput): InboundMessage {
    return this.handle(accountId, input).message;
  }

  /** `receive` with what happened (the HTTP route answers 201 or 200 from it). */
  handle(accountId: string, input: InboundInput): ReceiveOutcome {
    const now = this.clock();
    const v = validateInbound(input as unknown as Record<string, unknown>, now);
    if (!v.ok) throw validationError(v.errors);
    const value = v.value;
    // A text from one of the team's own mobiles is no customer's (docs/api-decisions.md, "The owner
    // hears back", the team is told): no contact, no conversation, no keyword reply.
    const member = teamMemberByPhone(this.sqlite, accountId, value.from);
    if (member) return this.fromTeam(accountId, member, value, now);
    const history = this.isHistory(accountId, value, now);
    // History is no command: neither a keyword nor a keyword reply.
    const keyword = history ? null : keywordOf(value.body, this.settings.resolved(accountId));
    // STOP/START/HELP always win over the owner's keyword replies.
    const rule = keyword === null && !history ? this.keywordReplies.match(accountId, value.body) : null;
    // Replies to keywords are counted in the monthly usage but never refused (the law asks for
    // them): reserved before the write, settled after it, as every message is. A keyword reply
    // is an ordinary text: none once the month's quota is used up.
    const reserved =
      keyword !== null ? this.quota.reserve(accountId, Number.POSITIVE_INFINITY) === null : rule !== null ? this.keywordReplies.reserve(accountId) : false;
    let out: ReceiveOutcome & { reply: MessageRow | null };
    try {
      out = this.write(accountId, value, keyword, rule && { rule, mayQueue: reserved }, history, now, reportedBy(input));
    } catch (err) {
      if (reserved) this.quota.settle(accountId, false);
      throw err;
    }
    if (reserved) this.quota.settle(accountId, out.reply !== null);
    // Committed: the queue and the leases follow.
    if (out.cancelledMessageIds.length > 0) this.leases.withdraw(out.cancelledMessageIds);
    if (out.reply) {
      this.sending.queued([queueEntryOf(out.reply)]);
    }
    if (!out.duplicate) {
      // A text a phone received is the phone's news; one posted through the API is the caller's.
      this.changes.message(accountId, "updated", value.deviceId !== null ? "device" : "api");
      if (!history || out.contactCreated) this.changes.contact(accountId, out.contactCreated ? "created" : "updated");
    }
    const { reply: _reply, ...outcome } = out;
    return outcome;
  }

  /**
   * A team member's text: stored nowhere. STOP (an opt-out keyword) switches their team texts off,
   * as a customer's STOP would stop texts to them; they switch them on again in their profile.
   */
  private fromTeam(accountId: string, member: { id: string; name: string }, value: ValidInbound, now: number): ReceiveOutcome {
    if (keywordOf(value.body, this.settings.resolved(accountId)) === "opt-out") {
      const p = findNotificationPrefs(this.sqlite, member.id);
      if (p) updateNotificationPrefs(this.sqlite, member.id, { ...p, notifySubmissions: false, notifyReplies: false }, iso(now));
    }
    const at = iso(now);
    const message: InboundMessage = {
      id: newId(),
      direction: "inbound",
      contactId: "",
      from: value.from,
      body: value.body,
      receivedAt: iso(value.receivedAt),
      deviceId: value.deviceId,
      externalId: value.externalId,
      keyword: null,
      history: false,
      readAt: at,
      createdAt: at,
    };
    return { message, duplicate: false, contactCreated: false, cancelledMessageIds: [], replyMessageId: null, fromTeam: true };
  }

  /** Whether the text is history its phone sends again (an inbox export asked of it), not a new one. */
  private isHistory(accountId: string, value: ValidInbound, now: number): boolean {
    if (value.deviceId === null) return false;
    const asked = listInboxExports(this.sqlite, accountId, value.deviceId, iso(now - EXPORT_OPEN_MS));
    if (asked.length === 0) return false;
    const windows = asked.map((e) => ({ since: Date.parse(e.since), until: Date.parse(e.until), requestedAt: Date.parse(e.requestedAt) }));
    return isResentHistory(value.receivedAt, windows, now);
  }

  private write(
    accountId: string,
    value: ValidInbound,
    keyword: KeywordKind | null,
    keywordReply: { rule: NonNullable<ReturnType<KeywordReplyService["match"]>>; mayQueue: boolean } | null,
    history: boolean,
    now: number,
    reported: { simNumber: number | null; recipient: string | null } = { simNumber: null, recipient: null },
  ): ReceiveOutcome & { reply: MessageRow | null } {
    return this.sqlite.transaction((): ReceiveOutcome & { reply: MessageRow | null } => {
      if (value.externalId !== null) {
        const prior = findInboundByExternalId(this.sqlite, accountId, value.deviceId, value.externalId);
        if (prior) return { message: toInboundMessage(prior), duplicate: true, contactCreated: false, cancelledMessageIds: [], replyMessageId: null, reply: null };
      }
      const nowIso = iso(now);
      const receivedIso = iso(value.receivedAt);
      const contact = findContactByPhone(this.sqlite, accountId, value.from);
      let contactId: string;
      let updatedAt = nowIso;
      if (contact) {
        contactId = contact.id;
        updatedAt = nextUpdatedAt(now, contact.updatedAt);
        // History changes no contact: an old answer moves no one to "responded" now.
        if (!history) markContactResponded(this.sqlite, contactId, receivedIso, updatedAt);
      } else {
        contactId = newId();
        insertRespondedContact(this.sqlite, { id: contactId, accountId, phone: value.from, lastResponseAt: receivedIso, createdAt: nowIso });
      }
      // A keyword (STOP, START, HELP…) is decided in opt-outs.ts; the reply it asks for is queued here.
      const { cancelled, replyKey } = applyKeyword(this.sqlite, accountId, keyword, { contactId, contact, phone: value.from, receivedIso, updatedAt }, now);
      let reply = replyKey ? this.insertReply(accountId, contactId, contact, value.from, this.settings.reply(accountId, replyKey), keyword!, now) : null;
      if (keywordReply) {
        const recipient = recipientName(contact);
        const a = this.keywordReplies.answer(accountId, keywordReply.rule, { contactId, phone: value.from, optedOut: contact?.optedOut ?? false, recipientName: recipient, updatedAt }, keywordReply.mayQueue, now);
        reply = a.reply;
      }
      if (reply) emitMessageStatus(this.sqlite, accountId, reply.id, "queued", now);
      const row: InboundRow = {
        id: newId(),
        accountId,
        contactId,
        fromPhone: value.from,
        body: value.body,
        receivedAt: receivedIso,
        deviceId: value.deviceId,
        externalId: value.externalId,
        keyword,
        // History is born read: old texts are no news for the inbox's unread count.
        readAt: history ? nowIso : null,
        createdAt: nowIso,
        history,
        ...reported,
      };
      insertInbound(this.sqlite, row);
      if (!history || !contact) emitContact(this.sqlite, accountId, contactId, contact ? "contact.updated" : "contact.created", now);
      emitEvent(this.sqlite, accountId, "inbound.received", () => ({ message: toInboundMessage(row), contact: contactPayload(this.sqlite, contactId) }), now);
      return { message: toInboundMessage(row), duplicate: false, contactCreated: !contact, cancelledMessageIds: cancelled, replyMessageId: reply?.id ?? null, reply };
    })();
  }

  /** The confirmation or help text, queued at urgent inside the caller's transaction. */
  private insertReply(
    accountId: string,
    contactId: string,
    contact: { firstName: string | null; lastName: string | null } | null,
    phone: string,
    text: string,
    keyword: KeywordKind,
    now: number,
  ): MessageRow {
    const info = smsInfo(text);
    const at = iso(now);
    const row = newQueuedRow({
      account_id: accountId,
      contact_id: contactId,
      content: text,
      recipient_phone: phone,
      recipient_name: recipientName(contact),
      priority: "urgent",
      scheduled_for: at,
      metadata: JSON.stringify({ messageLength: text.length, variablesUsed: [], source: KEYWORD_REPLY_SOURCE, keyword, encoding: info.encoding, segments: info.segments }),
      seq: this.seq.next(),
      created_at: at,
    });
    // The replies the law asks for: opt-outs.ts (applyKeyword) decided this one is sent, opted out or not.
    writeQueued(this.sqlite, row, null);
    return row;
  }

  /** GET /v1/inbound: newest first; another account's contact id matches nothing. */
  list(accountId: string, q: { page?: string; limit?: string; contactId?: string; createdAfter?: string; createdBefore?: string }) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(q, errors);
    const f: InboundFilter = {};
    for (const k of ["createdAfter", "createdBefore"] as const) {
      const raw = q[k];
      if (raw === undefined || raw === "") continue;
      const t = parseQueryDate(raw);
      if (t === null) {
        errors.push({ field: k, message: `${k} must be an ISO 8601 date`, requirement: "ISO 8601 date or date-time, e.g. 2026-11-01 or 2026-11-01T00:00:00Z", provided: raw.slice(0, 100) });
      } else f[k] = iso(t);
    }
    if (errors.length) throw validationError(errors);
    const empty = { messages: [] as InboundMessage[], pagination: { total: 0, page, limit, totalPages: 0 } };
    if (q.contactId !== undefined && q.contactId !== "") {
      if (!UUID_RE.test(q.contactId)) return empty;
      f.contactId = q.contactId;
    }
    const total = countInbound(this.sqlite, accountId, f);
    const rows = total > (page - 1) * limit ? listInbound(this.sqlite, accountId, f, limit, (page - 1) * limit) : [];
    return { messages: rows.map(toInboundMessage), pagination: { total, page, limit, totalPages: Math.ceil(total / limit) } };
  }
}
