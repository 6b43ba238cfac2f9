/**
 * The `data` of each event: the API's own representation of the object, read inside the
 * emitting transaction (after the change), and only when some endpoint takes the event.
 * Each helper is the one-liner a feature calls inside its transaction.
 */
import type { Database } from "bun:sqlite";
import { readContact } from "../db/stores/contacts";
import { toMessage } from "../db/stores/messages/rows";
import { messagesOf } from "../db/stores/messages";
import type { MessageStatus } from "../domain/message-transitions";
import { emitEvent } from "./events";

export function contactPayload(sqlite: Database, contactId: string) {
  return readContact(sqlite, contactId);
}

export function messagePayload(sqlite: Database, messageId: string) {
  const row = messagesOf(sqlite).findAny(messageId);
  return row ? toMessage(row) : null;
}

const STATUS_EVENT = { queued: "message.queued", sent: "message.sent", failed: "message.failed", cancelled: "message.cancelled" } as const;

/** message.queued | sent | failed | cancelled, after the message's row reached `status`. */
export function emitMessageStatus(sqlite: Database, accountId: string, messageId: string, status: MessageStatus, now: number) {
  return emitEvent(sqlite, accountId, STATUS_EVENT[status], () => ({ message: messagePayload(sqlite, messageId) }), now);
}

/**
 * message.delivered: the phone reported the text delivered to the handset. Main has no delivered
 * state yet; the phones feature's delivery report (SMSGate `Delivered` → metadata.deliveredAt)
 * calls this in the transaction that stores it.
 */
export function emitMessageDelivered(sqlite: Database, accountId: string, messageId: string, now: number) {
  return emitEvent(sqlite, accountId, "message.delivered", () => ({ message: messagePayload(sqlite, messageId) }), now);
}

export function emitContact(sqlite: Database, accountId: string, contactId: string, type: "contact.created" | "contact.updated" | "contact.opted_out" | "contact.opted_in", now: number) {
  return emitEvent(sqlite, accountId, type, () => ({ contact: contactPayload(sqlite, contactId) }), now);
}

/**
 * The webhook path's events, inside its group-commit job: the contact (created or merged), the
 * queued message and form.submission (the accepted answer + the contact). With no endpoint
 * subscribed this is three Map lookups and nothing else.
 */
export function emitSubmission(
  sqlite: Database,
  s: { accountId: string; formId: string; formName: string; submissionId: string; contactId: string; newContact: boolean; messageId: string; answer: string },
  now: number,
) {
  let contact: ReturnType<typeof contactPayload> | undefined;
  const readContact = () => (contact === undefined ? (contact = contactPayload(sqlite, s.contactId)) : contact);
  emitEvent(sqlite, s.accountId, s.newContact ? "contact.created" : "contact.updated", () => ({ contact: readContact() }), now);
  emitMessageStatus(sqlite, s.accountId, s.messageId, "queued", now);
  emitEvent(
    sqlite,
    s.accountId,
    "form.submission",
    () => ({ submission: { id: s.submissionId, formId: s.formId, formName: s.formName, newContact: s.newContact, answer: JSON.parse(s.answer), contact: readContact() } }),
    now,
  );
}
