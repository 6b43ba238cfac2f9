import type { Database } from "bun:sqlite";
import type { ServeConfig } from "./config";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/log";
import type { Db } from "./db/open";
import type { AccountService } from "./services/accounts";
import type { FormService } from "./services/forms";
import type { ContactService } from "./services/contacts";
import type { ExportService } from "./services/exports";
import type { MessageQueue } from "./queue/priority-queue";
import type { ApiLimiter, SessionLimiter } from "./limits/api-limiter";
import type { Sequence } from "./lib/seq";
import type { Metrics } from "./services/metrics";
import type { RouteInfo } from "./http/openapi";
import type { WebhookLimiter } from "./limits/api-limiter";
import type { GroupCommitWriter } from "./db/group-commit";
import type { WriteGate } from "./db/write-gate";
import type { MonthlyQuota } from "./services/quota";
import type { SubmissionService } from "./services/submissions";
import type { TestSubmissions } from "./services/submissions/test";
import type { LeaseService } from "./services/leases";
import type { MessageService } from "./services/messages";
import type { ThirdPartyMessages } from "./services/thirdparty-messages";
import type { ThirdPartyWebhooks } from "./services/thirdparty-webhooks";
import type { SmsgateTokens } from "./services/smsgate-tokens";
import type { AnalyticsService } from "./services/analytics";
import type { DeviceService } from "./services/devices";
import type { EventOutbox } from "./services/events";
import type { EventDispatcher } from "./services/event-dispatcher";
import type { HostResolver } from "./services/outbound-http";
import type { EventEndpointService } from "./services/event-endpoints";
import type { SpamCounter } from "./services/spam";
import type { CaptchaVerifier } from "./services/captcha";
import type { InboundService } from "./services/inbound";
import type { SubmissionInboxService } from "./services/submission-inbox";
import type { TeamNoticeService } from "./services/team-notices";
import type { SmsgateSettingsService } from "./services/smsgate-settings";
import type { AccountSettingsService } from "./services/account-settings";
import type { KeywordReplyService } from "./services/keyword-replies";
import type { ConversationService } from "./services/conversations";
import type { BroadcastService } from "./services/broadcasts";
import type { AutomationService } from "./services/automations";
import type { SessionService } from "./services/sessions";
import type { PeopleService } from "./services/people";
import type { SetupService } from "./services/setup";
import type { MessageFeed } from "./services/message-feed";
import type { ApiKeyService } from "./services/api-keys";
import type { SubmissionIntake } from "./services/intake/intake";
import type { StageTiming } from "./lib/stage-timing";
import type { Lifecycle } from "./lib/lifecycle";
import type { PublicCertificateService } from "./services/public-certificate";
import type { Observer } from "./lib/request-observer";
import type { ReplicationSupervisor } from "./services/replication";
import type { ReplicationSettingsService } from "./services/replication-settings";
import type { ServerAddressService } from "./services/server-address";
import type { BackupScheduleService } from "./services/backup-schedule";
import type { PlainHttpPosts } from "./services/plain-http-posts";
import type { HttpsStatusService } from "./services/https-status";
import type { Changes } from "./lib/changes";
import type { AccountOverviewService } from "./services/account-overview";
import type { DashboardOverviewService } from "./services/dashboard-overview";

export type { Lifecycle };

// Built by src/wiring (docs/architecture.md, "Wiring").
export { createDeps } from "./wiring";

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
  /** The account's plan, limits and month (GET /v1/account). */
  accountOverview: AccountOverviewService;
  /** The dashboard's Overview page (GET /v1/overview). */
  dashboardOverview: DashboardOverviewService;
}

/** How outbound events find and trust their receivers; tests stub DNS and add their own CA. */
export interface OutboundOptions {
  resolve?: HostResolver;
  /** Extra trusted CA certificates (PEM) for https receivers. */
  ca?: string;
  /** Per-attempt time limit; DELIVERY_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
}
