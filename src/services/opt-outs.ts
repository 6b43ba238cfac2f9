/**
 * Every opt-out and opt-in decision, and the only writer of a contact's opt-out state
 * (contacts.opted_out / opted_out_at through the store's writeOptOut; a unit test checks no other
 * module calls it). docs/api-decisions.md, "Replies, opt-outs and consent" and "One home per
 * rule: opt-outs and contacts".
 *
 * - keyword: an inbound text that is an opt-out or opt-in word (STOP/START or the account's own
 *   lists, src/domain/keywords.ts) — `applyKeyword`;
 * - manual: POST /v1/contacts/<id>/opt-out and /opt-in (a reason, who) — `parseManualReason`,
 *   `setOptOut`; POST/PUT /v1/contacts `optedOut` — `parseOptOutFields`, `setOptOut`;
 * - import: a row's optedOut/optedOutAt cells — `parseImportOptOut`, `importOptOut`;
 * - enqueue: whether a number may be texted (`mayText`) and whether a form's consent box was
 *   ticked (`consentGiven`), asked by every sending path through src/services/sending (a manual
 *   send's refusal: `refuseIfOptedOut`); a broadcast's segment
 *   leaves out the same contacts in SQL (OPTED_OUT_SQL, the contacts store's form of `mayText`);
 * - lease: a message whose number opted out after it was queued — `optedOutAtLease`.
 *
 * Every change of the opt-out is recorded in the contact's consent history (consent_history):
 * what, how, the reason, who and when (docs/api-decisions.md, "Contact care").
 *
 * Everything here runs inside the caller's transaction; the caller tells the queue and the
 * leases about cancelled messages after the commit (LeaseService.withdraw).
 */
import type { Database } from "bun:sqlite";
import { AppError } from "../errors";
import { iso, nextUpdatedAt, type Clock } from "../lib/clock";
import { isConsentGiven, type KeywordKind } from "../domain/keywords";
import { parseIsoTimestamp } from "../domain/message-transitions";
import type { FieldError } from "../domain/submission";
import { optOutOf, writeOptOut, type ContactLink, type Recipient } from "../db/stores/contacts";
import { appendConsentEntry, type ConsentSource } from "../db/stores/consent-history";
import type { Actor } from "../domain/people";
import { cancelQueuedTo, cancelSuppressed, optOutConfirmedSince, suppressedAtLease } from "../db/message-suppression";
import { emitContact, emitMessageStatus } from "./event-payloads";

export { OPTED_OUT_REASON, KEYWORD_REPLY_SOURCE } from "../db/message-suppression";
export { OPTED_OUT_SQL } from "../db/stores/contacts";

/** How an opt-out change came about, for the consent history. */
export interface OptOutHow {
  source: Exclude<ConsentSource, "keyword">;
  reason?: string | null;
  by?: Actor | null;
}

/**
 * Opts a contact out (cancelling what is queued to its number; no confirmation text: the
 * customer did not ask) or back in, emitting contact.opted_out / opted_in (`announce: false`:
 * the caller does, after the contact.created it owes first) and recording the change in the
 * consent history (`how`). Returns the cancelled message ids and whether the contact changed
 * (the caller then owes one contact.updated); no transaction.
 */
export function setOptOut(
  sqlite: Database,
  clock: Clock,
  accountId: string,
  id: string,
  phone: string,
  optedOut: boolean,
  at: string,
  announce = true,
  how: OptOutHow = { source: "api" },
): { cancelled: string[]; changed: boolean } {
  const stored = optOutOf(sqlite, id);
  const now = clock();
  const changed = stored.optedOut !== optedOut;
  if (changed) {
    writeOptOut(sqlite, id, optedOut, at, nextUpdatedAt(clock(), stored.updatedAt));
    appendConsentEntry(sqlite, accountId, id, { action: optedOut ? "opted_out" : "opted_in", source: how.source, reason: how.reason ?? null, by: how.by ?? null, at });
    if (announce) emitContact(sqlite, accountId, id, optedOut ? "contact.opted_out" : "contact.opted_in", now);
  }
  const cancelled = optedOut ? cancelQueuedTo(sqlite, accountId, phone, iso(now)) : [];
  for (const m of cancelled) emitMessageStatus(sqlite, accountId, m, "cancelled", now);
  return { cancelled, changed };
}

/**
 * An inbound text that is a keyword (docs/api-decisions.md, "The phone path, round two"):
 * - opt-out: every queued message to the number is cancelled except a pending opt-out
 *   confirmation or help reply; a contact not yet opted out is marked so and gets one
 *   confirmation. Each opt-out is confirmed once: a second STOP cancels whatever else was queued
 *   meanwhile but neither takes back the first confirmation nor queues another; a STOP from a
 *   number the owner opted out (no text then) gets the one confirmation.
 * - opt-in: an opted-out contact is opted back in and gets the optInReply; from a contact that
 *   never opted out ("YES" answering an appointment text) nothing is sent.
 * - help: the helpReply, every time, opted out or not.
 * Returns the cancelled message ids and which reply to queue.
 */
export function applyKeyword(
  sqlite: Database,
  accountId: string,
  keyword: KeywordKind | null,
  c: { contactId: string; contact: ContactLink | null; phone: string; receivedIso: string; updatedAt: string },
  now: number,
): { cancelled: string[]; replyKey: "optOutReply" | "optInReply" | "helpReply" | null } {
  const wasOptedOut = c.contact?.optedOut ?? false;
  let cancelled: string[] = [];
  let replyKey: "optOutReply" | "optInReply" | "helpReply" | null = null;
  if (keyword === "opt-out") {
    cancelled = cancelQueuedTo(sqlite, accountId, c.phone, iso(now));
    for (const m of cancelled) emitMessageStatus(sqlite, accountId, m, "cancelled", now);
    if (!wasOptedOut) {
      writeOptOut(sqlite, c.contactId, true, c.receivedIso, c.updatedAt);
      appendConsentEntry(sqlite, accountId, c.contactId, { action: "opted_out", source: "keyword", reason: null, by: null, at: c.receivedIso });
      emitContact(sqlite, accountId, c.contactId, "contact.opted_out", now);
      replyKey = "optOutReply";
    } else if (!optOutConfirmedSince(sqlite, accountId, c.phone, c.contact!.optedOutAt)) replyKey = "optOutReply";
  } else if (keyword === "opt-in" && wasOptedOut) {
    writeOptOut(sqlite, c.contactId, false, null, c.updatedAt);
    appendConsentEntry(sqlite, accountId, c.contactId, { action: "opted_in", source: "keyword", reason: null, by: null, at: c.receivedIso });
    emitContact(sqlite, accountId, c.contactId, "contact.opted_in", now);
    replyKey = "optInReply";
  } else if (keyword === "help") replyKey = "helpReply";
  return { cancelled, replyKey };
}

/**
 * THE opt-out decision at enqueue, asked by every sending path (src/services/sending/admit.ts): an
 * opted-out number gets no text, except the replies the law asks for (the confirmation of its own
 * STOP, HELP's answer) — docs/api-decisions.md, "Replies, opt-outs and consent".
 */
export function mayText(recipient: { optedOut: boolean } | null | undefined, opts: { keywordReply?: boolean } = {}): boolean {
  // Truthiness, not `=== true`: a store that still hands back SQLite's 0/1 must not let a text through.
  return opts.keywordReply === true || !recipient?.optedOut;
}

/**
 * THE consent rule (docs/api-decisions.md, "Replies, opt-outs and consent"): with a consent field
 * on the form, a text needs that box ticked in `values` (the submission, or the contact's stored
 * fields) — unless the owner vouched for the contact (added by import, the API, the dashboard).
 */
export function consentGiven(consentField: string | null, values: Record<string, unknown>, vouched = false): boolean {
  if (consentField === null || vouched) return true;
  return isConsentGiven(Object.hasOwn(values, consentField) ? values[consentField] : undefined);
}

/** Whether the contact's stored consent record says the owner added it (anything but a form's submission). */
export function consentVouched(consent: Record<string, unknown>): boolean {
  return consent.source !== undefined && consent.source !== "webhook";
}

/** A manual message to a contact that opted out is refused (409 RECIPIENT_OPTED_OUT); nothing is queued. */
export function refuseIfOptedOut(contact: Pick<Recipient, "id" | "phoneNumber" | "optedOut"> | null): void {
  if (contact && !mayText(contact)) {
    throw new AppError("RECIPIENT_OPTED_OUT", {
      message: `${contact.phoneNumber} replied STOP (opted out of texts); nothing was queued. They can text START to opt back in.`,
      details: { contactId: contact.id, phoneNumber: contact.phoneNumber },
    });
  }
}

/**
 * Lease time: a queued message whose recipient opted out after it was queued (and that is not a
 * keyword reply) is cancelled instead of handed out. A batch of the queue walk is looked up in one
 * statement; the function returned cancels one of them if the look-up found it, and says whether it
 * did (docs/api-decisions.md, "Sending engine: crash safety and the queue walk").
 */
export function optedOutAtLease(sqlite: Database, messageIds: string[]): (messageId: string, nowIso: string) => boolean {
  const found = suppressedAtLease(sqlite, messageIds);
  return (messageId, nowIso) => {
    if (!found.has(messageId)) return false;
    cancelSuppressed(sqlite, messageId, nowIso);
    return true;
  };
}

/**
 * `optedOut` and `consent` are set apart from the contact patch (validateContactInput refuses
 * keys it does not know): optedOut a boolean; consent on create only, `{source: "manual"|"api"}`
 * (how the owner got the number; default api).
 */
export function parseOptOutFields(
  body: unknown,
  mode: "create" | "update",
): {
  body: unknown;
  /** The body held optedOut or consent. */
  split: boolean;
  optedOut?: boolean;
  consentSource?: "manual" | "api";
  errors: FieldError[];
} {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { body, split: false, errors: [] };
  const { optedOut, consent, ...rest } = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const out: ReturnType<typeof parseOptOutFields> = { body: rest, split: optedOut !== undefined || consent !== undefined, errors };
  if (optedOut !== undefined) {
    if (typeof optedOut === "boolean") out.optedOut = optedOut;
    else errors.push({ field: "optedOut", message: "optedOut must be true or false", requirement: "boolean", provided: optedOut });
  }
  if (consent !== undefined) {
    const src = typeof consent === "object" && consent !== null && !Array.isArray(consent) ? (consent as Record<string, unknown>).source : undefined;
    const keys = typeof consent === "object" && consent !== null ? Object.keys(consent) : [];
    if (mode !== "create") errors.push({ field: "consent", message: "consent is recorded when a contact is created and cannot be changed", requirement: "no consent on update", provided: null });
    else if ((src !== "manual" && src !== "api") || keys.some((k) => k !== "source")) {
      errors.push({ field: "consent", message: 'consent must be {"source": "manual"} or {"source": "api"}', requirement: "{source: manual | api}", provided: null });
    } else out.consentSource = src;
  }
  return out;
}

/** An import row's opt-out: "true" / "false" (empty leaves the contact as it is), and when (default now). */
export interface ImportOptOut {
  optedOut?: boolean;
  at: string;
}

/** The row's optedOut / optedOutAt cells; problems go to `errors` (the row is then skipped). */
export function parseImportOptOut(optedOut: string | undefined, optedOutAt: string | undefined, now: number, errors: Array<{ field: string; message: string }>): ImportOptOut {
  if (optedOut !== undefined && optedOut !== "true" && optedOut !== "false") {
    errors.push({ field: "optedOut", message: "optedOut must be true or false (empty leaves it as it is)" });
  }
  let optedOutMs: number | null = null;
  if (optedOutAt !== undefined) {
    optedOutMs = parseIsoTimestamp(optedOutAt);
    if (optedOutMs === null) errors.push({ field: "optedOutAt", message: "optedOutAt must be an ISO 8601 timestamp" });
  }
  return { optedOut: optedOut === undefined ? undefined : optedOut === "true", at: optedOutMs === null ? iso(now) : iso(optedOutMs) };
}

/**
 * An import row for a contact that exists: its opt-out cell applied ("false" on a contact that
 * is not opted out changes nothing, not even a read). Returns the cancelled message ids.
 */
export function importOptOut(sqlite: Database, clock: Clock, accountId: string, existing: { id: string; optedOut: boolean }, phone: string, o: ImportOptOut): string[] {
  if (o.optedOut === undefined || (o.optedOut === false && !existing.optedOut)) return [];
  return setOptOut(sqlite, clock, accountId, existing.id, phone, o.optedOut, o.at, true, { source: "import" }).cancelled;
}

/** Longest reason kept for a change made by hand. */
export const MAX_REASON_LENGTH = 500;

/**
 * The body of POST /v1/contacts/<id>/opt-out (`{reason?}`) or /opt-in (`{reason}`): a customer
 * who asked to stop and then asks to be texted again is the owner's word against the STOP, so
 * opting back in by hand needs the reason written down (docs/api-decisions.md, "Contact care").
 */
export function parseManualReason(body: unknown, optedOut: boolean): { reason: string | null; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const b = body === undefined || body === null ? {} : body;
  if (typeof b !== "object" || Array.isArray(b)) return { reason: null, errors: [{ field: "body", message: "The body must be a JSON object such as {\"reason\": \"…\"}", requirement: "object", provided: null }] };
  const extra = Object.keys(b).filter((k) => k !== "reason");
  if (extra.length) errors.push({ field: extra[0].slice(0, 64), message: `Only a reason can be given here, not ${extra[0].slice(0, 64)}`, requirement: "reason only", provided: null });
  const raw = (b as { reason?: unknown }).reason;
  let reason: string | null = null;
  if (raw !== undefined && raw !== null && typeof raw !== "string") errors.push({ field: "reason", message: "reason must be text", requirement: "string", provided: null });
  else if (typeof raw === "string") {
    reason = raw.trim() || null;
    if (reason !== null && reason.length > MAX_REASON_LENGTH) errors.push({ field: "reason", message: `reason must be at most ${MAX_REASON_LENGTH} characters`, requirement: `at most ${MAX_REASON_LENGTH} characters`, provided: reason.length });
  }
  if (!optedOut && reason === null && !errors.some((e) => e.field === "reason")) {
    errors.push({ field: "reason", message: "Say why this person may be texted again (for example: 'Asked in the shop on 3 May to get reminders again')", requirement: "required to opt back in", provided: null });
  }
  return { reason, errors };
}
