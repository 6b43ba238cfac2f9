/**
 * Was a queued text's time set by quiet hours (GET /v1/messages/{id} `waiting.reason`
 * "quiet-hours")? A text due inside quiet hours is scheduled for their end (services/sending/admit.ts,
 * `sendTime`), so a text waits for quiet hours when the instant just before its time lies inside
 * the quiet hours it was scheduled under: its broadcast's (in the broadcast's zone), else its
 * form's, in the contact's own zone when known and the form's otherwise (docs/contacts.md, "Time
 * zone"). Read from the rules, not stored with the text (docs/api-decisions.md, "Sending engine,
 * round two").
 */
import type { Database } from "bun:sqlite";
import { afterQuietHours, isValidQuietHours, type QuietHours } from "../domain/quiet-hours";
import { contactZone } from "../domain/contact-time-zone";
import { resolveProtection } from "../domain/protection";
import { resolveFormSettings } from "../domain/form-definition";
import { findBroadcast } from "../db/stores/broadcasts";
import { findFormSettings } from "../db/stores/forms";
import { contactTimeZoneOf } from "../db/stores/contacts";

/** True when `scheduledFor` is the end of quiet hours `hours` in `tz`. */
export function endsQuietHours(scheduledFor: number, tz: string, hours: QuietHours | null): boolean {
  return hours !== null && afterQuietHours(scheduledFor - 1, tz, hours) === scheduledFor;
}

export interface QueuedText {
  account_id: string;
  form_id: string | null;
  contact_id: string | null;
  broadcast_id: string | null;
  recipient_phone: string;
  scheduled_for: string;
}

export function heldByQuietHours(sqlite: Database, row: QueuedText): boolean {
  const at = Date.parse(row.scheduled_for);
  if (row.broadcast_id) {
    const b = findBroadcast(sqlite, row.account_id, row.broadcast_id);
    if (b?.quietHours && isValidQuietHours(b.quietHours) && endsQuietHours(at, b.timezone, b.quietHours)) return true;
  }
  if (!row.form_id) return false;
  const raw = findFormSettings(sqlite, row.account_id, row.form_id);
  if (raw === null) return false;
  const hours = resolveProtection(raw).quietHours;
  if (!hours) return false;
  const own = row.contact_id ? contactTimeZoneOf(sqlite, row.account_id, row.contact_id) : null;
  return endsQuietHours(at, contactZone(own, row.recipient_phone, resolveFormSettings(raw).timezone), hours);
}
