/**
 * Conversations: every contact with messages in either direction, newest
 * activity first, with its unread received texts and a preview of the last message; one
 * contact's thread in time order; marking a thread read. Replying is a manual message.
 */
import type { Database } from "bun:sqlite";
import { validationError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import { parseFilter } from "../domain/contact-query";
import { enumError, parsePaging } from "../domain/query-params";
import type { FieldError } from "../domain/submission";
import { countConversations, countThread, lastMessageOf, listConversations, listThread, unreadTotal } from "../db/stores/contacts/conversations";
import { markInboundRead } from "../db/stores/inbound-messages";
import type { ContactService } from "./contacts";

/** Characters of the last message shown in the list. */
export const PREVIEW_LENGTH = 100;

export function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= PREVIEW_LENGTH ? flat : chars.slice(0, PREVIEW_LENGTH - 1).join("") + "…";
}

type Raw = Record<string, string | undefined>;

export class ConversationService {
  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    private readonly contacts: ContactService,
  ) {}

  list(accountId: string, raw: Raw) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    const f = parseFilter({ status: raw.status, search: raw.search }, errors);
    let unread: boolean | undefined;
    if (raw.unread !== undefined && raw.unread !== "") {
      if (raw.unread === "true" || raw.unread === "false") unread = raw.unread === "true";
      else errors.push(enumError("unread", ["true", "false"], raw.unread.slice(0, 100)));
    }
    if (errors.length) throw validationError(errors);
    const total = countConversations(this.sqlite, accountId, { filter: f, unread });
    const rows = total > (page - 1) * limit ? listConversations(this.sqlite, accountId, { filter: f, unread }, { limit, offset: (page - 1) * limit }) : [];
    return {
      conversations: rows.map((r) => {
        const last = lastMessageOf(this.sqlite, r.contactId);
        return {
          contactId: r.contactId,
          contact: {
            id: r.contactId,
            firstName: r.firstName,
            lastName: r.lastName,
            phoneNumber: r.phoneNumber,
            status: r.status,
            optedOut: r.optedOut,
          },
          unreadCount: r.unreadCount,
          lastActivityAt: r.lastMessageAt,
          lastMessage: last ? { id: last.id, direction: last.direction, preview: preview(last.content), at: last.at } : null,
        };
      }),
      pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
      unreadTotal: unreadTotal(this.sqlite, accountId),
    };
  }

  thread(accountId: string, contactId: string, raw: Raw) {
    const errors: FieldError[] = [];
    const { page, limit } = parsePaging(raw, errors);
    let order: "asc" | "desc" = "asc";
    if (raw.order !== undefined && raw.order !== "") {
      if (raw.order === "asc" || raw.order === "desc") order = raw.order;
      else errors.push(enumError("order", ["asc", "desc"], raw.order.slice(0, 100)));
    }
    if (errors.length) throw validationError(errors);
    const c = this.contacts.get(accountId, contactId);
    const total = countThread(this.sqlite, accountId, c.id);
    const messages = total > (page - 1) * limit ? listThread(this.sqlite, accountId, c.id, { order, limit, offset: (page - 1) * limit }) : [];
    return {
      contact: { id: c.id, firstName: c.firstName, lastName: c.lastName, phoneNumber: c.phoneNumber, status: c.status, optedOut: c.optedOut },
      messages,
      pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
    };
  }

  markRead(accountId: string, contactId: string) {
    const c = this.contacts.get(accountId, contactId);
    const markedRead = this.sqlite.transaction(() => markInboundRead(this.sqlite, accountId, c.id, iso(this.clock())))();
    return { contactId: c.id, markedRead, unreadCount: 0 };
  }
}
