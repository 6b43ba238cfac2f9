/**
 * E-mail through the operator's SMTP server (--smtp-url), for the team's notifications. nodemailer
 * (pinned) speaks SMTP, STARTTLS, SMTPS and AUTH; writing that by hand would be a protocol
 * implementation to maintain (docs/api-decisions.md, "The owner hears back", the team told).
 */
import nodemailer from "nodemailer";
import type { MailSender } from "./team-notices";

/** How long one SMTP conversation may take before it is given up (and retried later). */
export const SMTP_TIMEOUT_MS = 30_000;

export function smtpSender(url: string, from: string | undefined): MailSender {
  // The URL's settings, with nodemailer's timeouts (ms) where it sets none: connecting, the
  // greeting, and a silent socket.
  const transport = nodemailer.createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS } as Parameters<typeof nodemailer.createTransport>[0]);
  const host = new URL(url).hostname;
  const sender = from ?? `textwire@${host.split(".").slice(-2).join(".") || host}`;
  return async (m) => {
    await transport.sendMail({ from: sender, to: m.to, subject: m.subject, text: m.text, messageId: m.messageId });
  };
}
