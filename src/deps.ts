import { AppError } from "./errors";
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "./config";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/log";
import { wrapDb, type Db } from "./db/open";
import { AccountService } from "./services/accounts";
import { FormService } from "./services/forms";
import { ContactService } from "./services/contacts";
import { ExportService } from "./services/exports";
import { MessageQueue } from "./queue/priority-queue";
import { ApiLimiter, SessionLimiter } from "./limits/api-limiter";
import { Sequence } from "./lib/seq";
import { largestMessageSeq } from "./db/database-info";
import { Metrics } from "./services/metrics";
import { SCHEMA_VERSION } from "./db/migrate";
import type { RouteInfo } from "./http/openapi";
import { WebhookLimiter } from "./limits/api-limiter";
import { GroupCommitWriter } from "./db/group-commit";
import { WriteGate } from "./db/write-gate";
import { MonthlyQuota } from "./services/quota";
import { SubmissionService, IDEMPOTENCY_SWEEP_MS } from "./services/submissions";
import { TestSubmissions } from "./services/submissions/test";
import { queueSync } from "./services/queue-sync";
import { waitingOf } from "./services/waiting";
import { LeaseService } from "./services/leases";
import { MessageService } from "./services/messages";
import { ThirdPartyMessages } from "./services/thirdparty-messages";
import { ThirdPartyWebhooks } from "./services/thirdparty-webhooks";
import { SmsgateTokens } from "./services/smsgate-tokens";
import { AnalyticsService } from "./services/analytics";
import { DeviceService } from "./services/devices";
import { EventOutbox, registerOutbox } from "./services/events";
import { EventDispatcher } from "./services/event-dispatcher";
import { resolveHost, type HostResolver } from "./services/outbound-http";
import { EventEndpointService } from "./services/event-endpoints";
import { QueueWatch } from "./services/queue-watch";
import { SpamCounter } from "./services/spam";
import { CaptchaVerifier } from "./services/captcha";
import { InboundService } from "./services/inbound";
import { SubmissionInboxService } from "./services/submission-inbox";
import { TeamNoticeService } from "./services/team-notices";
import { smtpSender } from "./services/smtp-mail";
import { SmsgateSettingsService } from "./services/smsgate-settings";
import { AccountSettingsService } from "./services/account-settings";
import { KeywordReplyService } from "./services/keyword-replies";
import { ConversationService } from "./services/conversations";
import { BroadcastService } from "./services/broadcasts";
import { AutomationService } from "./services/automations";
import { SessionService } from "./services/sessions";
import { PeopleService } from "./services/people";
import { SetupService } from "./services/setup";
import { MessageFeed } from "./services/message-feed";
import { ApiKeyService } from "./services/api-keys";
import { SubmissionIntake } from "./services/intake/intake";
import { intakeStore } from "./db/stores/intake";
import { StageTiming } from "./lib/stage-timing";
import type { Lifecycle } from "./lib/lifecycle";
import { publicCertificateFor, PublicCertificateService } from "./services/public-certificate";
import type { Observer } from "./lib/request-observer";
import { ReplicationSupervisor } from "./services/replication";
import { emitReplicationStalled, ReplicationSettingsService } from "./services/replication-settings";
import { DEFAULT_BACKUP_EVERY_MS } from "./services/backups";
import { ServerAddressService } from "./services/server-address";
import { BackupScheduleService } from "./services/backup-schedule";
import { PlainHttpPosts } from "./services/plain-http-posts";
import { HttpsStatusService } from "./services/https-status";
import { Checkpointer } from "./db/checkpointer";
import { Changes } from "./lib/changes";

export type { Lifecycle };

/** Everything a request handler may use; built once per server (and per test). */
export interface AppDeps {
  config: ServeConfig;
  clock: Clock;
  logger: Logger;
  sqlite: Database;
  db: Db;
  accounts: AccountService;
  forms: FormService;
  contacts: ContactService;
  exports: ExportService;
  queue: MessageQueue;
  /** Creation order of messages (queue tiebreak). */
  seq: Sequence;
  apiLimiter: ApiLimiter;
  /** Per dashboard session, instead of the key's API limit (docs/api-decisions.md, "The dashboard never locks itself out; honest status"). */
  sessionLimiter: SessionLimiter;
  /** Per-form webhook token buckets (--webhook-limit-per-minute). */
  webhookLimiter: WebhookLimiter;
  /** Per client IP per form (settings.ipLimitPerMinute), keyed "formId ip". */
  webhookIpLimiter: WebhookLimiter;
  /** Honeypot catches per form (stats spamBlocked). */
  spam: SpamCounter;
  captcha: CaptchaVerifier;
  /** Group-commit writer: batches request writes into one durable transaction. */
  writer: GroupCommitWriter;
  /** Closed by the checkpoint thread while it needs writers to pause (src/db/write-gate.ts). */
  writeGate: WriteGate;
  /** Monthly message quota counts per account. */
  quota: MonthlyQuota;
  submissions: SubmissionService;
  /** The dashboard's "Send a test submission": checks and writes nothing unless asked to send. */
  testSubmissions: TestSubmissions;
  /** The webhook's intake: its applier Worker and the read barrier (`intake.barrier()`). */
  intake: SubmissionIntake;
  /** Device polling: leases, send-rate cap, long-poll waiters (`leases.notify(accountId)` after an enqueue). */
  leases: LeaseService;
  messages: MessageService;
  /** Messages of SMSGate's third-party API (/3rdparty/v1): send, state, list, cancel, expiry. */
  thirdParty: ThirdPartyMessages;
  /** SMSGate's /3rdparty/v1/webhooks: outbound endpoints of format "smsgate". */
  thirdPartyWebhooks: ThirdPartyWebhooks;
  analytics: AnalyticsService;
  /** Phones: SMSGate mobile API, device registry, per-device limits, SSE events. */
  devices: DeviceService;
  /** Outbound events: the outbox (`emitEvent(sqlite, …)` writes through it), its dispatcher and the endpoints. */
  events: EventOutbox;
  dispatcher: EventDispatcher;
  /** Outbound event endpoints (/v1/webhook-endpoints): the receivers of outbound events. */
  eventEndpoints: EventEndpointService;
  /** Texts the phones received: `deps.inbound.receive(accountId, {from, body, receivedAt, deviceId?, externalId?})`. */
  inbound: InboundService;
  /** Submissions as the team reads them (the inbox, GET /v1/submissions, the CSV export). */
  submissionInbox: SubmissionInboxService;
  /** What the team is told (PATCH /v1/people/me) and the notifier that texts or e-mails them. */
  teamNotices: TeamNoticeService;
  /** Keyword lists and replies per account (GET/PUT /v1/account/settings). */
  accountSettings: AccountSettingsService;
  /** The owner's automatic answers to keywords such as HOURS (/v1/keyword-replies). */
  keywordReplies: KeywordReplyService;

  /** The settings document of SMSGate's third-party API (/3rdparty/v1/settings), mapped onto the phones' settings. */
  smsgateSettings: SmsgateSettingsService;
  /** SMSGate's short-lived JWTs (/3rdparty/v1/auth/token), usable wherever a key is on that API. */
  smsgateTokens: SmsgateTokens;
  conversations: ConversationService;
  broadcasts: BroadcastService;
  /** Automations: runs started by submissions (and POST /start), stopped by replies, opt-outs, statuses. */
  automations: AutomationService;
  /** Dashboard sign-ins (cookie sessions opened with an API key). */
  sessions: SessionService;
  people: PeopleService;
  setup: SetupService;
  /**
   * What the services changed, announced after commit (message, contact, device): the live feed,
   * the queue watcher and the phones' event streams listen (`deps.changes.on("message", …)`).
   */
  changes: Changes;
  /** Message changes for the dashboard's live Messages page (listens to `changes`). */
  messageFeed: MessageFeed;
  /** The account's own API keys (dashboard Settings). */
  apiKeys: ApiKeyService;
  startedAt: number;
  lifecycle: Lifecycle[];
  /** Called once per finished request (metrics). */
  observers: Observer[];
  /** Prometheus counters; `deps.metrics.count(name, labels)` for events of your own. */
  metrics: Metrics;
  /** The app's registered routes (set by createApp): the OpenAPI document and metrics labels. */
  routes: () => RouteInfo[];
  /** Per-stage sums of the webhook path; null unless --stage-timing (every hook is then one check). */
  stageTiming: StageTiming | null;
  /** Litestream, supervised (off until --replicate or the dashboard setting gives an address). */
  replication: ReplicationSupervisor;
  /** The replica address set from the dashboard (GET/PUT /v1/admin/replication). */
  replicationSettings: ReplicationSettingsService;
  /** The address forms and phones are given: `deps.serverAddress.publicAddress(origin)` (flag > setting > request). */
  serverAddress: ServerAddressService;
  /** Scheduled backups: the flags' or the dashboard's (GET/PUT /v1/admin/backups). */
  backupSchedule: BackupScheduleService;
  /** Forms still posted to over plain HTTP (recorded by the redirect listener, flushed every few seconds). */
  plainHttpPosts: PlainHttpPosts;
  /** HTTPS on or off, its ports and the certificate's expiry (GET /v1/admin/https). */
  httpsStatus: HttpsStatusService;
  /** The public certificate from an ACME CA (--domain, or Settings → "Get a certificate"). */
  publicCertificate: PublicCertificateService;
}

/** How outbound events find and trust their receivers; tests stub DNS and add their own CA. */
export interface OutboundOptions {
  resolve?: HostResolver;
  /** Extra trusted CA certificates (PEM) for https receivers. */
  ca?: string;
  /** Per-attempt time limit; DELIVERY_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
}

export function createDeps(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger, outbound: OutboundOptions = {}): AppDeps {
  const db = wrapDb(sqlite);
  // Boot applies what the last run left in the intake before anything reads messages.
  SubmissionIntake.drain(sqlite, logger);
  const intake = new SubmissionIntake(sqlite, config.db, logger, config.sqliteCacheMb);
  intake.guardTransactions(sqlite);
  const queue = new MessageQueue();
  const seq = new Sequence(largestMessageSeq(sqlite));
  const writeGate = new WriteGate();
  const writer = new GroupCommitWriter(sqlite, logger, writeGate, { mode: config.commitSync });
  writer.lockListeners.push((wanted) => intake.writerWantsLock(wanted));
  writer.beforeLock = () => intake.applierTurnEnded();
  // A failed fsync of the log is not retried: after one, the kernel may have dropped the pages it
  // could not write, so a later flush could report success over a hole and lose what it then
  // acknowledges (PostgreSQL stops for the same reason). Stop at once; a restart (systemd, Docker)
  // recovers from what is on disk — nothing acknowledged was lost.
  writer.onSyncFailure = (err) => {
    logger.error("the disk failed to save the database; stopping so that nothing acknowledged can be lost — check the disk, then start again", { error: err.message });
    process.exit(74);
  };
  intake.writeGate = writeGate.shared;
  const quota = new MonthlyQuota(sqlite, clock);
  const appliedSeq = intakeStore(sqlite).appliedSeq;
  quota.unapplied = (accountId, monthStart) => intake.pendingMessages(accountId, monthStart, appliedSeq());
  const changes = new Changes();
  const leases = new LeaseService(sqlite, clock, queue, config, changes);
  const webhookLimiter = new WebhookLimiter({ clock, perMinute: config.webhookLimitPerMinute });
  const webhookIpLimiter = new WebhookLimiter({ clock });
  const captcha = new CaptchaVerifier(config.captchaVerifyUrls);
  const spam = new SpamCounter(sqlite, writer);
  const stageTiming = config.stageTiming ? new StageTiming() : null;
  const submissions = new SubmissionService(sqlite, clock, writer, queue, seq, quota, config.sendRatePerMinute, leases, intake, {
    formLimiter: webhookLimiter,
    ipLimiter: webhookIpLimiter,
    formLimitPerMinute: config.webhookLimitPerMinute,
    captcha,
    spam,
    metrics: () => deps.metrics,
    timing: stageTiming,
  });
  const forms = new FormService(db, clock);
  const messages = new MessageService(sqlite, clock, queue, seq, leases, () => config.sendRatePerMinute, changes, quota);
  const testSubmissions = new TestSubmissions(
    clock,
    (accountId, formId) => {
      // The account's own form (FORM_NOT_FOUND otherwise), read as the webhook reads it.
      const form = submissions.findForm(forms.get(accountId, formId).webhookToken);
      if (!form || form.accountId !== accountId) throw new AppError("FORM_NOT_FOUND", { details: { formId } });
      return form;
    },
    messages,
  );
  const events = new EventOutbox(sqlite);
  registerOutbox(sqlite, events);
  // Applied submissions wake the phones waiting for work and the event dispatcher.
  intake.onApplied = (accountIds, emitted) => {
    for (const id of accountIds) leases.notify(id);
    // Applied submissions of a form with an automation wait in its inbox (migration 0030).
    automations.sweep();
    if (emitted) {
      events.needsFanout = true;
      events.wake();
    }
  };
  const accountSettings = new AccountSettingsService(sqlite, clock);
  const keywordReplies = new KeywordReplyService(sqlite, clock, accountSettings, seq, quota);
  const contacts = new ContactService(sqlite, clock, forms, (ids) => leases.withdraw(ids), writeGate, changes);
  const accounts = new AccountService(sqlite, clock);
  const sessions = new SessionService(sqlite, clock, accounts);
  const people = new PeopleService(sqlite, clock, sessions, { authFailuresPerMinute: config.authFailuresPerMinute });
  const broadcasts = new BroadcastService(sqlite, clock, queue, seq, leases, quota, accounts, writer, logger, changes);
  const automations = new AutomationService(sqlite, clock, queue, seq, leases, quota, accounts, writer, logger, changes);
  let sweep: ReturnType<typeof setInterval> | undefined;
  const deps: AppDeps = {
    config,
    clock,
    logger,
    sqlite,
    db,
    accounts,
    forms,
    contacts,
    exports: new ExportService(sqlite, config.db, clock, logger),
    queue,
    seq,
    apiLimiter: new ApiLimiter({ clock }),
    sessionLimiter: new SessionLimiter({ clock }),
    webhookLimiter,
    webhookIpLimiter,
    spam,
    captcha,
    writer,
    writeGate,
    quota,
    submissions,
    testSubmissions,
    intake,
    leases,
    messages,
    analytics: new AnalyticsService(sqlite, forms),
    devices: undefined as unknown as DeviceService,
    thirdParty: undefined as unknown as ThirdPartyMessages,
    thirdPartyWebhooks: undefined as unknown as ThirdPartyWebhooks,

    smsgateSettings: undefined as unknown as SmsgateSettingsService,
    smsgateTokens: undefined as unknown as SmsgateTokens,
    events,
    dispatcher: undefined as unknown as EventDispatcher,
    eventEndpoints: new EventEndpointService(sqlite, clock, events, { allowPrivate: config.allowPrivateWebhookUrls, resolve: outbound.resolve ?? resolveHost }),
    accountSettings,
    conversations: new ConversationService(sqlite, clock, contacts),
    keywordReplies,
    submissionInbox: new SubmissionInboxService(sqlite, clock),
    teamNotices: undefined as unknown as TeamNoticeService,
    inbound: new InboundService(sqlite, clock, accountSettings, queue, seq, leases, quota, changes, keywordReplies),
    broadcasts,
    automations,
    sessions,
    people,
    setup: new SetupService(sqlite, clock, accounts, people),
    changes,
    messageFeed: new MessageFeed(clock, changes),
    apiKeys: new ApiKeyService(sqlite, accounts),
    startedAt: clock(),
    lifecycle: [
      queueSync(sqlite, queue),
      // Before the writer: stopped after it, so it applies the writer's last flush.
      intake,
      writer,
      {
        name: "idempotency-sweep",
        start() {
          submissions.sweepIdempotencyKeys();
          sweep = setInterval(() => submissions.sweepIdempotencyKeys(), IDEMPOTENCY_SWEEP_MS);
          sweep.unref?.();
        },
        stop() {
          clearInterval(sweep);
        },
      },
    ],
    observers: [],
    metrics: undefined as unknown as Metrics,
    routes: () => [],
    stageTiming,
    replication: undefined as unknown as ReplicationSupervisor,
    replicationSettings: undefined as unknown as ReplicationSettingsService,
    serverAddress: new ServerAddressService(sqlite, clock, config.publicUrl, () => deps.publicCertificate.publicUrl()),
    publicCertificate: publicCertificateFor(sqlite, clock, logger, config),
    backupSchedule: new BackupScheduleService(
      sqlite,
      clock,
      config.backupDir ? { dir: config.backupDir, everyMs: config.backupEveryMs ?? DEFAULT_BACKUP_EVERY_MS, keep: config.backupKeep } : undefined,
    ),
    plainHttpPosts: new PlainHttpPosts(sqlite, clock, logger),
    httpsStatus: new HttpsStatusService(config, clock),
  };
  deps.lifecycle.push(deps.plainHttpPosts.lifecycle());
  // The team's notices: links to the dashboard at the server address (else the port listened on).
  deps.teamNotices = new TeamNoticeService(
    sqlite,
    clock,
    queue,
    seq,
    leases,
    () => deps.serverAddress.publicAddress(`http://localhost:${deps.httpsStatus.listening?.port ?? config.port}`).url,
    logger,
    config.smtpUrl ? smtpSender(config.smtpUrl, config.smtpFrom) : null,
    config.teamNoticeGapMs,
  );
  deps.lifecycle.push(deps.teamNotices.lifecycle());
  deps.lifecycle.push(deps.publicCertificate.lifecycle());
  // Replication (docs/api-decisions.md, "Continuous replication with Litestream"): first in the
  // list (after the checkpointer, which server.ts puts before it), so Litestream is stopped after
  // every other part has written its last, and makes its final sync of all of it.
  deps.replicationSettings = new ReplicationSettingsService(sqlite, clock, config.replicate, () => deps.replication);
  deps.replication = new ReplicationSupervisor({
    dbPath: config.db,
    flagUrl: config.replicate,
    savedUrl: () => deps.replicationSettings.savedUrl(),
    logger,
    clock,
    maxCheckpointPages: Checkpointer.litestreamMaxPages(),
    onStalled: (notice) => emitReplicationStalled(sqlite, clock(), notice),
    heartbeat: () => deps.replicationSettings.heartbeat(),
  });
  deps.lifecycle.unshift(deps.replication);
  deps.metrics = new Metrics({ dbPath: config.db, queue, routes: () => deps.routes(), schemaVersion: SCHEMA_VERSION });
  deps.observers.push(deps.metrics.observe);
  deps.metrics.addGauges(() => deps.replication.metricsLines());
  writer.timing = deps.stageTiming;
  if (deps.stageTiming) {
    const timing = deps.stageTiming;
    deps.metrics.addGauges(() => timing.lines());
  }
  // The queue (rebuilt by queueSync, first in the list) is whole before leases are reloaded and
  // the lease sweeper starts.
  deps.lifecycle.push(leases.lifecycle());
  deps.devices = new DeviceService(sqlite, clock, leases, messages, config, () => deps.metrics, logger, queue, changes);
  deps.lifecycle.push(deps.devices.lifecycle());
  deps.broadcasts.phones = (accountId) => {
    const f = deps.devices.estimator.summary(accountId);
    const ahead = deps.queue.size(accountId);
    return {
      phonesConnected: f.phonesConnected, phones: f.phones, basis: f.basis, ratePerMinute: Math.max(1, Math.round(f.textsPerHour / 60)),
      durationMs: (n) => deps.devices.estimator.duration(accountId, ahead, n).ms,
    };
  };

  deps.thirdParty = new ThirdPartyMessages(sqlite, clock, queue, seq, leases, messages, quota, changes, logger);
  deps.lifecycle.push(deps.thirdParty.lifecycle());
  deps.devices.smsgateHandedOut = (id, now) => deps.thirdParty.handedOut(id, now);
  deps.devices.smsgateRequested = (id) => deps.thirdParty.requested(id);
  deps.devices.sending.settingsOf = (accountId) => deps.accountSettings.resolved(accountId).sending;
  deps.messages.waiting = (row) => {
    const now = clock();
    return waitingOf(
      deps.devices.sending, deps.devices.fleet(row.account_id),
      { accountId: row.account_id, recipient: row.recipient_phone, content: row.content, scheduledFor: Date.parse(row.scheduled_for), quiet: false },
      now, () => deps.queue.position(row.id, now, config.sendRatePerMinute)?.estimatedDelivery ?? now,
    );
  };
  // Every estimatedDelivery comes from the phones' real capacity (services/sending-estimate.ts).
  deps.queue.estimator = (accountId, position, scheduledFor, now) => deps.devices.estimator.estimate(accountId, position, scheduledFor, now);
  deps.thirdPartyWebhooks = new ThirdPartyWebhooks(sqlite, clock, events, deps.thirdParty, { allowPrivate: config.allowPrivateWebhookUrls, resolve: outbound.resolve ?? resolveHost });
  // SMSGate's sms:received becomes an inbound message.
  deps.devices.inbound = deps.inbound;
  deps.devices.publicAddress = (origin) => deps.serverAddress.publicAddress(origin);
  // The account's SMSGate settings document: over the phones' own settings, and announced to them.
  deps.smsgateSettings = new SmsgateSettingsService(sqlite, clock, (accountId) => deps.devices.events.emit(accountId, "SettingsUpdated", null), deps.thirdParty);
  deps.devices.smsgateSettings = deps.smsgateSettings;
  deps.smsgateTokens = new SmsgateTokens(sqlite, clock, deps.accounts, deps.thirdParty);
  deps.metrics.describe("textwire_device_messages_total", "Messages phones reported, by device id and result (sent, failed)");
  deps.metrics.describe("textwire_device_reports_refused_total", "Items of phones' state reports refused, by reason (invalid, unknown_message, not_holder); nothing changed");
  deps.metrics.addGauges(() => {
    const h = deps.devices.health();
    return [
      "# HELP textwire_devices_online Phones online (open event stream or a request within --device-offline-after)",
      "# TYPE textwire_devices_online gauge",
      `textwire_devices_online ${h.devicesOnline}`,
      "# HELP textwire_oldest_due_seconds Age of the oldest due queued message (0 when none)",
      "# TYPE textwire_oldest_due_seconds gauge",
      `textwire_oldest_due_seconds ${h.oldestDueSeconds ?? 0}`,
    ];
  });
  deps.metrics.addGauges(() => {
    const lag = intake.lagPercentiles();
    return [
      "# HELP textwire_intake_pending Webhook submissions acknowledged and not yet applied",
      "# TYPE textwire_intake_pending gauge",
      `textwire_intake_pending ${intake.lag()}`,
      "# HELP textwire_intake_applier_restarts_total Applier threads that died and were started again",
      "# TYPE textwire_intake_applier_restarts_total counter",
      `textwire_intake_applier_restarts_total ${intake.restarts}`,
      "# HELP textwire_intake_applier_batches_total Applier transactions that applied rows",
      "# TYPE textwire_intake_applier_batches_total counter",
      `textwire_intake_applier_batches_total ${intake.stats.batches}`,
      "# HELP textwire_intake_applier_rows_total Intake rows applied by the applier thread",
      "# TYPE textwire_intake_applier_rows_total counter",
      `textwire_intake_applier_rows_total ${intake.stats.rows}`,
      "# HELP textwire_intake_applier_lag_ms Time from a submission's 200 to its apply, over the last 4096 submissions",
      "# TYPE textwire_intake_applier_lag_ms gauge",
      `textwire_intake_applier_lag_ms{quantile="0.5"} ${lag.p50.toFixed(2)}`,
      `textwire_intake_applier_lag_ms{quantile="0.99"} ${lag.p99.toFixed(2)}`,
      `textwire_intake_applier_lag_ms{quantile="1"} ${lag.max.toFixed(2)}`,
    ];
  });
  // After the writer (it records results through it), so it stops before the writer does.
  deps.dispatcher = new EventDispatcher(sqlite, clock, writer, events, deps.metrics, logger, {
    allowPrivate: config.allowPrivateWebhookUrls,
    retryScheduleMs: config.eventRetryScheduleMs,
    retentionDays: config.eventRetentionDays,
    resolve: outbound.resolve,
    ca: outbound.ca,
    timeoutMs: outbound.timeoutMs,
  });
  deps.lifecycle.push(deps.dispatcher);
  deps.lifecycle.push(new QueueWatch(sqlite, clock, queue, leases, config.stuckAfterMs, changes));
  // After the writer: stopped before it, so the last honeypot counts are written.
  deps.lifecycle.push(spam.lifecycle());
  // Broadcasts a stop interrupted carry on once the queue is whole.
  deps.lifecycle.push({ name: "broadcasts", start: () => broadcasts.resume(), stop: () => broadcasts.stop() });
  // Runs a stop left unfinished (the inbox, marked stops, start jobs) carry on once the queue is whole.
  deps.lifecycle.push(automations.lifecycle());
  // The password thread (services/password-hasher.ts) starts on first use and ends with the server.
  deps.lifecycle.push({ name: "passwords", start: () => {}, stop: () => people.passwords.stop() });
  return deps;
}
