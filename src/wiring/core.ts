/**
 * The core of the server, built first (docs/architecture.md, "Wiring"): the database handle, the
 * submission intake (drained of what the last run left before anything reads messages), the
 * group-commit writer, the in-memory queue, the monthly quota, leasing, the change announcements,
 * the event outbox and the metrics. Nothing here needs a service of the parts built after it,
 * except the queue's delivery estimate, which the phones give (`estimate`, called only once the
 * server runs).
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { wrapDb } from "../db/open";
import { MessageQueue, type QueueEstimator } from "../queue/priority-queue";
import { ApiLimiter, SessionLimiter, WebhookLimiter } from "../limits/api-limiter";
import { Sequence } from "../lib/seq";
import { largestMessageSeq } from "../db/database-info";
import { Metrics } from "../services/metrics";
import { SCHEMA_VERSION } from "../db/migrate";
import type { RouteInfo } from "../http/openapi";
import { GroupCommitWriter } from "../db/group-commit";
import { WriteGate } from "../db/write-gate";
import { MonthlyQuota } from "../services/quota";
import { LeaseService } from "../services/leases";
import { EventOutbox, registerOutbox } from "../services/events";
import { SpamCounter } from "../services/spam";
import { CaptchaVerifier } from "../services/captcha";
import { SubmissionIntake } from "../services/intake/intake";
import { intakeStore } from "../db/stores/intake";
import { StageTiming } from "../lib/stage-timing";
import { Changes } from "../lib/changes";

export type Core = ReturnType<typeof buildCore>;

export function buildCore(
  sqlite: Database,
  config: ServeConfig,
  clock: Clock,
  logger: Logger,
  late: { estimate: QueueEstimator; routes: () => RouteInfo[] },
) {
  const db = wrapDb(sqlite);
  // Boot applies what the last run left in the intake before anything reads messages.
  SubmissionIntake.drain(sqlite, logger);
  const writeGate = new WriteGate();
  const intake = new SubmissionIntake(sqlite, config.db, logger, config.sqliteCacheMb, writeGate.shared);
  intake.guardTransactions(sqlite);
  const queue = new MessageQueue(late.estimate);
  const seq = new Sequence(largestMessageSeq(sqlite));
  const stageTiming = config.stageTiming ? new StageTiming() : null;
  const writer = new GroupCommitWriter(sqlite, logger, writeGate, { mode: config.commitSync }, {
    lockListener: (wanted) => intake.writerWantsLock(wanted),
    beforeLock: () => intake.applierTurnEnded(),
    // A failed fsync of the log is not retried: after one, the kernel may have dropped the pages it
    // could not write, so a later flush could report success over a hole and lose what it then
    // acknowledges (PostgreSQL stops for the same reason). Stop at once; a restart (systemd, Docker)
    // recovers from what is on disk — nothing acknowledged was lost.
    onSyncFailure: (err) => {
      logger.error("the disk failed to save the database; stopping so that nothing acknowledged can be lost — check the disk, then start again", { error: err.message });
      process.exit(74);
    },
    timing: stageTiming,
  });
  const appliedSeq = intakeStore(sqlite).appliedSeq;
  const quota = new MonthlyQuota(sqlite, clock, (accountId, monthStart) => intake.pendingMessages(accountId, monthStart, appliedSeq()));
  const changes = new Changes();
  const leases = new LeaseService(sqlite, clock, queue, config, changes);
  const events = new EventOutbox(sqlite);
  registerOutbox(sqlite, events);
  const metrics = new Metrics({ dbPath: config.db, queue, routes: late.routes, schemaVersion: SCHEMA_VERSION });
  return {
    db,
    writeGate,
    intake,
    queue,
    seq,
    stageTiming,
    writer,
    quota,
    changes,
    leases,
    events,
    metrics,
    apiLimiter: new ApiLimiter({ clock }),
    sessionLimiter: new SessionLimiter({ clock }),
    webhookLimiter: new WebhookLimiter({ clock, perMinute: config.webhookLimitPerMinute }),
    webhookIpLimiter: new WebhookLimiter({ clock }),
    captcha: new CaptchaVerifier(config.captchaVerifyUrls),
    spam: new SpamCounter(sqlite, writer),
  };
}
