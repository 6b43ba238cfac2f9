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
import { ApiLimiter } from "./limits/api-limiter";
import { Sequence } from "./lib/seq";
import type { Observer } from "./http/server";

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
  contacts: ContactService;
  exports: ExportService;
  queue: MessageQueue;
  /** Creation order of messages (queue tiebreak). */
  seq: Sequence;
  apiLimiter: ApiLimiter;
  startedAt: number;
  lifecycle: Lifecycle[];
  /** Called once per finished request (metrics). */
  observers: Observer[];
}

export function createDeps(sqlite: Database, config: ServeConfig, clock: Clock, logger: Logger): AppDeps {
  const db = wrapDb(sqlite);
  const forms = new FormService(db, clock);
  return {
    config,
    clock,
    logger,
    sqlite,
    db,
    accounts: new AccountService(sqlite, clock),
    forms,
    contacts: new ContactService(sqlite, clock, forms),
    exports: new ExportService(sqlite, config.db, clock, logger),
    queue: new MessageQueue(),
    seq: Sequence.fromDb(sqlite),
    apiLimiter: new ApiLimiter({ clock }),
    startedAt: clock(),
    lifecycle: [],
    observers: [],
  };
}
