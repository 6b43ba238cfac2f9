import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { VERSION } from "../../../version";
import { schemaVersionOf } from "../../../db/database-info";
import { phoneChecks, type HealthCheck as Check } from "../../../services/smsgate-health";
import { authOf } from "../../context";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

type Status = Check["status"];
interface Health {
  status: Status;
  version: string;
  releaseId: number;
  checks: Record<string, Check>;
}

/** SMSGate's releaseId is an integer build number: Textwire's version as one (1.2.3 → 10203). */
export function releaseIdOf(version: string): number {
  const [major = 0, minor = 0, patch = 0] = version.split(/[.+-]/).map((p) => Number.parseInt(p, 10) || 0);
  return major * 10_000 + minor * 100 + patch;
}

function answer(checks: Record<string, Check>, set: { status?: number | string }): Health {
  const statuses = Object.values(checks).map((c) => c.status);
  const status: Status = statuses.includes("fail") ? "fail" : statuses.includes("warn") ? "warn" : "pass";
  if (status === "fail") set.status = 503;
  return { status, version: VERSION, releaseId: releaseIdOf(VERSION), checks };
}

/**
 * SMSGate's health in its shape (client-go's HealthResponse), no key: GET /health and its three
 * probes, under /3rdparty/v1 (client-py's liveness_check, readiness_check, startup_check) and at
 * the server's root (SMSGate's server description). Exempt from the read barrier (server.ts), so a
 * stuck applier is reported here rather than answered with a 503 of another shape
 * (docs/api-decisions.md, "SMSGate third-party API: devices, health, settings" and "The SMSGate
 * ecosystem, every call"):
 * - ready (= /health): the database, the queue and the applier of acknowledged submissions, each
 *   pass, warn or fail; the worst is the status, and fail answers 503;
 * - live: the process answers (its uptime);
 * - startup: the database is open and migrated (its schema version).
 * And /health/phones, with a key: the ready checks plus the account's phones as the SMSGate app's
 * local server reports them (battery:level, messages:failed), which Home Assistant's sensors read
 * through the local listener's /health (src/http/smsgate-local.ts).
 */
function probes(deps: AppDeps) {
  // Taken once, as /health does: the test helper's deps.sqlite waits for the applier.
  const sqlite = deps.sqlite;
  const database = (): Check => {
    try {
      return { description: "The database answers", observedUnit: "schema version", observedValue: schemaVersionOf(sqlite), status: "pass" };
    } catch (err) {
      deps.logger.error("health check: database query failed", { error: String(err) });
      return { description: "The database does not answer", observedUnit: "", observedValue: 0, status: "fail" };
    }
  };
  const ready = (): Record<string, Check> => {
    const checks: Record<string, Check> = { database: database() };
    if (checks.database.status === "pass") {
      const q = deps.devices.health();
      checks.queue = {
        description: q.queue === "stuck" ? "Messages are due but no phone has asked for work lately" : "Due messages are being handed to phones",
        observedUnit: "seconds the oldest due message has waited",
        observedValue: q.oldestDueSeconds ?? 0,
        status: q.queue === "stuck" ? "warn" : "pass",
      };
    }
    const a = deps.intake.health();
    checks.applier = {
      description: a.applier === "behind" ? "Accepted form submissions are not being saved in time" : "Accepted form submissions are saved",
      observedUnit: "submissions waiting",
      observedValue: a.pending,
      status: a.applier === "behind" ? "fail" : "pass",
    };
    return checks;
  };
  const detail = (summary: string) => ({ permission: "public" as const, rateLimit: "none" as const, detail: { ...hidden, summary } });
  return { ready, database, detail };
}

/** Under /3rdparty/v1: /health, /health/live, /health/ready, /health/startup (no key) and /health/phones (a key). */
export function thirdPartyHealthRoutes(deps: AppDeps) {
  const p = probes(deps);
  return new Elysia({ name: "thirdparty-health" })
    .use(routeAccess)
    .get("/health", ({ set }) => answer(p.ready(), set), p.detail("Health in SMSGate's shape (no key)"))
    .get("/health/ready", ({ set }) => answer(p.ready(), set), p.detail("Readiness probe in SMSGate's shape (no key)"))
    .get("/health/live", ({ set }) => answer(live(deps), set), p.detail("Liveness probe in SMSGate's shape (no key)"))
    .get("/health/startup", ({ set }) => answer({ database: p.database() }, set), p.detail("Startup probe in SMSGate's shape (no key)"))
    .get("/health/phones", ({ request, set }) => answer({ ...p.ready(), ...phoneChecks(deps.sqlite, deps.clock, authOf(request).accountId) }, set), {
      permission: "devices.read", rateLimit: "api-key", detail: { ...hidden, summary: "Health with the account's phones: battery:level, messages:failed (SMSGate's local server)" },
    });
}

/** SMSGate's server's probes at the root: /health/live, /health/ready, /health/startup (no key). */
export function rootProbeRoutes(deps: AppDeps) {
  const p = probes(deps);
  return new Elysia({ name: "smsgate-root-probes" })
    .use(routeAccess)
    .get("/health/ready", ({ set }) => answer(p.ready(), set), p.detail("Readiness probe in SMSGate's shape (no key)"))
    .get("/health/live", ({ set }) => answer(live(deps), set), p.detail("Liveness probe in SMSGate's shape (no key)"))
    .get("/health/startup", ({ set }) => answer({ database: p.database() }, set), p.detail("Startup probe in SMSGate's shape (no key)"));
}

function live(deps: AppDeps): Record<string, Check> {
  const uptime = Math.max(0, Math.floor((deps.clock() - deps.startedAt) / 1000));
  return { process: { description: "The server answers", observedUnit: "seconds up", observedValue: uptime, status: "pass" } };
}
