/**
 * Keeping the data safe and the owner told (docs/architecture.md, "Wiring"): the checkpoint
 * thread, Litestream replication and its setting, scheduled backups and their setting, the
 * outbound events' endpoints and dispatcher, the queue watcher, exports and analytics.
 */
import type { Database } from "bun:sqlite";
import type { ServeConfig } from "../config";
import type { Clock } from "../lib/clock";
import type { Logger } from "../lib/log";
import { Checkpointer } from "../db/checkpointer";
import { pageSizeOf } from "../db/page-size";
import { ReplicationSupervisor } from "../services/replication";
import { emitReplicationStalled, ReplicationSettingsService } from "../services/replication-settings";
import { DEFAULT_BACKUP_EVERY_MS, scheduledBackups } from "../services/backups";
import { BackupScheduleService } from "../services/backup-schedule";
import { EventDispatcher } from "../services/event-dispatcher";
import { EventEndpointService } from "../services/event-endpoints";
import { resolveHost } from "../services/outbound-http";
import { QueueWatch } from "../services/queue-watch";
import { ExportService } from "../services/exports";
import { AnalyticsService } from "../services/analytics";
import type { FormService } from "../services/forms";
import type { OutboundOptions } from "../deps";
import type { Core } from "./core";
import type { Stores } from "./stores";

export type Operations = ReturnType<typeof buildOperations>;

export function buildOperations(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger, core: Core, stores: Stores, forms: FormService, outbound: OutboundOptions) {
  // Off the request path (--checkpoint background): its own thread and connection.
  const checkpointer = config.checkpoint === "background" ? new Checkpointer(sqlite, config.db, logger, { gate: core.writeGate, idleMs: config.checkpointIdleMs }) : null;
  // Replication (docs/api-decisions.md, "Continuous replication with Litestream"). The setting and
  // the supervisor read each other: the supervisor is asked for only once the server runs.
  const replicationSettings: ReplicationSettingsService = new ReplicationSettingsService(sqlite, clock, config.replicate, () => replication);
  const replication: ReplicationSupervisor = new ReplicationSupervisor({
    dbPath: config.db,
    flagUrl: config.replicate,
    savedUrl: () => replicationSettings.savedUrl(),
    logger,
    clock,
    // In this file's own pages (1 KiB for new databases, 2 or 4 KiB for older ones: src/db/page-size.ts).
    maxCheckpointPages: Checkpointer.litestreamMaxPages(undefined, pageSizeOf(sqlite)),
    onStalled: (notice) => emitReplicationStalled(sqlite, clock(), notice),
    heartbeat: () => replicationSettings.heartbeat(),
    // While replication is on, checkpoints follow Litestream's rules (src/db/checkpointer.ts).
    onActive: checkpointer && config.replicaCheckpoints === "litestream" ? (on) => checkpointer.setReplication(on) : undefined,
  });
  // The flags' schedule or the dashboard's; a change from the dashboard re-arms it (no restart),
  // and a schedule just saved makes its first backup at once (docs/api-decisions.md, "The owner
  // hears back", forms and backups). The setting and the scheduler read each other likewise.
  const backupSchedule: BackupScheduleService = new BackupScheduleService(
    sqlite,
    clock,
    config.backupDir ? { dir: config.backupDir, everyMs: config.backupEveryMs ?? DEFAULT_BACKUP_EVERY_MS, keep: config.backupKeep } : undefined,
    (saved) => {
      backups.reload();
      return saved ? backups.runNow() : undefined;
    },
  );
  const backups = scheduledBackups({ dbPath: config.db, schedule: () => backupSchedule.current(), clock, logger });
  return {
    checkpointer,
    replicationSettings,
    replication,
    backupSchedule,
    backups,
    dispatcher: new EventDispatcher(sqlite, clock, core.writer, core.events, core.metrics, logger, {
      allowPrivate: config.allowPrivateWebhookUrls,
      retryScheduleMs: config.eventRetryScheduleMs,
      retentionDays: config.eventRetentionDays,
      resolve: outbound.resolve,
      ca: outbound.ca,
      timeoutMs: outbound.timeoutMs,
    }),
    eventEndpoints: new EventEndpointService(sqlite, clock, core.events, { allowPrivate: config.allowPrivateWebhookUrls, resolve: outbound.resolve ?? resolveHost }),
    queueWatch: new QueueWatch(sqlite, clock, core.queue, core.leases, config.stuckAfterMs, core.changes),
    exports: new ExportService(sqlite, config.db, clock, logger),
    analytics: new AnalyticsService(sqlite, forms),
  };
}
