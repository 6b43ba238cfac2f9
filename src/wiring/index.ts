/**
 * `createDeps`: the server's parts, built once per server (and per test) in dependency order
 * (docs/architecture.md, "Wiring"). Each module here builds one part from the parts before it:
 *
 *   core → accounts → addresses → phones' capacity → messaging → SMSGate's API → devices → operations
 *
 * and ./lifecycle.ts declares the start and stop order once. No part is filled in after it is
 * built: where two parts read each other, one is given a callback that asks the other only once
 * the server runs (the queue's estimate, the replication and backup settings), or subscribes to
 * the other's announcements (applied submissions).
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import type { AppDeps, OutboundOptions } from "../deps";
import { buildCore } from "./core";
import { buildAccounts } from "./accounts";
import { buildAddresses } from "./addresses";
import { buildDevices, buildPhoneCapacity } from "./phones";
import { buildMessaging } from "./messaging";
import { buildSmsgate } from "./smsgate";
import { buildOperations } from "./operations";
import { startStopOrder } from "./lifecycle";
import { deviceGauges, intakeGauges } from "./gauges";
import { DashboardOverviewService } from "../services/dashboard-overview";

export function createDeps(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger, outbound: OutboundOptions = {}): AppDeps {
  const core = buildCore(sqlite, config, clock, logger, {
    // Every estimatedDelivery comes from the phones' real capacity (services/sending-estimate.ts).
    estimate: (accountId, position, scheduledFor, now) => phones.estimator.estimate(accountId, position, scheduledFor, now),
    routes: () => deps.routes(),
  });
  const accounts = buildAccounts(sqlite, core.db, config, clock, core.leases);
  const addresses = buildAddresses(sqlite, config, clock, logger);
  const phones = buildPhoneCapacity(sqlite, config, clock, core, accounts.accountSettings);
  const messaging = buildMessaging(sqlite, config, clock, logger, core, accounts, addresses, phones);
  const smsgate = buildSmsgate(sqlite, config, clock, logger, core, { messages: messaging.messages, accounts: accounts.accounts, phoneEvents: phones.events, resolve: outbound.resolve });
  const devices = buildDevices(sqlite, config, clock, logger, core, phones, messaging.messages, {
    // SMSGate's sms:received becomes an inbound message.
    inbound: messaging.inbound,
    smsgateSettings: smsgate.smsgateSettings,
    publicAddress: (origin) => addresses.serverAddress.publicAddress(origin),
    smsgateHandedOut: (id, now) => smsgate.thirdParty.handedOut(id, now),
    smsgateRequested: (id) => smsgate.thirdParty.requested(id),
  });
  const ops = buildOperations(sqlite, config, clock, logger, core, accounts.forms, outbound);

  // Applied submissions wake the phones waiting for work and the event dispatcher.
  core.intake.onApplied((accountIds, emitted) => {
    for (const id of accountIds) core.leases.notify(id);
    // Applied submissions of a form with an automation wait in its inbox (migration 0030).
    messaging.automations.sweep();
    if (emitted) {
      core.events.needsFanout = true;
      core.events.wake();
    }
  });

  const { metrics } = core;
  metrics.addGauges(() => ops.replication.metricsLines());
  if (core.stageTiming) {
    const timing = core.stageTiming;
    metrics.addGauges(() => timing.lines());
  }
  metrics.describe("textwire_device_messages_total", "Messages phones reported, by device id and result (sent, failed)");
  metrics.describe("textwire_device_reports_refused_total", "Items of phones' state reports refused, by reason (invalid, unknown_message, not_holder); nothing changed");
  metrics.addGauges(() => deviceGauges(devices));
  metrics.addGauges(() => intakeGauges(core.intake));

  const deps: AppDeps = {
    config,
    clock,
    logger,
    sqlite,
    db: core.db,
    ...accounts,
    contacts: messaging.contacts,
    exports: ops.exports,
    queue: core.queue,
    seq: core.seq,
    apiLimiter: core.apiLimiter,
    sessionLimiter: core.sessionLimiter,
    webhookLimiter: core.webhookLimiter,
    webhookIpLimiter: core.webhookIpLimiter,
    spam: core.spam,
    captcha: core.captcha,
    writer: core.writer,
    writeGate: core.writeGate,
    quota: core.quota,
    submissions: messaging.submissions,
    testSubmissions: messaging.testSubmissions,
    intake: core.intake,
    leases: core.leases,
    messages: messaging.messages,
    ...smsgate,
    analytics: ops.analytics,
    devices,
    events: core.events,
    dispatcher: ops.dispatcher,
    eventEndpoints: ops.eventEndpoints,
    inbound: messaging.inbound,
    submissionInbox: messaging.submissionInbox,
    teamNotices: messaging.teamNotices,
    keywordReplies: messaging.keywordReplies,
    conversations: messaging.conversations,
    broadcasts: messaging.broadcasts,
    automations: messaging.automations,
    changes: core.changes,
    messageFeed: messaging.messageFeed,
    startedAt: clock(),
    lifecycle: startStopOrder(sqlite, core, accounts, addresses, messaging, smsgate, devices, ops),
    observers: [metrics.observe],
    metrics,
    // Set by createApp, once the routes are registered.
    routes: () => [],
    stageTiming: core.stageTiming,
    replication: ops.replication,
    replicationSettings: ops.replicationSettings,
    ...addresses,
    backupSchedule: ops.backupSchedule,
    dashboardOverview: new DashboardOverviewService(messaging.messages, ops.analytics, devices),
  };
  return deps;
}
