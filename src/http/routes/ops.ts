import { Elysia, t } from "elysia";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { VERSION } from "../../version";
import { backupFileName } from "../../services/backups";
import { backupHealth } from "../../services/last-backup";
import { runBackupJob } from "../../services/backup-thread";
import { databaseBytes, memoryScratch } from "../../services/backup-scratch";
import { buildOpenApi } from "../openapi";
import { fileResponseThenRemove } from "../../lib/file-response";
import { DOCS_HTML } from "../docs-page";
import { Media } from "../models/common";
import { tlsExpiry } from "../../tls/local-ca";
import { routeAccess } from "../plugins/route-access";
import { ReplicationHealthModel } from "../models/replication";
import { schemaVersionOf } from "../../db/database-info";

export const HealthResponse = t.Object({
  status: t.UnionEnum(["ok", "unavailable"]),
  version: t.String(),
  schemaVersion: t.Integer(),
  uptimeSeconds: t.Integer(),
  database: t.UnionEnum(["ok", "error"]),
  /** Phones: online now, age of the oldest due message, "stuck" when no phone asked for work for --stuck-after while messages are due. */
  devicesOnline: t.Optional(t.Integer()),
  oldestDueSeconds: t.Optional(t.Union([t.Integer(), t.Null()])),
  queue: t.Optional(t.UnionEnum(["ok", "stuck"])),
  /** With TLS on: the certificate in use, so monitoring sees a renewal coming (warned 30 days ahead). */
  tls: t.Optional(t.Object({ certificateExpiresAt: t.String({ format: "date-time" }), daysLeft: t.Integer() })),
  /** The webhook's intake: submissions acknowledged and not yet applied; "behind" once the oldest waited past the read barrier's bound (API requests get 503 meanwhile). */
  intake: t.Optional(
    t.Object({
      pending: t.Integer(),
      oldestPendingMs: t.Integer({ description: "how long the oldest unapplied submission has waited" }),
      lagP99Ms: t.Number({ description: "p99 of the time from a submission's 200 to its apply, over the last 4096" }),
      applier: t.UnionEnum(["ok", "behind"]),
    }),
  ),
  /** With --backup-dir: the newest scheduled backup there, so a monitor (and the Overview) sees backups stop. */
  backup: t.Optional(
    t.Object({
      lastBackupAt: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "null until the first scheduled backup is made" }),
      ageSeconds: t.Union([t.Integer(), t.Null()]),
      everySeconds: t.Integer({ description: "--backup-every" }),
    }),
  ),
  /** Continuous replication with Litestream: "behind" (a warning) past 10 s, "stalled" (a failure, and a replication.stalled event) past 60 s. */
  replication: t.Optional(ReplicationHealthModel),
});

/** /health, /metrics, the OpenAPI document and docs page, and the admin backup download. */
export function opsRoutes(deps: AppDeps) {
  let openapiCache: { n: number; doc: string } | undefined;
  // The certificate the server loads at start (read here at the same moment).
  let certPem: string | undefined;
  try {
    certPem = deps.config.tlsCert && deps.config.tlsKey ? readFileSync(deps.config.tlsCert, "utf8") : undefined;
  } catch {}
  // What HTTPS serves now (a public certificate arrives and renews while running), else the file's.
  const tlsOf = () => {
    const pem = deps.httpsStatus.listening?.tls?.cert ?? certPem;
    return pem ? { tls: tlsExpiry(pem, deps.clock()) } : {};
  };
  // The schedule in force now (flags or the dashboard's); its reader is remade when it changes.
  let backup: { key: string; read: () => ReturnType<ReturnType<typeof backupHealth>> } | undefined;
  const backupOf = () => {
    const s = deps.backupSchedule.current();
    if (!s) return {};
    const key = `${s.dir}\0${s.everyMs}`;
    if (backup?.key !== key) backup = { key, read: backupHealth(s.dir, s.everyMs, deps.clock) };
    return { backup: backup.read() };
  };
  const replicationOf = () => {
    const { state, lagSeconds, lastSyncAt, target } = deps.replication.health();
    return { state, lagSeconds, lastSyncAt, target };
  };
  // Taken once: /health must answer while the applier is stuck (the test helper's deps.sqlite waits for it).
  const sqlite = deps.sqlite;
  const app = new Elysia({ name: "ops-routes" })
    .use(routeAccess)
    .get(
      "/health",
      ({ set }) => {
        const uptimeSeconds = Math.max(0, Math.floor((deps.clock() - deps.startedAt) / 1000));
        try {
          const schemaVersion = schemaVersionOf(sqlite);
          return { status: "ok" as const, version: VERSION, schemaVersion, uptimeSeconds, database: "ok" as const, ...deps.devices.health(), intake: deps.intake.health(), ...tlsOf(), ...backupOf(), replication: replicationOf() };
        } catch (err) {
          deps.logger.error("health check: database query failed", { error: String(err) });
          set.status = 503;
          return { status: "unavailable" as const, version: VERSION, schemaVersion: -1, uptimeSeconds, database: "error" as const, ...tlsOf() };
        }
      },
      {
        permission: "public", rateLimit: "none",
        detail: {
          summary: "Liveness and database check (no key, no account data)",
          tags: ["Operations"],
        },
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    )
    .get(
      "/v1/openapi.json",
      () => {
        const routes = deps.routes();
        if (!openapiCache || openapiCache.n !== routes.length) openapiCache = { n: routes.length, doc: JSON.stringify(buildOpenApi(routes), null, 2) };
        return new Response(openapiCache.doc, { headers: { "Content-Type": "application/json; charset=utf-8" } });
      },
      {
        permission: "public", rateLimit: "none",
        response: { 200: Media({ "application/json": t.Object({ openapi: t.Literal("3.1.0") }, { additionalProperties: true }) }, { description: "The OpenAPI 3.1 document" }) },
        detail: { summary: "This OpenAPI 3.1 document (no key)", tags: ["Operations"] },
      },
    )
    .get("/v1/docs", () => new Response(DOCS_HTML, { headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'" } }), {
      permission: "public", rateLimit: "none",
      response: { 200: Media({ "text/html": t.String() }, { description: "A self-contained HTML page" }) },
      detail: { summary: "Browsable API docs (HTML, works offline; no key)", tags: ["Operations"] },
    })
    .post(
      "/v1/admin/backup",
      async () => {
        // Built in memory when it fits (no disk write competes with the webhook's commits), else
        // in the temp directory; sent by the server natively, then deleted — so it needs no fsync.
        const dir = mkdtempSync(join(memoryScratch(databaseBytes(deps.config.db)) ?? tmpdir(), "textwire-backup-"));
        const name = backupFileName(deps.clock());
        const file = join(dir, name);
        try {
          const { backup: result } = await runBackupJob({ op: "backup", dbPath: deps.config.db, outFile: file, now: deps.clock(), durable: false });
          deps.logger.info("backup downloaded", { bytes: result.bytes, ms: result.durationMs });
          return fileResponseThenRemove(file, dir, {
            headers: {
              "Content-Type": "application/vnd.sqlite3",
              "Content-Disposition": `attachment; filename=${name}`,
              "Content-Length": String(result.bytes),
              "Cache-Control": "no-store",
            },
          });
        } catch (err) {
          rmSync(dir, { recursive: true, force: true });
          deps.logger.error("backup failed", { error: String(err) });
          throw new AppError("SERVICE_UNAVAILABLE", { message: "The backup could not be made; see the server log" });
        }
      },
      {
        permission: "operator", rateLimit: "api-key",
        response: {
          200: Media({ "application/vnd.sqlite3": t.String({ format: "binary" }) }, { description: "The database file", headers: ["Content-Disposition"] }),
        },
        detail: {
          "x-errors": ["SERVICE_UNAVAILABLE"],
          summary: "Download a fresh, integrity-checked backup of the whole database (admin)",
          description: "Streams a consistent SQLite copy (`application/vnd.sqlite3`) made while the server keeps running. Covers every account on this server.",
          tags: ["Operations"],
        },
      },
    );
  if (!deps.config.metrics) return app;
  return app.get(
    "/metrics",
    () => {
      const uptimeSeconds = Math.max(0, Math.floor((deps.clock() - deps.startedAt) / 1000));
      return new Response(deps.metrics.render({ uptimeSeconds }), { headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" } });
    },
    {
      permission: "operator", rateLimit: "api-key",
      response: { 200: Media({ "text/plain": t.String() }, { description: "Prometheus text format" }) },
      detail: { summary: "Prometheus metrics (admin key; disabled with --metrics=false)", tags: ["Operations"] },
    },
  );
}
