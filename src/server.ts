import type { Server } from "bun";
import { smsgateLocalFetch } from "./http/smsgate-local";
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import type { ServeConfig } from "./config";
import { openSqlite } from "./db/open";
import { migrate, SCHEMA_VERSION, SchemaTooNewError } from "./db/migrate";
import { acquireLock } from "./services/backups";
import { existsSync } from "node:fs";
import { Database as SqliteDatabase } from "bun:sqlite";
import { schemaVersionOf } from "./db/database-info";
import { createDeps, type AppDeps, type OutboundOptions } from "./deps";
import { createApp } from "./app";
import { createFetchHandler, SERVER_BODY_LIMIT } from "./http/server";
import { systemClock, type Clock } from "./lib/clock";
import { createLogger, silentLogger, type Logger } from "./lib/log";
import { caCertificateResponse } from "./http/routes/tls";
import { DEFAULT_ACCOUNT_NAME } from "./domain/business-profile";
import { EXPIRY_WARNING_DAYS, tlsExpiry, type TlsExpiry } from "./tls/local-ca";
import { Listeners } from "./http/listeners";
import { copyBeforeUpgrade } from "./db/upgrade-copy";
import { PAGE_SIZE, pageSizeOf } from "./db/page-size";

export interface RunningServer {
  deps: AppDeps;
  server: Server<unknown>;
  redirectServer?: Server<unknown>;
  /** The SMSGate local-server listener (--smsgate-local-port), when asked for. */
  smsgateLocalServer?: Server<unknown>;
  port: number;
  url: string;
  /** Expiry of the TLS certificate in use (at start), when the server speaks HTTPS. */
  tlsCertificate?: TlsExpiry;
  /** The first account's admin key when this start created it (empty database), else undefined. */
  firstAdminKey?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** When given: on an empty database, a first account and its operator key are created and handed here (tests, scripts; `serve` prints a setup link instead). */
  onFirstKey?: (key: { accountId: string; keyId: string; apiKey: string }) => void;
  /** Outbound events' resolver and extra CA (tests only; production uses the system's). */
  outbound?: OutboundOptions;
}

/**
 * Opens the database, migrates, makes the first account on an empty database, rebuilds the
 * queue from SQLite and listens. Used by `textwire serve` and by the HTTP tests alike.
 */
export async function startServer(config: ServeConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  refuseNewerSchema(config.db);
  // `<db>.lock`: restore refuses while we run; a second server on the same file is refused.
  const releaseLock = config.db === ":memory:" ? () => {} : acquireLock(config.db, "serve", { allowSameProcess: true });
  let sqlite: Database;
  try {
    sqlite = openSqlite(config.db, { cacheMb: config.sqliteCacheMb, tempStore: config.sqliteTempStore });
  } catch (err) {
    releaseLock();
    throw err;
  }
  try {
    // An existing database being upgraded says so, step by step: a big one can take a while
    // (a step that rebuilds derived data reads every message), and an owner should not stop it.
    let upgrading = false;
    migrate(sqlite, undefined, {
      onStart: (p) => {
        upgrading = p.from > 0;
        // A copy first, named by its schema version (src/db/upgrade-copy.ts).
        const copy = copyBeforeUpgrade(sqlite, config.db, p.from);
        if (copy) logger.info("copied the database before upgrading it", { copy, schema: p.from });
        if (upgrading) logger.info("upgrading the database; leave the server running until it says it is upgraded", { fromSchema: p.from, toSchema: p.to, steps: p.steps });
      },
      onStep: (s) => {
        if (upgrading) logger.info(s.step === s.steps ? "database upgraded" : "database upgrade step done", { step: `${s.step} of ${s.steps}`, migration: s.tag, ms: Math.round(s.ms) });
      },
    });
  } catch (err) {
    sqlite.close();
    releaseLock();
    throw err;
  }
  // An older file keeps its page size until `textwire migrate` rewrites it (src/db/page-size.ts).
  if (config.db !== ":memory:" && pageSizeOf(sqlite) !== PAGE_SIZE) logger.info("this database has larger pages than new ones: stop the server and run `textwire migrate` once to rewrite it (less is written to the disk for each submission)", { pageSize: pageSizeOf(sqlite), newPageSize: PAGE_SIZE });
  const deps = createDeps(sqlite, config, clock, logger, opts.outbound);
  const started: typeof deps.lifecycle = [];
  const begun: typeof deps.lifecycle = [];
  let listeners: Listeners | undefined;
  let smsgateLocalServer: Server<unknown> | undefined;
  let tls: { cert: string; key: string } | undefined;
  let kept: ReturnType<typeof deps.publicCertificate.current> = null;
  try {
    // The Workers load while the queue is rebuilt (~0.1 s of a boot at a million queued).
    for (const part of deps.lifecycle) {
      if (!part.startEarly) continue;
      begun.push(part);
      part.startEarly();
    }
    for (const part of deps.lifecycle) {
      await part.start?.();
      started.push(part);
    }
    const app = createApp(deps);
    const fetch = createFetchHandler(deps, app, deps.observers);
    // A public certificate (--domain or the dashboard's setting) already kept in the database is
    // served from the first request; without one yet the plain port serves the app until it comes.
    // --tls-cert wins; `tls init`'s certificate yields to a public one.
    const domainMode = Boolean(deps.publicCertificate.wanted()) && (!config.tlsCert || config.tlsLocalCa === true);
    kept = domainMode ? deps.publicCertificate.current() : null;
    tls = kept ? { cert: kept.certPem, key: kept.keyPem } : config.tlsCert && config.tlsKey ? { cert: readFileSync(config.tlsCert, "utf8"), key: readFileSync(config.tlsKey, "utf8") } : undefined;
    listeners = new Listeners({
      host: config.host,
      maxRequestBodySize: SERVER_BODY_LIMIT,
      app: fetch,
      error(err) {
        logger.error("server error", { error: String(err?.stack ?? err) });
        return new Response(JSON.stringify({ status: "error", code: "INTERNAL_ERROR", message: "Internal server error" }), {
          status: 500,
          headers: { "Content-Type": "application/json", "X-API-Version": "v1" },
        });
      },
      plainExtra: (req, u) => (u.pathname === "/ca.crt" && (req.method === "GET" || req.method === "HEAD") ? caCertificateResponse(config.db) : null),
      // A post here is a website still using the old address: remembered (in memory) so the dashboard can name the form.
      onForward: (method, path) => deps.plainHttpPosts.record(method, path),
      tokens: deps.publicCertificate.tokens,
    });
    const ports = deps.publicCertificate.view();
    if (kept) listeners.start(ports.httpsPort, tls, ports.plainPort);
    else if (domainMode && !config.tlsCert) listeners.start(ports.plainPort, undefined, undefined);
    else listeners.start(config.port, tls, tls ? config.redirectPort : undefined);
    if (config.smsgateLocalPort !== undefined) {
      smsgateLocalServer = Bun.serve({ port: config.smsgateLocalPort, hostname: config.host, maxRequestBodySize: SERVER_BODY_LIMIT, idleTimeout: 60, fetch: smsgateLocalFetch(fetch) });
    }
  } catch (err) {
    // A port already taken (or an unreadable certificate): nothing was created, leave no trace.
    listeners?.plain?.stop(true);
    listeners?.app?.stop(true);
    smsgateLocalServer?.stop(true);
    for (const part of started.reverse()) await part.stop?.();
    for (const part of begun.reverse()) if (!started.includes(part)) await part.stop?.();
    sqlite.close();
    releaseLock();
    throw err;
  }
  // Only once both listeners are bound: a first account whose key is printed can be used. `serve`
  // no longer does this (it prints a setup link: docs/api-decisions.md, "People, roles and the first
  // run"); an embedder that asks for a first key (tests, scripts) still gets one.
  let firstAdminKey: string | undefined;
  if (opts.onFirstKey && deps.accounts.countAccounts() === 0) {
    const created = deps.accounts.createAccount({ name: DEFAULT_ACCOUNT_NAME, operator: true, nameSet: false });
    firstAdminKey = created.apiKey;
    opts.onFirstKey?.({ accountId: created.account.id, keyId: created.keyId, apiKey: created.apiKey });
  }
  // Warn in the log at start and once a day while the certificate is within 30 days of expiry
  // (a public certificate renews itself: src/services/public-certificate.ts).
  let expiryTimer: ReturnType<typeof setInterval> | undefined;
  const certPem = kept && tls?.cert === kept.certPem ? undefined : tls?.cert;
  if (certPem) {
    const check = () => {
      const e = tlsExpiry(certPem, clock());
      if (e.daysLeft < EXPIRY_WARNING_DAYS) {
        logger.warn(e.daysLeft < 0 ? "the TLS certificate has expired" : "the TLS certificate expires soon; renew it (textwire tls renew) and restart", { ...e });
      }
    };
    check();
    expiryTimer = setInterval(check, 86_400_000);
    expiryTimer.unref?.();
  }
  const live = listeners!;
  const noteListening = () => {
    deps.httpsStatus.listening = { port: live.app!.port!, redirectPort: live.plain?.port, tls: live.tls };
    deps.publicCertificate.servingPort = live.tls && deps.publicCertificate.current()?.certPem === live.tls.cert ? live.app!.port : undefined;
    deps.httpsStatus.publicCertPem = () => (deps.publicCertificate.servingPort !== undefined ? live.tls?.cert : undefined);
  };
  noteListening();
  // A new public certificate (the first, or a renewal) is served at once: no restart.
  deps.publicCertificate.onIssued = (c) => {
    live.useCertificate({ cert: c.certPem, key: c.keyPem }, deps.publicCertificate.view().httpsPort);
    noteListening();
  };
  deps.publicCertificate.start();
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  let stopped = false;
  return {
    deps,
    get server() {
      return live.app!;
    },
    get redirectServer() {
      return live.plain;
    },
    smsgateLocalServer,
    get port() {
      return live.app!.port!;
    },
    get url() {
      return `${live.tls ? "https" : "http"}://${shownHost}:${live.app!.port}`;
    },
    firstAdminKey,
    get tlsCertificate() {
      return live.tls ? tlsExpiry(live.tls.cert, clock()) : undefined;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(expiryTimer);
      smsgateLocalServer?.stop(true);
      // Stop accepting, let in-flight requests finish (long-polls answer at once), then flush and
      // close the database.
      const draining = live.stop();
      deps.leases.releaseWaiters();
      deps.messageFeed.closeAll(); // open live streams end, or the drain would wait for them
      deps.devices.events.closeAll();
      await draining;
      for (const part of [...deps.lifecycle].reverse()) await part.stop?.();
      sqlite.close();
      releaseLock();
    },
  };
}

/**
 * A database written by a newer build is refused before anything opens it read-write (switching
 * on WAL would already write its header): the file is left byte for byte as it was.
 */
function refuseNewerSchema(path: string) {
  if (path === ":memory:" || !existsSync(path)) return;
  let version: number | undefined;
  try {
    const peek = new SqliteDatabase(path, { readonly: true });
    try {
      version = schemaVersionOf(peek);
    } finally {
      peek.close();
    }
  } catch {
    return; // unreadable here: the normal open reports it
  }
  if (version > SCHEMA_VERSION) throw new SchemaTooNewError(version, SCHEMA_VERSION);
}

export function loggerFor(config: ServeConfig): Logger {
  return createLogger(config.logFormat);
}
