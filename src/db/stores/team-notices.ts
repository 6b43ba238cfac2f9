/**
 * Every statement on what the team is told (migration 0045): each person's choices (their
 * mobile, what they want to hear about, quiet hours), the notices the triggers on submissions and
 * inbound_messages make, and what a notice is about (docs/api-decisions.md, "The owner hears back",
 * the team is told).
 */
import type { Database } from "bun:sqlite";
import type { accounts, teamNotices, users } from "../schema";

type User = typeof users.$inferSelect;

/** A person's notification choices as stored. */
export type NotificationPrefs = Pick<User, "phoneNumber" | "notifySubmissions" | "notifyReplies" | "notifyEmail" | "quietStart" | "quietEnd">;

export type TeamNoticeChannel = "text" | "email";
export type TeamNoticeKind = "submission" | "reply";

/** A pending notice with who it is for. */
export type PendingNotice = Pick<typeof teamNotices.$inferSelect, "id" | "accountId" | "userId" | "refId" | "createdAt" | "attemptedAt"> &
  Pick<User, "email" | "phoneNumber" | "quietStart" | "quietEnd"> & {
    kind: TeamNoticeKind;
    userName: User["name"];
    /** The business's time zone (null: not set). */
    timeZone: (typeof accounts.$inferSelect)["timeZone"];
    /** The business's name (the e-mail's subject). */
    businessName: (typeof accounts.$inferSelect)["name"];
  };

/** What a notice is about: the sender, where, what they wrote, and the link's target. */
export interface NoticeSubject {
  contactId: string;
  /** The contact's name as stored (first and last). */
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  /** The form's name (a submission). */
  formName: string | null;
  /** The form's field definitions, parsed (a submission; null for a reply or when unreadable). */
  formFields: unknown;
  /** The submission's values, parsed (null for a reply or when unreadable). */
  values: Record<string, unknown> | null;
  /** The text's body (a reply; null for a submission). */
  body: string | null;
  /** Why the submission got no text (opted-out: the team replies another way); null for a reply. */
  suppressed: string | null;
}

/** Stored JSON text, parsed; null for none or text that is not JSON. */
function parsedOrNull(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const PREFS = `phone_number AS phoneNumber, notify_submissions AS notifySubmissions, notify_replies AS notifyReplies, notify_email AS notifyEmail,
  quiet_start AS quietStart, quiet_end AS quietEnd`;

export function findNotificationPrefs(sqlite: Database, userId: string): NotificationPrefs | null {
  const r = sqlite.query(`SELECT ${PREFS} FROM users WHERE id = ?`).get(userId) as (Omit<NotificationPrefs, "notifySubmissions" | "notifyReplies" | "notifyEmail"> & Record<"notifySubmissions" | "notifyReplies" | "notifyEmail", number>) | null;
  return r ? { ...r, notifySubmissions: r.notifySubmissions === 1, notifyReplies: r.notifyReplies === 1, notifyEmail: r.notifyEmail === 1 } : null;
}

export function updateNotificationPrefs(sqlite: Database, userId: string, p: NotificationPrefs, nowIso: string): void {
  sqlite
    .query(
      `UPDATE users SET phone_number = ?2, notify_submissions = ?3, notify_replies = ?4, notify_email = ?5, quiet_start = ?6, quiet_end = ?7, updated_at = ?8
        WHERE id = ?1`,
    )
    .run(userId, p.phoneNumber, p.notifySubmissions ? 1 : 0, p.notifyReplies ? 1 : 0, p.notifyEmail ? 1 : 0, p.quietStart, p.quietEnd, nowIso);
}

/** The account's person with this mobile number, if any (their texts are not a customer's). */
export function teamMemberByPhone(sqlite: Database, accountId: string, phone: string): { id: string; name: string } | null {
  return (sqlite.query("SELECT id, name FROM users WHERE account_id = ? AND phone_number = ? LIMIT 1").get(accountId, phone) as { id: string; name: string } | null) ?? null;
}

/** Notices not sent yet on a channel, oldest first, with their person and business time zone. */
export function pendingNotices(sqlite: Database, channel: TeamNoticeChannel, limit: number): PendingNotice[] {
  return sqlite
    .query(
      `SELECT n.id, n.account_id AS accountId, n.user_id AS userId, n.kind, n.ref_id AS refId, n.created_at AS createdAt, n.attempted_at AS attemptedAt,
              u.name AS userName, u.email, u.phone_number AS phoneNumber, u.quiet_start AS quietStart, u.quiet_end AS quietEnd, a.time_zone AS timeZone, a.name AS businessName
         FROM team_notices n JOIN users u ON u.id = n.user_id JOIN accounts a ON a.id = n.account_id
        WHERE n.sent_at IS NULL AND n.channel = ? ORDER BY n.id LIMIT ?`,
    )
    .all(channel, limit) as PendingNotice[];
}

/** When the person was last told on this channel (null: never). */
export function lastNoticeSentAt(sqlite: Database, userId: string, channel: TeamNoticeChannel): string | null {
  return (sqlite.query("SELECT max(sent_at) AS at FROM team_notices WHERE user_id = ? AND channel = ? AND sent_at IS NOT NULL").get(userId, channel) as { at: string | null }).at;
}

/** Marks notices sent (only those still pending); returns how many were. */
export function markNoticesSent(sqlite: Database, ids: number[], at: string, messageId: string | null): number {
  return sqlite.query("UPDATE team_notices SET sent_at = ?2, message_id = ?3 WHERE id IN (SELECT value FROM json_each(?1)) AND sent_at IS NULL").run(JSON.stringify(ids), at, messageId).changes;
}

/** An e-mail is being handed to the SMTP server (null: the attempt failed, try again later). */
export function markNoticesAttempted(sqlite: Database, ids: number[], at: string | null): void {
  sqlite.query("UPDATE team_notices SET attempted_at = ?2 WHERE id IN (SELECT value FROM json_each(?1)) AND sent_at IS NULL").run(JSON.stringify(ids), at);
}

/** Notices that can no longer be sent on their channel (no number any more, no SMTP): dropped. */
export function deleteNotices(sqlite: Database, ids: number[]): void {
  sqlite.query("DELETE FROM team_notices WHERE id IN (SELECT value FROM json_each(?1)) AND sent_at IS NULL").run(JSON.stringify(ids));
}

/** What a submission notice is about (null: the submission is gone). */
export function submissionSubject(sqlite: Database, submissionId: string): NoticeSubject | null {
  const r = sqlite
    .query(
      `SELECT s.contact_id AS contactId, c.first_name AS firstName, c.last_name AS lastName, c.phone_number AS phone, f.name AS formName, f.fields AS formFields,
              s.form_values AS formValues, s.suppressed
         FROM submissions s JOIN forms f ON f.id = s.form_id LEFT JOIN contacts c ON c.id = s.contact_id WHERE s.id = ?`,
    )
    .get(submissionId) as (Omit<NoticeSubject, "formFields" | "values" | "body"> & { formFields: string | null; formValues: string | null }) | null;
  if (!r) return null;
  const { formValues, ...rest } = r;
  return { ...rest, formFields: parsedOrNull(r.formFields), values: parsedOrNull(formValues) as Record<string, unknown> | null, body: null };
}

/** What a reply notice is about (null: the text is gone). */
export function replySubject(sqlite: Database, inboundId: string): NoticeSubject | null {
  return (
    (sqlite
      .query(
        `SELECT i.contact_id AS contactId, c.first_name AS firstName, c.last_name AS lastName, i.from_phone AS phone, NULL AS formName, NULL AS formFields,
                NULL AS "values", i.body AS body, NULL AS suppressed
           FROM inbound_messages i LEFT JOIN contacts c ON c.id = i.contact_id WHERE i.id = ?`,
      )
      .get(inboundId) as NoticeSubject | null) ?? null
  );
}

/** Sent notices older than `before` are forgotten (the gap only looks minutes back). */
export function sweepSentNotices(sqlite: Database, before: string): number {
  return sqlite.query("DELETE FROM team_notices WHERE sent_at IS NOT NULL AND sent_at < ?").run(before).changes;
}
