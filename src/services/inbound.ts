/**
 * Inbound messages (issue 10 item 4): a text one of the account's phones received, reported by a
 * recipe (`POST /v1/messages/<KEY>/inbound`) or by SMSGate's `sms:received`.
 *
 * `receive` is synchronous and durable on return: one SQLite transaction stores the text, links
 * the account's contact for the sender's number (created, status `responded`, when unknown),
 * sets its `lastResponseAt` and moves it `new|contacted → responded`. A phone that reports the
 * same text twice (same deviceId and externalId) gets the first record back and nothing changes.
 */
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { newId, UUID_RE } from "../lib/ids";
import { validateInbound } from "../domain/inbound";
import { parseQueryDate } from "../domain/query-params";
import { parsePaging } from "../domain/contact-query";
import type { FieldError } from "../domain/submission";
import { countInbound, findInboundByExternalId, insertInbound, listInbound, type InboundFilter, type InboundRow } from "../db/inbound-messages";
import { findContactByPhone, insertRespondedContact, markContactResponded } from "../db/contacts";

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
  createdAt: string;
}

export interface InboundInput {
  from: string;
  body: string;
  /** Epoch ms (an ISO string is read too). */
  receivedAt?: number | string | null;
  deviceId?: string | null;
  externalId?: string | null;
}

export interface ReceiveOutcome {
  message: InboundMessage;
  /** The phone had reported this text before: nothing was written. */
  duplicate: boolean;
  /** A contact was created for the sender. */
  contactCreated: boolean;
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
    createdAt: r.createdAt,
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
    return this.sqlite.transaction((): ReceiveOutcome => {
      if (value.externalId !== null) {
        const prior = findInboundByExternalId(this.sqlite, accountId, value.deviceId, value.externalId);
        if (prior) return { message: toInboundMessage(prior), duplicate: true, contactCreated: false };
      }
      const nowIso = iso(now);
      const receivedIso = iso(value.receivedAt);
      const contact = findContactByPhone(this.sqlite, accountId, value.from);
      let contactId: string;
      if (contact) {
        contactId = contact.id;
        markContactResponded(this.sqlite, contactId, receivedIso, nextUpdatedAt(now, contact.updatedAt));
      } else {
        contactId = newId();
        insertRespondedContact(this.sqlite, { id: contactId, accountId, phone: value.from, lastResponseAt: receivedIso, createdAt: nowIso });
      }
      const row: InboundRow = {
        id: newId(),
        accountId,
        contactId,
        fromPhone: value.from,
        body: value.body,
        receivedAt: receivedIso,
        deviceId: value.deviceId,
        externalId: value.externalId,
        createdAt: nowIso,
      };
      insertInbound(this.sqlite, row);
      return { message: toInboundMessage(row), duplicate: false, contactCreated: !contact };
    })();
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
