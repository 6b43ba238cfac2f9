import { Elysia } from "elysia";
import type { AppDeps } from "../../../deps";
import { VERSION } from "../../../version";
import { schemaVersionOf } from "../../../db/database-info";
import { routeAccess } from "../../plugins/route-access";

const hidden = { hide: true, tags: ["SMSGate third-party API"] };

type Status = "pass" | "warn" | "fail";
interface Check {
  description: string;
  observedUnit: string;
  observedValue: number;
  status: Status;
}

/** SMSGate's releaseId is an integer build number: Textwire's version as one (1.2.3 → 10203). */
export function releaseIdOf(version: string): number {
  const [major = 0, minor = 0, patch = 0] = version.split(/[.+-]/).map((p) => Number.parseInt(p, 10) || 0);
  return major * 10_000 + minor * 100 + patch;
}

/**
 * GET /3rdparty/v1/health, no key, in SMSGate's shape (client-go's HealthResponse): the database,
 * the queue and the applier of acknowledged submissions, each pass, warn or fail; the worst is
 * the status, and fail answers 503. Exempt from the read barrier (server.ts), so a stuck applier
 * is reported here rather than answered with a 503 of another shape (docs/api-decisions.md,
 * "SMSGate third-party API: devices, health, settings").
 */
export function thirdPartyHealthRoutes(deps: AppDeps) {
  // Taken once, as /health does: the test helper's deps.sqlite waits for the applier.
  const sqlite = deps.sqlite;
  return new Elysia({ name: "thirdparty-health" })
    .use(routeAccess)
    .get(
      "/health",
      ({ set }) => {
        const checks: Record<string, Check> = {};
        try {
          checks.database = { description: "The database answers", observedUnit: "schema version", observedValue: schemaVersionOf(sqlite), status: "pass" };
        } catch (err) {
          deps.logger.error("health check: database query failed", { error: String(err) });
          checks.database = { description: "The database does not answer", observedUnit: "", observedValue: 0, status: "fail" };
        }
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
        const statuses = Object.values(checks).map((c) => c.status);
        const status: Status = statuses.includes("fail") ? "fail" : statuses.includes("warn") ? "warn" : "pass";
        if (status === "fail") set.status = 503;
        return { status, version: VERSION, releaseId: releaseIdOf(VERSION), checks };
      },
      { permission: "public", rateLimit: "none", detail: { ...hidden, summary: "Health in SMSGate's shape (no key)" } },
    );
}
