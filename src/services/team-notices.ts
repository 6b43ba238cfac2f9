/**
 * The team is told (docs/api-decisions.md, "The owner hears back", the team told): each
 * person's choices (PATCH /v1/people/me), and the notifier that sends what triggers queued in
 * team_notices — a short text through the shop's own phones, or an e-mail when the operator set
 * up SMTP.
 *
 * Exactly once: a notice row is made in its cause's transaction (a submission applied, a
 * customer's text stored); a text is queued and its notices marked sent in ONE transaction, so a
 * crash leaves either both or neither. An e-mail is marked attempted before it is handed to the
 * SMTP server and sent once accepted; a crash in between sends it again after
 * EMAIL_RETRY_AFTER_MS with the same Message-ID (mail clients show one).
 *
 * Batching: everything pending for a person goes in one text; after a text, the next waits
 * NOTICE_GAP_MS (what arrives meanwhile is told together). Quiet hours: a person's own, in the
 * business's time zone; notices wait until they end.
 *
 * Texts to the team are no customer's: no contact, no conversation, no per-recipient or form
 * limit, never refused by the monthly quota (they still show on the Messages page as "Team: …").
 */
import type { Database } from "bun:sqlite";
import { validationError, type AppError } from "../errors";
import { iso, type Clock } from "../lib/clock";
import type { Lifecycle } from "../lib/lifecycle";
import type { Logger } from "../lib/log";
import type { FieldError } from "../domain/submission";
import { normalizePhone } from "../domain/phone";
import { isValidQuietHours } from "../domain/quiet-hours";
import { noticeEmail, noticeText, type NoticeItem } from "../domain/team-notice";
import { labelledValues, requestPreview } from "../domain/submission-values";
import { smsInfo } from "../domain/sms-encoding";
import type { Sequence } from "../lib/seq";
import { newQueuedRow, queueEntryOf, sendTime, type Sending } from "./sending";
import type { MessageRow } from "../db/stores/messages/rows";
import {
  deleteNotices,
  findNotificationPrefs,
  lastNoticeSentAt,
  markNoticesAttempted,
  markNoticesSent,
  pendingNotices,
  replySubject,
  submissionSubject,
  sweepSentNotices,
  teamMemberByPhone,
  updateNotificationPrefs,
  type NotificationPrefs,
  type PendingNotice,
  type TeamNoticeChannel,
} from "../db/stores/team-notices";

/** How often the notifier looks for notices to send. */
export const NOTICE_INTERVAL_MS = 5_000;
/** After a text (or e-mail) to a person, the next one waits this long: what arrives meanwhile is batched (--team-notice-gap). */
export const NOTICE_GAP_MS = 2 * 60_000;
/** An e-mail attempted this long ago and never marked sent (a crash, a hung server) is tried again. */
export const EMAIL_RETRY_AFTER_MS = 10 * 60_000;
/** Sent notices are kept this long (what was told, for support), then deleted. */
export const SENT_NOTICE_KEEP_MS = 30 * 86_400_000;
/** Notices read per look. */
const NOTICE_BATCH = 500;

/** What a person chose, as the API answers it. */
export interface NotificationSettings {
  phoneNumber: string | null;
  notifications: { submissions: boolean; replies: boolean; email: boolean };
  quietHours: { start: string; end: string } | null;
  /** Whether the operator set up SMTP (e-mail can be chosen). */
  emailAvailable: boolean;
}

/** Sends one e-mail (nodemailer over the operator's SMTP in production; tests point it at a local server). */
export type MailSender = (mail: { to: string; subject: string; text: string; messageId: string }) => Promise<void>;

export class TeamNoticeService {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | null = null;
  private sweptAt = 0;

  constructor(
    private readonly sqlite: Database,
    private readonly clock: Clock,
    /** A notice is a text to a team member's own mobile: no contact, so no opt-out or consent to ask; it goes through the one sending path's write and queue steps. */
    private readonly sending: Sending,
    private readonly seq: Sequence,
    /** The dashboard's origin for links (the server address: flag > setting > the listener's). */
    private readonly origin: () => string,
    private readonly logger: Logger,
    /** null: no SMTP configured (e-mail cannot be chosen). */
    private readonly mail: MailSender | null,
    private readonly gapMs: number = NOTICE_GAP_MS,
  ) {}

  settings(userId: string): NotificationSettings {
    const p = findNotificationPrefs(this.sqlite, userId);
    return toSettings(p ?? { phoneNumber: null, notifySubmissions: false, notifyReplies: false, notifyEmail: false, quietStart: null, quietEnd: null }, this.mail !== null);
  }

  /**
   * Changes the signed-in person's choices; fields not given stay. `phoneNumber` is read as the
   * webhook reads one (E.164, or a US national number); null removes it (and with it the texts).
   */
  update(userId: string, body: unknown): NotificationSettings {
    const errors: FieldError[] = [];
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw validationError([{ field: "body", message: "the body must be a JSON object", requirement: "object", provided: null }]);
    const b = body as Record<string, unknown>;
    for (const k of Object.keys(b)) {
      if (!["phoneNumber", "notifications", "quietHours"].includes(k)) errors.push({ field: k.slice(0, 50), message: `unknown field '${k.slice(0, 50)}'; allowed: phoneNumber, notifications, quietHours`, requirement: "phoneNumber, notifications, quietHours", provided: k.slice(0, 50) });
    }
    const cur = findNotificationPrefs(this.sqlite, userId);
    if (!cur) throw validationError([{ field: "body", message: "Only a person signed in with their e-mail and password has a profile", requirement: "a person's session" }]);
    const next: NotificationPrefs = { ...cur };
    if (b.phoneNumber !== undefined) {
      if (b.phoneNumber === null || b.phoneNumber === "") next.phoneNumber = null;
      else {
        const p = normalizePhone(b.phoneNumber, { label: "phoneNumber", visitorLabel: "Your mobile number" });
        if (!p.ok) errors.push({ field: "phoneNumber", message: p.visitor ?? p.message, requirement: p.requirement, provided: String(b.phoneNumber).slice(0, 100) });
        else next.phoneNumber = p.e164;
      }
    }
    if (b.notifications !== undefined) {
      const n = b.notifications;
      if (typeof n !== "object" || n === null || Array.isArray(n)) errors.push({ field: "notifications", message: "notifications must be an object such as {\"submissions\": true, \"replies\": false}", requirement: "object", provided: n });
      else {
        for (const [k, v] of Object.entries(n)) {
          if (!["submissions", "replies", "email"].includes(k)) errors.push({ field: `notifications.${k.slice(0, 50)}`, message: `unknown field; allowed: submissions, replies, email`, requirement: "submissions, replies, email", provided: k.slice(0, 50) });
          else if (typeof v !== "boolean") errors.push({ field: `notifications.${k}`, message: `notifications.${k} must be true or false`, requirement: "boolean", provided: v });
          else if (k === "submissions") next.notifySubmissions = v;
          else if (k === "replies") next.notifyReplies = v;
          else next.notifyEmail = v;
        }
      }
    }
    if (b.quietHours !== undefined) {
      if (b.quietHours === null) (next.quietStart = null), (next.quietEnd = null);
      else if (!isValidQuietHours(b.quietHours)) errors.push({ field: "quietHours", message: "quietHours must be {\"start\": \"HH:MM\", \"end\": \"HH:MM\"} (24-hour clock, start and end differ) or null", requirement: "{start, end} or null", provided: b.quietHours });
      else (next.quietStart = b.quietHours.start), (next.quietEnd = b.quietHours.end);
    }
    if (next.notifyEmail && this.mail === null && b.notifications !== undefined && (b.notifications as Record<string, unknown>).email === true) {
      errors.push({ field: "notifications.email", message: "E-mail needs the server's SMTP settings (--smtp-url); ask whoever runs the server", requirement: "SMTP configured", provided: true });
    }
    if ((next.notifySubmissions || next.notifyReplies) && next.phoneNumber === null && !(next.notifyEmail && this.mail !== null)) {
      errors.push({ field: "phoneNumber", message: "Give your mobile number to be told by text", requirement: "a mobile number", provided: null });
    }
    if (errors.length) throw validationError(errors);
    updateNotificationPrefs(this.sqlite, userId, next, iso(this.clock()));
    return toSettings(next, this.mail !== null);
  }

  /** Whether a number is one of the account's team (their texts are not a customer's). */
  teamMember(accountId: string, phone: string): { id: string; name: string } | null {
    return teamMemberByPhone(this.sqlite, accountId, phone);
  }

  /** One look: texts for everyone due, then e-mails. Never two at once. */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        this.sendTexts();
        await this.sendEmails();
        const now = this.clock();
        if (now - this.sweptAt >= 3_600_000) {
          this.sweptAt = now;
          sweepSentNotices(this.sqlite, iso(now - SENT_NOTICE_KEEP_MS));
        }
      } catch (err) {
        this.logger.error("team notices failed", { error: String((err as Error)?.message ?? err) });
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  lifecycle(): Lifecycle {
    return {
      name: "team-notices",
      start: () => {
        this.timer = setInterval(() => void this.tick(), NOTICE_INTERVAL_MS);
        this.timer.unref?.();
      },
      stop: async () => {
        clearInterval(this.timer);
        await this.running;
      },
    };
  }

  /** Pending notices grouped by person, those who may be told now (out of quiet hours, past the gap). */
  private due(channel: TeamNoticeChannel, now: number): PendingNotice[][] {
    const byUser = new Map<string, PendingNotice[]>();
    for (const n of pendingNotices(this.sqlite, channel, NOTICE_BATCH)) {
      let l = byUser.get(n.userId);
      if (!l) byUser.set(n.userId, (l = []));
      l.push(n);
    }
    const out: PendingNotice[][] = [];
    for (const list of byUser.values()) {
      const u = list[0];
      // The member's own quiet hours, by the sending path's rule (services/sending/admit.ts).
      if (u.quietStart && u.quietEnd && sendTime({ at: now, timezone: u.timeZone ?? "UTC", hours: { start: u.quietStart, end: u.quietEnd } }) > now) continue;
      const last = lastNoticeSentAt(this.sqlite, u.userId, channel);
      if (last !== null && now - Date.parse(last) < this.gapMs) continue;
      out.push(list);
    }
    return out;
  }

  /** The notices' items in words; notices whose cause is gone (a deleted contact) are dropped. */
  private items(list: PendingNotice[]): { items: NoticeItem[]; gone: number[] } {
    const items: NoticeItem[] = [];
    const gone: number[] = [];
    for (const n of list) {
      const s = n.kind === "submission" ? submissionSubject(this.sqlite, n.refId) : replySubject(this.sqlite, n.refId);
      if (!s) {
        gone.push(n.id);
        continue;
      }
      const values = n.kind === "submission" ? s.values : null;
      const given = values ? [values.firstName, values.lastName].filter((x) => typeof x === "string" && x).join(" ") : "";
      const stored = [s.firstName, s.lastName].filter(Boolean).join(" ");
      const who = given || stored || s.phone || "Someone";
      const preview = n.kind === "submission" ? requestPreview(labelledValues(s.formFields, values)) : (s.body ?? "");
      items.push({
        kind: n.kind,
        who,
        formName: s.formName,
        preview,
        path: n.kind === "submission" ? `/inbox/${n.refId}` : `/conversations/${s.contactId}`,
        optedOut: s.suppressed === "opted-out",
      });
    }
    return { items, gone };
  }

  private sendTexts(): void {
    const now = this.clock();
    for (const list of this.due("text", now)) {
      const u = list[0];
      if (!u.phoneNumber) {
        // The number was removed since: nothing can be texted.
        deleteNotices(this.sqlite, list.map((n) => n.id));
        continue;
      }
      const { items, gone } = this.items(list);
      let row: MessageRow | null = null;
      this.sqlite.transaction(() => {
        if (gone.length) deleteNotices(this.sqlite, gone);
        const ids = list.filter((n) => !gone.includes(n.id)).map((n) => n.id);
        if (ids.length === 0) return;
        const content = noticeText(items, this.origin());
        const info = smsInfo(content);
        const at = iso(now);
        row = newQueuedRow({
          account_id: u.accountId,
          contact_id: null,
          content,
          recipient_phone: u.phoneNumber!,
          recipient_name: `Team: ${u.userName}`,
          priority: "high",
          scheduled_for: at,
          metadata: JSON.stringify({ messageLength: content.length, variablesUsed: [], source: "team", notices: ids.length, encoding: info.encoding, segments: info.segments }),
          seq: this.seq.next(),
          created_at: at,
        });
        this.sending.write(row, null);
        // Only the notices still pending are this text's: none is ever told twice.
        if (markNoticesSent(this.sqlite, ids, at, row.id) !== ids.length) throw new Error("team notices changed meanwhile");
      })();
      if (row) this.sending.queued([queueEntryOf(row)]);
    }
  }

  private async sendEmails(): Promise<void> {
    const now = this.clock();
    if (this.mail === null) {
      // No SMTP (any more): e-mail notices cannot go; they are dropped rather than piling up.
      const left = pendingNotices(this.sqlite, "email", NOTICE_BATCH);
      if (left.length) deleteNotices(this.sqlite, left.map((n) => n.id));
      return;
    }
    for (const list of this.due("email", now)) {
      // One still being handed over (another look, or before a crash not long ago) waits.
      const fresh = list.filter((n) => n.attemptedAt === null || now - Date.parse(n.attemptedAt) >= EMAIL_RETRY_AFTER_MS);
      if (fresh.length === 0) continue;
      const { items, gone } = this.items(fresh);
      if (gone.length) deleteNotices(this.sqlite, gone);
      const ids = fresh.filter((n) => !gone.includes(n.id)).map((n) => n.id);
      if (ids.length === 0) continue;
      const u = fresh[0];
      const { subject, text } = noticeEmail(items, this.origin(), u.businessName);
      markNoticesAttempted(this.sqlite, ids, iso(now));
      try {
        await this.mail({ to: u.email, subject, text, messageId: `<team-notice-${ids[0]}-${ids[ids.length - 1]}@textwire>` });
        markNoticesSent(this.sqlite, ids, iso(this.clock()), null);
      } catch (err) {
        // Tried again at the next look past the gap.
        markNoticesAttempted(this.sqlite, ids, null);
        this.logger.warn("notification e-mail not sent", { error: String((err as AppError | Error)?.message ?? err).slice(0, 200) });
      }
    }
  }
}

function toSettings(p: NotificationPrefs, emailAvailable: boolean): NotificationSettings {
  return {
    phoneNumber: p.phoneNumber,
    notifications: { submissions: p.notifySubmissions, replies: p.notifyReplies, email: p.notifyEmail },
    quietHours: p.quietStart && p.quietEnd ? { start: p.quietStart, end: p.quietEnd } : null,
    emailAvailable,
  };
}
