/**
 * The services that take in submissions and put texts in the queue, and those that read them
 * (docs/architecture.md, "Wiring"): messages, the webhook's submissions and the dashboard's test
 * submission, contacts and conversations, keyword replies, inbound texts, broadcasts,
 * automations, team notices and the live message feed. Built after the core, the accounts, the
 * addresses and the phones' capacity, which they read.
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { AppError } from "../errors";
import { ContactService } from "../services/contacts";
import { SubmissionService } from "../services/submissions";
import { TestSubmissions } from "../services/submissions/test";
import { waitingOf } from "../services/waiting";
import { heldByQuietHours } from "../services/quiet-wait";
import { MessageService } from "../services/messages";
import { MessageListing } from "../services/message-listing";
import { MessageStatusChanges } from "../services/message-status";
import { ManualMessages } from "../services/manual-messages";
import { InboundService } from "../services/inbound";
import { SubmissionInboxService } from "../services/submission-inbox";
import { TeamNoticeService } from "../services/team-notices";
import { smtpSender } from "../services/smtp-mail";
import { KeywordReplyService } from "../services/keyword-replies";
import { ConversationService } from "../services/conversations";
import { BroadcastService } from "../services/broadcasts";
import { AutomationService } from "../services/automations";
import { MessageFeed } from "../services/message-feed";
import type { Core } from "./core";
import type { Stores } from "./stores";
import type { Accounts } from "./accounts";
import type { Addresses } from "./addresses";
import type { PhoneCapacity } from "./phones";

export type Messaging = ReturnType<typeof buildMessaging>;

export function buildMessaging(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger, core: Core, stores: Stores, a: Accounts, addresses: Addresses, phones: PhoneCapacity) {
  const { queue, seq, leases, sending, quota, writer, changes } = core;
  const submissions = new SubmissionService(sqlite, clock, writer, queue, seq, quota, config.sendRatePerMinute, leases, core.intake, {
    formLimiter: core.webhookLimiter,
    ipLimiter: core.webhookIpLimiter,
    formLimitPerMinute: config.webhookLimitPerMinute,
    captcha: core.captcha,
    spam: core.spam,
    metrics: () => core.metrics,
    timing: core.stageTiming,
  }, { submissions: stores.submissions, idempotency: stores.idempotency, intake: stores.intake });
  // Why a queued text waits, from the phones' real capacity (services/waiting.ts).
  const parts = {
    listing: new MessageListing(sqlite, stores.messages),
    status: new MessageStatusChanges(sqlite, clock, queue, leases, changes, stores.messages),
    manual: new ManualMessages(sqlite, clock, queue, seq, sending, () => config.sendRatePerMinute, stores.messages, quota),
  };
  const messages = new MessageService(sqlite, leases, changes, stores.messages, parts, (row) => {
    const now = clock();
    return waitingOf(
      phones.sending, phones.fleet(row.account_id),
      { accountId: row.account_id, recipient: row.recipient_phone, content: row.content, scheduledFor: Date.parse(row.scheduled_for), quiet: Date.parse(row.scheduled_for) > now && heldByQuietHours(sqlite, row) },
      now, () => queue.position(row.id, now, config.sendRatePerMinute)?.estimatedDelivery ?? now,
    );
  });
  const testSubmissions = new TestSubmissions(
    clock,
    (accountId, formId) => {
      // The account's own form (FORM_NOT_FOUND otherwise), read as the webhook reads it.
      const form = submissions.findForm(a.forms.get(accountId, formId).webhookToken);
      if (!form || form.accountId !== accountId) throw new AppError("FORM_NOT_FOUND", { details: { formId } });
      return form;
    },
    messages,
  );
  const keywordReplies = new KeywordReplyService(sqlite, clock, a.accountSettings, seq, quota);
  const contacts = new ContactService(sqlite, clock, stores.contactLists, a.forms, (ids) => leases.withdraw(ids), core.writeGate, changes);
  // What a broadcast's confirmation says of the phones (services/sending-estimate.ts).
  const broadcasts = new BroadcastService(sqlite, clock, sending, seq, leases, quota, a.accounts, writer, logger, changes, (accountId) => {
    const f = phones.estimator.summary(accountId);
    const ahead = queue.size(accountId);
    return {
      phonesConnected: f.phonesConnected, phones: f.phones, basis: f.basis, ratePerMinute: Math.max(1, Math.round(f.textsPerHour / 60)),
      durationMs: (n) => phones.estimator.duration(accountId, ahead, n).ms,
    };
  });
  // An automation start says how long the phones take over its first texts (services/sending-estimate.ts).
  const automations = new AutomationService(sqlite, clock, sending, seq, leases, quota, a.accounts, writer, logger, changes, (accountId, n) => phones.estimator.textsTime(accountId, queue.size(accountId), n));
  // A start's first texts: how long the phones take over them, behind the queue (services/sending-estimate.ts).
  return {
    submissions,
    messages,
    testSubmissions,
    keywordReplies,
    contacts,
    conversations: new ConversationService(sqlite, clock, contacts),
    submissionInbox: new SubmissionInboxService(sqlite, clock),
    inbound: new InboundService(sqlite, clock, a.accountSettings, sending, seq, leases, quota, changes, keywordReplies),
    broadcasts,
    automations,
    // The team's notices: links to the dashboard at the server address (else the port listened on).
    teamNotices: new TeamNoticeService(
      sqlite,
      clock,
      sending,
      seq,
      () => addresses.serverAddress.publicAddress(`http://localhost:${addresses.httpsStatus.listening?.port ?? config.port}`).url,
      logger,
      config.smtpUrl ? smtpSender(config.smtpUrl, config.smtpFrom) : null,
      config.teamNoticeGapMs,
    ),
    messageFeed: new MessageFeed(clock, changes),
  };
}
