import type { Database } from "bun:sqlite";
import type { ServeConfig } from "./config";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/log";
import { wrapDb, type Db } from "./db/open";
import { AccountService } from "./services/accounts";
import { FormService } from "./services/forms";
import { MessageQueue } from "./queue/priority-queue";
import { ApiLimiter } from "./limits/api-limiter";
import { Sequence } from "./lib/seq";
import type { Observer } from "./http/server";
import { LeaseService } from "./services/leases";
import { MessageService } from "./services/messages";
import { AnalyticsService } from "./services/analytics";
import { QUEUE_REBUILD, queueRebuildLifecycle } from "./services/queue-rebuild";

/** Parts with a life of their own: timers, writers, the queue rebuild. Started in order, stopped in reverse. */
export interface Lifecycle {
  name: string;
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/** Everything a request handler may use; built once per server (and per test). */
export interface AppDeps {
  config: ServeConfig;
  clock: Clock;
  logger: Logger;
  sqlite: Database;
  db: Db;
  accounts: AccountService;
  forms: FormService;
  queue: MessageQueue;
  /** Creation order of messages (queue tiebreak). */
  seq: Sequence;
  apiLimiter: ApiLimiter;
  /** Device polling: leases, send-rate cap, long-poll waiters (`leases.notify(accountId)` after an enqueue). */
  leases: LeaseService;
  messages: MessageService;
  analytics: AnalyticsService;
  startedAt: number;
  lifecycle: Lifecycle[];
  /** Called once per finished request (metrics). */
  observers: Observer[];
}

export function createDeps(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger): AppDeps {
  const db = wrapDb(sqlite);
  const queue = new MessageQueue();
  const seq = Sequence.fromDb(sqlite);
  const leases = new LeaseService(sqlite, clock, queue, config);
  const deps: AppDeps = {
    config,
    clock,
    logger,
    sqlite,
    db,
    accounts: new AccountService(sqlite, clock),
    forms: new FormService(db, clock),
    queue,
    seq,
    apiLimiter: new ApiLimiter({ clock }),
    leases,
    messages: new MessageService(sqlite, clock, queue, seq, leases, () => config.sendRatePerMinute),
    analytics: new AnalyticsService(sqlite),
    startedAt: clock(),
    lifecycle: [],
    observers: [],
  };
  // The queue is rebuilt before leases are reloaded and the lease sweeper starts.
  if (!deps.lifecycle.some((l) => l.name === QUEUE_REBUILD)) deps.lifecycle.push(queueRebuildLifecycle(sqlite, queue));
  deps.lifecycle.push(leases.lifecycle());
  return deps;
}
